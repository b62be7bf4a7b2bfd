"""The `harness conform` report, for the people who fix adapters.

Each disagreement is classified against the case's good stream (`classify`): the command
*accepted silently* a broken stream (it gave what it gives on the good one), *failed
differently* (another error: the events it lost by stopping early are not counted), gave
*wrong data* (the outcome agrees, or the broken stream was accepted, but text or tool
calls were lost, repeated, merged, changed), *crashed* (its output stopped short: its
first error lines are shown), *timed out*, or *broke the protocol* (output that is not
the protocol's, or past a cap).
`Report` takes the verdicts in case order and writes them as text (a line a
disagreement, then a table by class and fault), JSON (an object a case) or Markdown (a
table to paste into another library's issue), each ending in the count, or as one HTML
page at the end (`harness._view.report.conform_page`, drawn from the JSON objects).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from harness._testing.bounded import TIMED_OUT
from harness._testing.conform import CRASHED, Case, Result, Verdict, describe
from harness.faults import DONE

__all__ = [
    "ACCEPTED_SILENTLY",
    "BROKE_THE_PROTOCOL",
    "CLASSES",
    "CRASHED_CLASS",
    "FAILED_DIFFERENTLY",
    "TIMED_OUT_CLASS",
    "WRONG_DATA",
    "Finding",
    "Report",
    "classify",
]

ACCEPTED_SILENTLY: Final = "accepted silently"
WRONG_DATA: Final = "wrong data"
FAILED_DIFFERENTLY: Final = "failed differently"
CRASHED_CLASS: Final = "crashed"
TIMED_OUT_CLASS: Final = "timed out"
BROKE_THE_PROTOCOL: Final = "broke the protocol"
#: Every class, in the order the summary lists them.
CLASSES: Final = (
    ACCEPTED_SILENTLY,
    WRONG_DATA,
    FAILED_DIFFERENTLY,
    CRASHED_CLASS,
    TIMED_OUT_CLASS,
    BROKE_THE_PROTOCOL,
)
#: The summary's fault column for a cassette of the library (no fault applied).
_NO_FAULT: Final = "(the cassette itself)"
_SHOWN: Final = 160


@dataclass(frozen=True, slots=True)
class Finding:
    """A verdict and its class (None: the case agrees), with the class's detail."""

    verdict: Verdict
    kind: str | None
    detail: str = ""

    @property
    def case(self) -> Case:
        return self.verdict.case


