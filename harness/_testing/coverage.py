"""Which outcomes a set of cassettes reaches: the error table's codes against the cassettes.

Each cassette is replayed to its end and filed under its outcome code (see `outcome_code`):
a code of the error table, `api_error:<type>`, or `done` for one that completes. A
session folder's turns are played as `harness replay` plays them
(`harness._replay.calls.played`): an answer the SDK retries is no outcome of its own,
but the first attempt of the call filed under the turn it plays. The
report says which rows of the error table no cassette reaches, so a cassette library can
be kept complete (CI runs `harness coverage cassettes/`).

Each provider (a header's `provider`: Anthropic when it names none) has its own table,
so cassettes are reported per provider present (`measure_coverages`), each against its
provider's codes; Anthropic's report comes first and reads as it did before.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from harness._cassette.codec import EVENT_SCHEMAS, Cassette
from harness._exceptions import ANTHROPIC, ERROR_TABLES, CassetteError
from harness._replay.calls import Call, call_events, played
from harness._replay.direct import Outcome, collect, failure_code, replay_outcome
from harness._replay.plan import DEFAULT_READ_TIMEOUT

__all__ = ["DONE", "CoverageReport", "measure_coverage", "measure_coverages", "outcome_code"]

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
    """One provider's cassette paths by outcome code, in the order given, and the unusable
    cassettes."""

    reached: dict[str, list[str]] = field(default_factory=dict)
    unusable: list[CassetteError] = field(default_factory=list)
    provider: str = ANTHROPIC

    @property
    def table(self) -> Mapping[str, str]:
        """The provider's error table: code -> message template."""
        return ERROR_TABLES[self.provider].templates

    @property
    def missing(self) -> list[str]:
        """Rows of the error table that no cassette reaches, in table order."""
        return [code for code in self.table if not self.reached.get(code)]

    def rows(self) -> list[tuple[str, list[str]]]:
        """The table: every error-table code, then `done`, then any API error types reached."""
        table = self.table
        extra = sorted(code for code in self.reached if code not in table and code != DONE)
        return [(code, self.reached.get(code, [])) for code in [*table, DONE, *extra]]

    def render(self) -> list[str]:
        """Readable lines: a row a code with its count and cassettes (one a line), a summary."""
        rows = self.rows()
        width = max(len(code) for code, _ in rows)
        lines = [f"{'outcome':<{width}}  {'n':>3}  cassettes"]
        for code, paths in rows:
            first, *more = paths or ["-- reached by none"]
            lines.append(f"{code:<{width}}  {len(paths):>3}  {first}")
            lines.extend(f"{'':<{width}}       {path}" for path in more)
        covered = len(self.table) - len(self.missing)
        named = "" if self.provider == ANTHROPIC else f"{self.provider} "
        summary = f"{covered} of {len(self.table)} {named}error codes reached"
        if self.missing:
            summary += f"; not reached: {', '.join(self.missing)}"
        lines.append(summary)
        return lines


def measure_coverages(paths: Iterable[str]) -> list[CoverageReport]:
    """Replay every cassette (every call, in a session folder) and file it under its
    outcome, in its provider's report: one report per provider present (Anthropic's
    first, the others in `EVENT_SCHEMAS` order); unusable ones are collected in the first."""
    reports = {provider: CoverageReport(provider=provider) for provider in EVENT_SCHEMAS}
    unusable: list[CassetteError] = []
    present: set[str] = set()
    for entry in played(list(paths)):
        provider = ANTHROPIC
        try:
            if isinstance(entry, Call):
                events = call_events(entry, via="direct", read_timeout=DEFAULT_READ_TIMEOUT)
                code, path = outcome_code(collect(events)), entry.played
            else:
                cassette = Cassette(entry)
                provider = cassette.provider
                code, path = outcome_code(replay_outcome(cassette, sdk_objects=False)), entry
        except CassetteError as error:
            unusable.append(error)
            continue
        present.add(provider)
        reports[provider].reached.setdefault(code, []).append(path)
    # Anthropic's report stands alone when no cassette was usable (the report of old).
    shown = [reports[name] for name in reports if name in (present or {ANTHROPIC})]
    shown[0].unusable = unusable
    return shown


def measure_coverage(paths: Iterable[str]) -> CoverageReport:
    """Anthropic's report of `measure_coverages` (its only one for Anthropic cassettes),
    every unusable cassette in it."""
    reports = measure_coverages(paths)
    anthropic = next((r for r in reports if r.provider == ANTHROPIC), CoverageReport())
    anthropic.unusable = [error for report in reports for error in report.unusable]
    return anthropic
