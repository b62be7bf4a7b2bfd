"""The TypeScript `toModelEvents` of the original design under `harness conform`
(examples/typescript; its README says what the design specifies).

Runs the `docs/conform.md` examples marked as needing node (the faithful version's
disagreements, flaw by flaw, and both versions over every default case) and compares
their output with the page, as tests/test_docs.py does for the others; and, through the
official TypeScript SDK (`--serve`), one cassette's cases including the wire-level ones.
The npm packages are installed into examples/typescript/node_modules (ignored) on first
use, as `make conform-ts` does; without node the tests are skipped.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import EXAMPLES, LIBRARY, ROOT
from filelock import FileLock
from test_docs import Example, examples_in

TS_EXAMPLE = EXAMPLES / "typescript"
NEEDS_NODE = "needs node and the built example: tests/test_conform_typescript.py runs it"
DOC = ROOT / "docs" / "conform.md"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        shutil.which("node") is None or shutil.which("npm") is None, reason="node is not installed"
    ),
]


@pytest.fixture(scope="module")
def built() -> Path:
    """examples/typescript built into dist/ (its packages installed once, under a lock)."""
    with FileLock(str(TS_EXAMPLE / ".build.lock")):
        if not (TS_EXAMPLE / "node_modules" / ".package-lock.json").exists():
            subprocess.run(
                ["npm", "ci", "--silent", "--no-audit", "--no-fund"],
                cwd=TS_EXAMPLE,
                check=True,
                timeout=600,
            )
        tsc = TS_EXAMPLE / "node_modules" / ".bin" / "tsc"
        subprocess.run([str(tsc), "-p", "."], cwd=TS_EXAMPLE, check=True, timeout=300)
    return TS_EXAMPLE / "dist"


def _run(command: str, folder: Path) -> list[str]:
    """A doc command in bash, from a folder holding the library and the examples."""
    harness_bin = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": f"{harness_bin}{os.pathsep}{os.environ['PATH']}"}
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        env.pop(name, None)
    done = subprocess.run(
        ["bash", "-c", command],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    return [line.rstrip() for line in (done.stdout + done.stderr).rstrip().splitlines()]


DOC_EXAMPLES = [example for example in examples_in(DOC) if example.skip == NEEDS_NODE]


def test_the_page_has_the_node_examples() -> None:
    assert len(DOC_EXAMPLES) == 6


@pytest.mark.parametrize("example", DOC_EXAMPLES, ids=lambda example: example.id)
def test_the_faithful_and_corrected_runs_print_what_the_page_shows(
    example: Example, built: Path, tmp_path: Path
) -> None:
    shutil.copytree(LIBRARY, tmp_path / "cassettes")
    (tmp_path / "examples").symlink_to(EXAMPLES)
    for command in example.commands:
        assert _run(command.line, tmp_path) == command.expected, command.line


def test_the_corrected_adapter_agrees_through_the_sdk_on_the_wire_cases_too(built: Path) -> None:
    serve = ["node", str(built / "conform-serve.js")]
    lines = _run(f"harness conform --serve cassettes/text_only.jsonl -- {' '.join(serve)}", ROOT)
    assert lines == ["14/14 cases agree"]


def test_the_faithful_adapter_waits_on_a_stall_until_killed(built: Path) -> None:
    command = (
        "harness conform --serve --timeout 8 cassettes/text_only.jsonl -- "
        f"node {built / 'conform-serve.js'} faithful | cut -d';' -f1"
    )
    assert _run(command, ROOT) == [
        "text_only.drop_message_start: expected missing_message_start, got done",
        "text_only.event_after_message_stop: expected event_after_message_stop, got done",
        "text_only.stall: expected connection_error:ReadTimeout, got timed out after 8 s",
        "By class and fault:",
        "  accepted silently  drop_message_start           1",
        "  accepted silently  event_after_message_stop     1",
        "  timed out          stall                        1",
        "11/14 cases agree",
    ]