def _data(events: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [event for event in events if event != {"type": DONE}]


def _subsequence(short: Sequence[Any], long: Sequence[Any]) -> bool:
    """Whether `short` is `long` with some items left out (order kept)."""
    items = iter(long)
    return all(any(item == other for other in items) for item in short)


def _how_differs(name: str, expected: list[Any], got: list[Any]) -> str | None:
    """How a list of texts or tool calls differs, in two words (None: it does not)."""
    if expected == got:
        return None
    if name == "text" and "".join(expected) == "".join(got):
        return "text merged" if len(got) < len(expected) else "text split"
    if len(got) < len(expected) and _subsequence(got, expected):
        return f"{name} lost"
    if len(got) > len(expected) and _subsequence(expected, got):
        extra = list(got)
        for item in expected:
            extra.remove(item)
        return f"{name} repeated" if all(item in expected for item in extra) else f"{name} added"
    if sorted(map(repr, expected)) == sorted(map(repr, got)):
        return f"{name} reordered"
    return f"{name} changed"


def _wrong_data(expected: list[dict[str, Any]], got: list[dict[str, Any]]) -> str:
    """What differs between two lists of data events: text, tool calls, other events."""

    def texts(events: list[dict[str, Any]]) -> list[Any]:
        return [event.get("text") for event in events if event.get("type") == "text"]

    def calls(events: list[dict[str, Any]]) -> list[Any]:
        return [event.get("call") for event in events if event.get("type") == "tool_call"]

    def others(events: list[dict[str, Any]]) -> list[Any]:
        return [event for event in events if event.get("type") not in ("text", "tool_call")]

    found = [
        _how_differs("text", texts(expected), texts(got)),
        _how_differs("tool call", calls(expected), calls(got)),
        _how_differs("other event", others(expected), others(got)),
    ]
    shown = [part for part in found if part is not None]
    return ", ".join(shown) or "events reordered"


def classify(verdict: Verdict, good: Result | None = None) -> Finding:
    """The verdict's class. `good` is what the command gave on the case's good stream (the
    cassette a variant derives from), to tell a broken stream accepted silently."""
    if verdict.agree:
        return Finding(verdict, None)
    expected, got = verdict.case.expected, verdict.got
    if got.problem is not None:
        if got.problem.startswith(TIMED_OUT):
            return Finding(verdict, TIMED_OUT_CLASS)
        if got.problem.startswith(CRASHED):
            return Finding(verdict, CRASHED_CLASS)
        return Finding(verdict, BROKE_THE_PROTOCOL)
    data_expected, data_got = _data(expected.events), _data(got.events)
    if got.outcome == DONE and expected.outcome != DONE:
        # with no good stream to compare (a library cassette), what follows the point of
        # failure is what accepting gives: the events up to it must agree
        reference = _data(good.events) if good is not None else data_expected
        seen = data_got if good is not None else data_got[: len(data_expected)]
        if seen in (reference, data_expected):
            return Finding(verdict, ACCEPTED_SILENTLY)
        detail = _wrong_data(reference, data_got)
        return Finding(verdict, WRONG_DATA, f"{detail}, and the broken stream accepted")
    if got.outcome != expected.outcome and not verdict.outcome_agrees:
        on_good = "an error on a good stream" if expected.outcome == DONE else ""
        return Finding(verdict, FAILED_DIFFERENTLY, on_good)
    return Finding(verdict, WRONG_DATA, _wrong_data(data_expected, data_got))


def _shown(text: str) -> str:
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."


def fault_words(case: Case) -> str:
    """The case's fault in plain words: the fault row's description, or for a cassette of
    the library, what its header says it shows (`;` made `,`: it separates fields)."""
    words = case.description.replace(";", ",")  # `; ` separates a line's fields
    if case.fault is not None:
        return f"fault {case.fault}: {words}"
    return f"cassette: {_shown(words)}" if words else "cassette"


class Report:
    """The findings of a run, written as they come in one of the three formats."""

    def __init__(
        self,
        echo: Callable[[str], None],
        output_format: str = "text",
        *,
        trace_hint: Callable[[Verdict], str] = lambda verdict: "",
        heading: str = "harness conform",
    ) -> None:
        self.echo = echo
        self.format = output_format
        self.trace_hint = trace_hint
        #: the HTML page's heading: the command judged
        self.heading = heading
        self.findings: list[Finding] = []
        self._good: dict[str, Result] = {}
        #: the JSON objects of the cases, kept for the HTML page drawn at the end
        self._records: list[dict[str, Any]] = []
        if output_format == "markdown":
            self.echo("| case | expected | got | class | the fault |")
            self.echo("|---|---|---|---|---|")

    def add(self, verdict: Verdict) -> Finding:
        """Classify a verdict (cases in order: a good cassette comes before its variants)
        and write what the format shows of it."""
        case = verdict.case
        if case.fault is None:
            self._good[case.source] = verdict.got
        finding = classify(verdict, self._good.get(case.source) if case.fault else None)
        self.findings.append(finding)
        if self.format in ("json", "html"):
            record = {**verdict.to_json(), **self._json_fields(finding)}
            if self.format == "json":
                self.echo_json(record)
            else:
                self._records.append(record)
        elif finding.kind is not None:
            self.echo(
                self._markdown_row(finding) if self.format == "markdown" else self.line(finding)
            )
        return finding

    def echo_json(self, value: Any) -> None:
        from harness._terminal import json_text

        self.echo(json_text(value))

    def _json_fields(self, finding: Finding) -> dict[str, Any]:
        case = finding.case
        return {
            "fault": case.fault,
            "class": finding.kind,
            "detail": finding.detail or None,
            "description": case.description,
            "difference": finding.verdict.difference,
            "trace": None if finding.kind is None else self.trace_hint(finding.verdict) or None,
        }

    def line(self, finding: Finding) -> str:
        """A disagreement in one line: the case, what was expected and given, the class,
        the first difference, the fault in words, and how to trace it."""
        verdict = finding.verdict
        case = verdict.case
        kind = finding.kind if not finding.detail else f"{finding.kind}: {finding.detail}"
        parts = [
            f"{case.name}: expected {describe(case.expected)}, got {describe(verdict.got)}",
            str(kind),
            str(verdict.difference),
        ]
        parts += [asked_line(path) for path in verdict.got.asked]
        parts.append(fault_words(case))
        hint = self.trace_hint(verdict)
        if hint:
            parts.append(f"trace: {hint}")
        return "; ".join(parts)

    def _markdown_row(self, finding: Finding) -> str:
        verdict = finding.verdict
        case = verdict.case
        kind = finding.kind if not finding.detail else f"{finding.kind} ({finding.detail})"
        cells = [
            f"`{case.name}`",
            f"`{case.expected.outcome}`",
            _markdown(describe(verdict.got), code=verdict.got.problem is None),
            str(kind),
            _markdown(fault_words(case)),
        ]
        return "| " + " | ".join(cells) + " |"

    def summary_rows(self) -> list[tuple[str, str, int]]:
        """(class, fault, cases) for every disagreement, classes in `CLASSES` order."""
        counted = Counter(
            (finding.kind, finding.case.fault or _NO_FAULT)
            for finding in self.findings
            if finding.kind is not None
        )
        order = {kind: number for number, kind in enumerate(CLASSES)}
        return sorted(
            ((kind, fault, count) for (kind, fault), count in counted.items()),
            key=lambda row: (order[row[0]], -row[2], row[1]),
        )

    def finish(self, skipped: int) -> None:
        """The summary: a table by class and fault, then the count (JSON: one object)."""
        total = len(self.findings)
        agreeing = sum(finding.kind is None for finding in self.findings)
        rows = self.summary_rows()
        if self.format in ("json", "html"):
            counts = {"cases": total, "agree": agreeing, "disagree": total - agreeing}
            by_class = [{"class": kind, "fault": fault, "cases": n} for kind, fault, n in rows]
            summary = {**counts, "skipped": skipped, "by_class": by_class}
            if self.format == "json":
                self.echo_json({"summary": summary})
            else:
                from harness._view.report import conform_page

                self.echo(conform_page(self._records, summary, self.heading).rstrip("\n"))
            return
        tail = f" ({skipped} wire-level cases skipped: --serve runs them)" if skipped else ""
        count = f"{agreeing}/{total} cases agree{tail}"
        if self.format == "markdown":
            if rows:
                self.echo("")
                self.echo("| class | fault | cases |")
                self.echo("|---|---|---|")
                for kind, fault, number in rows:
                    self.echo(
                        f"| {kind} | {_markdown(fault, code=fault != _NO_FAULT)} | {number} |"
                    )
            self.echo("")
            self.echo(f"**{count}**")
            return
        if rows:
            width = max(len(kind) for kind, _, _ in rows)
            fault_width = max(len(fault) for _, fault, _ in rows)
            self.echo("By class and fault:")
            for kind, fault, number in rows:
                self.echo(f"  {kind.ljust(width)}  {fault.ljust(fault_width)}  {number:>4}")
        self.echo(count)


def asked_line(path: str) -> str:
    """A request the server could not answer, named with the path it asked for."""
    return (
        f"asked for {path}, which no cassette answers (the server answers POST /v1/messages: "
        "a base URL without /v1?)"
    )


def _markdown(text: str, *, code: bool = False) -> str:
    """A table cell: `|` escaped, new lines gone, in backticks when it is a code."""
    cell = " ".join(text.split()).replace("|", "\\|")
    return f"`{cell}`" if code and "`" not in cell else cell
