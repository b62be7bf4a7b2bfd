"""Compare what two cassettes replay to, for re-recordings and SDK upgrades.

Each side's outcome (events, then the error if any) is rendered as its JSON lines (the
`--format json` form of `harness replay`) and the two are compared with a unified diff.
The two must be of one provider (`one_provider`); any provider's cassette replays to the
same three events, so the comparison itself is provider-neutral. Re-recording a stream
gives new tool-call ids; `ignore_ids` replaces each id by its
position (`call-1`, `call-2`, ...) so that only meaningful changes show. `trace_sides`
shows where two streams part: both traces (`harness._testing.trace`) side by side, up to
the first row where they differ, a line as soon as its rows are read; `match_outcomes`
is the verdict that goes with it, read a line of each side at a time, so neither holds a
stream (`harness diff --trace` on a stream of any length).
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import zip_longest
from typing import Any

from harness._cassette.codec import Cassette, CassetteSource
from harness._events import event_to_json
from harness._exceptions import ANTHROPIC, CassetteError
from harness._replay.direct import (
    Outcome,
    failure_code,
    failure_to_json,
    is_stream_failure,
    replay,
    replay_outcome,
)
from harness._terminal import json_text
from harness._testing.coverage import DONE, outcome_code
from harness._testing.trace import SideBySide, trace

__all__ = [
    "OutcomeDiff",
    "OutcomeMatch",
    "diff_outcomes",
    "match_outcomes",
    "one_provider",
    "outcome_lines",
    "streamed_lines",
    "trace_sides",
]


def outcome_lines(path: str | os.PathLike[str], *, ignore_ids: bool = False) -> list[str]:
    """A cassette's outcome as JSON text lines; raises `CassetteError` if it is unusable."""
    return list(_texts(replay_outcome(path, sdk_objects=False).to_json_lines(), ignore_ids))


def _texts(lines: Iterable[dict[str, Any]], ignore_ids: bool) -> Iterator[str]:
    """JSON lines as text, tool-call ids replaced by their position if `ignore_ids`."""
    calls = 0
    for line in lines:
        if ignore_ids and line["type"] == "tool_call":
            calls += 1
            line = {**line, "call": {**line["call"], "id": f"call-{calls}"}}
        yield json_text(line)


@dataclass(frozen=True, slots=True)
class OutcomeDiff:
    """Both sides' outcome codes and lines, and their unified diff (empty when they agree)."""

    a_code: str
    b_code: str
    a: list[str]
    b: list[str]
    diff: list[str]
    #: the provider both cassettes name
    provider: str = ANTHROPIC

    @property
    def same(self) -> bool:
        return not self.diff


def one_provider(a: Cassette, b: Cassette, command: str = "harness diff") -> None:
    """Refuse, as an unusable cassette (`B:1: reason`), two cassettes of different
    providers: their outcomes are not comparable line for line (`command` compares)."""
    if a.provider != b.provider:
        raise CassetteError(
            b.path,
            1,
            f"a cassette of {b.provider}, and {a.path} is one of {a.provider}: "
            f"{command} compares cassettes of one provider",
        )


def diff_outcomes(
    a: str | os.PathLike[str], b: str | os.PathLike[str], *, ignore_ids: bool = False
) -> OutcomeDiff:
    """Replay both cassettes (of one provider, or `CassetteError`) and diff their
    outcomes, labelled with the paths as given."""
    a_cassette, b_cassette = Cassette(a), Cassette(b)
    one_provider(a_cassette, b_cassette)
    a_outcome = replay_outcome(a_cassette, sdk_objects=False)
    b_outcome = replay_outcome(b_cassette, sdk_objects=False)
    a_lines, b_lines = _lines(a_outcome, ignore_ids), _lines(b_outcome, ignore_ids)
    diff = difflib.unified_diff(
        a_lines, b_lines, fromfile=os.fspath(a), tofile=os.fspath(b), lineterm=""
    )
    return OutcomeDiff(
        outcome_code(a_outcome),
        outcome_code(b_outcome),
        a_lines,
        b_lines,
        list(diff),
        a_cassette.provider,
    )


def _lines(outcome: Outcome, ignore_ids: bool) -> list[str]:
    return list(_texts(outcome.to_json_lines(), ignore_ids))


@dataclass(frozen=True, slots=True)
class OutcomeMatch:
    """Both sides' outcome codes, how many lines the first replays to, and whether the
    two replay to the same lines: `diff_outcomes`' verdict without the lines."""

    a_code: str
    b_code: str
    a_count: int
    same: bool


class _Streamed:
    """A cassette's outcome as JSON text lines, replayed as they are read; `code` once
    they are all out."""

    def __init__(self, source: CassetteSource, ignore_ids: bool) -> None:
        self._source = source
        self._ignore_ids = ignore_ids
        self.code = ""

    def __iter__(self) -> Iterator[str]:
        return _texts(self._json_lines(), self._ignore_ids)

    def _json_lines(self) -> Iterator[dict[str, Any]]:
        try:
            for event in replay(self._source, sdk_objects=False):
                yield event_to_json(event)
        except Exception as error:
            if not is_stream_failure(error):
                raise
            self.code = str(failure_code(error))
            yield failure_to_json(error)
            return
        self.code = DONE


def streamed_lines(source: CassetteSource, *, ignore_ids: bool = False) -> Iterator[str]:
    """A cassette's outcome as JSON text lines (`outcome_lines`), replayed as they are
    read, holding nothing; raises `CassetteError` if it is unusable, as its lines are read."""
    return iter(_Streamed(source, ignore_ids))


def match_outcomes(
    a: CassetteSource, b: CassetteSource, *, ignore_ids: bool = False
) -> OutcomeMatch:
    """Replay both cassettes a line of each at a time and compare their outcomes, holding
    neither; raises `CassetteError` if one is unusable."""
    left, right = _Streamed(a, ignore_ids), _Streamed(b, ignore_ids)
    count, same = 0, True
    for a_line, b_line in zip_longest(left, right):
        count += a_line is not None
        same = same and a_line == b_line
    return OutcomeMatch(left.code, right.code, count, same)


def trace_sides(
    a: CassetteSource, b: CassetteSource, labels: tuple[str, str], *, ignore_ids: bool = False
) -> SideBySide:
    """Both cassettes' traces side by side under `labels`, lazily, up to the first row
    where they differ, then that row of each in full (`harness._testing.trace.SideBySide`:
    its `agree` says whether they agree row for row). Raises `CassetteError`, as its lines
    are read, if one is unusable."""
    a_rows, b_rows = trace(a, sdk_objects=False), trace(b, sdk_objects=False)
    return SideBySide(a_rows, b_rows, labels, ids=not ignore_ids)
