"""Which outcomes a set of cassettes reaches: the error table's codes against the cassettes.

Each cassette is replayed to its end and filed under its outcome code (see `outcome_code`):
a code of the error table, `api_error:<type>`, or `done` for one that completes. A
session folder's turns are played as `harness replay` plays them
(`harness._replay.calls.played`): an answer the SDK retries is no outcome of its own,
but the first attempt of the call filed under the turn it plays. The
report says which rows of the error table no cassette reaches, so a cassette library can
be kept complete (CI runs `harness coverage cassettes/`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from harness._exceptions import ERROR_TABLE, CassetteError
from harness._replay.calls import Call, call_events, played
from harness._replay.direct import Outcome, collect, failure_code, replay_outcome
from harness._replay.plan import DEFAULT_READ_TIMEOUT

__all__ = ["DONE", "CoverageReport", "measure_coverage", "outcome_code"]

DONE = "done"


def outcome_code(outcome: Outcome) -> str:
    """`done`, the protocol error's code, or `api_error:<error.type>`."""
    if outcome.error is None:
        return DONE
    code = failure_code(outcome.error)
    assert code is not None, "an Outcome's error is always a stream failure"
    return code


@dataclass(slots=True)
class CoverageReport:
    """Cassette paths by outcome code, in the order given, and the unusable cassettes."""

    reached: dict[str, list[str]] = field(default_factory=dict)
    unusable: list[CassetteError] = field(default_factory=list)

    @property
    def missing(self) -> list[str]:
        """Rows of the error table that no cassette reaches, in table order."""
        return [code for code in ERROR_TABLE if not self.reached.get(code)]

    def rows(self) -> list[tuple[str, list[str]]]:
        """The table: every error-table code, then `done`, then any API error types reached."""
        extra = sorted(code for code in self.reached if code not in ERROR_TABLE and code != DONE)
        return [(code, self.reached.get(code, [])) for code in [*ERROR_TABLE, DONE, *extra]]

    def render(self) -> list[str]:
        """Readable lines: a row a code with its count and cassettes (one a line), a summary."""
        rows = self.rows()
        width = max(len(code) for code, _ in rows)
        lines = [f"{'outcome':<{width}}  {'n':>3}  cassettes"]
        for code, paths in rows:
            first, *more = paths or ["-- reached by none"]
            lines.append(f"{code:<{width}}  {len(paths):>3}  {first}")
            lines.extend(f"{'':<{width}}       {path}" for path in more)
        covered = len(ERROR_TABLE) - len(self.missing)
        summary = f"{covered} of {len(ERROR_TABLE)} error codes reached"
        if self.missing:
            summary += f"; not reached: {', '.join(self.missing)}"
        lines.append(summary)
        return lines


def measure_coverage(paths: Iterable[str]) -> CoverageReport:
    """Replay every cassette (every call, in a session folder) and file it under its
    outcome; unusable ones are collected."""
    report = CoverageReport()
    for entry in played(list(paths)):
        try:
            if isinstance(entry, Call):
                events = call_events(entry, via="direct", read_timeout=DEFAULT_READ_TIMEOUT)
                code, path = outcome_code(collect(events)), entry.played
            else:
                code, path = outcome_code(replay_outcome(entry, sdk_objects=False)), entry
        except CassetteError as error:
            report.unusable.append(error)
            continue
        report.reached.setdefault(code, []).append(path)
    return report
