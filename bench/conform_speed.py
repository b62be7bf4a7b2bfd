"""Section (g) of the benchmark: `harness conform` on the TypeScript example (issue 28).

A node process a case against one a job (`--persistent`), in stdin mode and over HTTP
(`--serve`), wall seconds: start-up is what differs, and it is wall time a user waits.
The full run judges every default case; the quick run one cassette's. Needs node and the
built example (`make conform-ts`); without them the section says so and is skipped.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from bench.measure import harness_argv

if TYPE_CHECKING:
    from bench.run import Report

__all__ = ["CONFORM_TARGET_S", "TS_EXAMPLE", "ConformRun", "conform_runs", "section_conform"]

ROOT: Final = Path(__file__).resolve().parent.parent
TS_EXAMPLE: Final = ROOT / "examples" / "typescript" / "dist"
#: The target: every default case, --serve --persistent, in under this many seconds.
CONFORM_TARGET_S: Final = 30.0
#: The cassette of the quick run (its cases: the cassette and its variants).
QUICK_CASSETTE: Final = ROOT / "cassettes" / "text_only.jsonl"


@dataclass(frozen=True, slots=True)
class ConformRun:
    """One `harness conform` run: its name, wall seconds, and its last line (the count)."""

    name: str
    wall: float
    count: str


def _runs(quick: bool) -> dict[str, list[str]]:
    stdin = ["node", str(TS_EXAMPLE / "conform-stdin.js")]
    serve = ["node", str(TS_EXAMPLE / "conform-serve.js")]
    paths = [str(QUICK_CASSETTE)] if quick else []
    runs = {
        "stdin, a process a case": ["-j", "2", *paths, "--", *stdin],
        "stdin, --persistent": ["--persistent", "-j", "2", *paths, "--", *stdin],
        "--serve --persistent": ["--serve", "--persistent", "-j", "2", *paths, "--", *serve],
    }
    return {name: [*harness_argv(), "conform", *args] for name, args in runs.items()}


def conform_runs(quick: bool) -> list[ConformRun] | None:
    """Each run timed, or None when node or the built example is missing."""
    if shutil.which("node") is None or not (TS_EXAMPLE / "conform-serve.js").is_file():
        return None
    found = []
    for name, argv in _runs(quick).items():
        begin = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, check=False)
        wall = time.perf_counter() - begin
        lines = done.stdout.strip().splitlines()
        found.append(ConformRun(name, wall, lines[-1] if lines else done.stderr.strip()))
    return found


def section_conform(quick: bool, report: Report) -> list[ConformRun] | None:
    """Print section (g) in the report; return the runs (None: skipped)."""
    what = "text_only's cases" if quick else "every default case"
    report.line(f"(g) harness conform, the TypeScript example, {what}, -j 2, wall seconds")
    runs = conform_runs(quick)
    if runs is None:
        report.line(
            "  skipped: node or examples/typescript/dist is missing (make conform-ts builds it)"
        )
        report.line()
        return None
    rows = [[run.name, f"{run.wall:.1f}", run.count.split(" ")[0]] for run in runs]
    report.table(["run", "wall s", "cases agree"], rows)
    ratio = runs[0].wall / runs[1].wall
    report.line(f"  stdin mode, --persistent against a process a case: {ratio:.1f}x faster")
    report.line()
    return runs
