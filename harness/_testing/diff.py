"""Compare what two cassettes replay to, for re-recordings and SDK upgrades.

Each side's outcome (events, then the error if any) is rendered as its JSON lines (the
`--format json` form of `harness replay`) and the two are compared with a unified diff.
Re-recording a stream gives new tool-call ids; `ignore_ids` replaces each id by its
position (`call-1`, `call-2`, ...) so that only meaningful changes show. `trace_sides`
shows where two streams part: both traces (`harness._testing.trace`) side by side, up to
the first row where they differ.
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass

from harness._replay.direct import Outcome, replay_outcome
from harness._terminal import json_text
from harness._testing.coverage import outcome_code
from harness._testing.trace import rows_side_by_side, trace

__all__ = ["OutcomeDiff", "diff_outcomes", "outcome_lines", "trace_sides"]


def outcome_lines(path: str | os.PathLike[str], *, ignore_ids: bool = False) -> list[str]:
    """A cassette's outcome as JSON text lines; raises `CassetteError` if it is unusable."""
    return _lines(replay_outcome(path, sdk_objects=False), ignore_ids)


def _lines(outcome: Outcome, ignore_ids: bool) -> list[str]:
    lines: list[str] = []
    calls = 0
    for line in outcome.to_json_lines():
        if ignore_ids and line["type"] == "tool_call":
            calls += 1
            line = {**line, "call": {**line["call"], "id": f"call-{calls}"}}
        lines.append(json_text(line))
    return lines


@dataclass(frozen=True, slots=True)
class OutcomeDiff:
    """Both sides' outcome codes and lines, and their unified diff (empty when they agree)."""

    a_code: str
    b_code: str
    a: list[str]
    b: list[str]
    diff: list[str]

    @property
    def same(self) -> bool:
        return not self.diff


def diff_outcomes(
    a: str | os.PathLike[str], b: str | os.PathLike[str], *, ignore_ids: bool = False
) -> OutcomeDiff:
    """Replay both cassettes and diff their outcomes, labelled with the paths as given."""
    a_outcome = replay_outcome(a, sdk_objects=False)
    b_outcome = replay_outcome(b, sdk_objects=False)
    a_lines, b_lines = _lines(a_outcome, ignore_ids), _lines(b_outcome, ignore_ids)
    diff = difflib.unified_diff(
        a_lines, b_lines, fromfile=os.fspath(a), tofile=os.fspath(b), lineterm=""
    )
    return OutcomeDiff(
        outcome_code(a_outcome), outcome_code(b_outcome), a_lines, b_lines, list(diff)
    )


def trace_sides(
    a: str | os.PathLike[str], b: str | os.PathLike[str], *, ignore_ids: bool = False
) -> tuple[list[str], bool]:
    """Both cassettes' traces side by side, labelled with the paths as given, up to the
    first row where they differ, then that row of each in full; and whether they agree
    row for row (`harness._testing.trace.rows_side_by_side`). Raises `CassetteError` if
    one is unusable."""
    labels = (os.fspath(a), os.fspath(b))
    a_rows, b_rows = trace(a, sdk_objects=False), trace(b, sdk_objects=False)
    return rows_side_by_side(a_rows, b_rows, labels, ids=not ignore_ids)
