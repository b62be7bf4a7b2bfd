"""The plugin's drift check: a run's cassettes recorded again, live, and compared by shape.

Under `--harness-record=drift` every marked cassette that exists is recorded again as
`all` records it (the code's own requests through the client fixtures, the marker's
`request=` for `harness_replay`), but into the run's drift folder (`drift_folder`: a
folder of the temporary one, or `--harness-drift-dir`), at its path under the rootdir
(`copy_path`), never over the stored one; the test then runs against the new answer. At
each test's end the stored cassette and its copy are replayed (without the SDK) and
compared (`drift_rows`); the verdicts travel on the teardown report, so a `pytest -n 2`
run sums them up in its controller, where `DriftRows` prints them, writes them to
`report.txt` in the drift folder, and makes a run with a drifted cassette exit 1.

Two live answers to one request rarely share their text, so a cassette agrees when its
copy replays to the same `Shape`: the same kinds of internal events in order (a run of
text pieces counts as one `text`: how the text is cut is the server's choice), the same
tool calls in order (names and argument keys, not ids or values) and the same ending
code (`done`, a protocol error's code, `api_error:<type>`). A session folder is compared
turn by turn.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

__all__ = ["DriftRows", "Shape", "changes", "copy_path", "drift_folder", "drift_rows"]

AGREES: Final = "agrees"
DRIFTED: Final = "drifted"
NOT_RERECORDED: Final = "not re-recorded"
#: The order the summary lists its verdicts in.
VERDICTS: Final = (DRIFTED, AGREES, NOT_RERECORDED)
#: The file in the drift folder that keeps the summary (a CI job's artifact).
REPORT_NAME: Final = "report.txt"
TITLE: Final = "stream-harness drift"


def drift_folder(chosen: Path | None, run_id: str) -> Path:
    """Where a run writes its copies: `chosen` (`--harness-drift-dir`), else a folder of
    the temporary one named after the run (one for every worker of a `pytest -n` run)."""
    if chosen is not None:
        return chosen
    return Path(tempfile.gettempdir()) / f"stream-harness-drift-{run_id}"


def copy_path(stored: Path, root: Path, folder: Path) -> Path:
    """Where `stored` is recorded again: its path under `root` (the rootdir), under
    `folder`; a cassette outside `root` goes under `folder/outside/<hash of its folder>/`."""
    absolute = stored.resolve()
    try:
        return folder / absolute.relative_to(root.resolve())
    except ValueError:
        digest = hashlib.sha256(os.fsencode(absolute.parent)).hexdigest()[:12]
        return folder / "outside" / digest / absolute.name


@dataclass(frozen=True, slots=True)
class Shape:
    """What of a replay two live answers to one request should share (see the module doc)."""

    #: `text`, `tool_call`, `done`, in order; consecutive text pieces are one `text`
    events: tuple[str, ...]
    #: `name(key, ...)` a tool call, in order, the argument keys sorted
    tool_calls: tuple[str, ...]
    #: `done`, or the failure's code
    code: str

    @classmethod
    def of(cls, path: str | os.PathLike[str]) -> Shape:
        """The shape of a cassette's replay; raises `CassetteError` if it is unusable."""
        from harness._events import ToolCallEvent
        from harness._replay.direct import replay_outcome
        from harness._testing.coverage import outcome_code

        outcome = replay_outcome(path, sdk_objects=False)
        events: list[str] = []
        for event in outcome.events:
            if event.type != "text" or events[-1:] != ["text"]:
                events.append(event.type)
        calls = tuple(
            f"{event.call.name}({', '.join(sorted(event.call.input))})"
            for event in outcome.events
            if isinstance(event, ToolCallEvent)
        )
        return cls(tuple(events), calls, outcome_code(outcome))

    def changes(self, now: Shape) -> list[str]:
        """What differs in `now`, a line an aspect: `events: text, done -> text`."""
        aspects = (
            ("events", self.events, now.events),
            ("tool calls", self.tool_calls, now.tool_calls),
            ("code", (self.code,), (now.code,)),
        )
        return [
            f"{name}: {_listed(before)} -> {_listed(after)}"
            for name, before, after in aspects
            if before != after
        ]


def _listed(items: Sequence[str]) -> str:
    return ", ".join(items) if items else "none"


def changes(stored: Path, copy: Path) -> list[str]:
    """What changed from `stored` to its re-recorded `copy` (nothing: they agree); a
    session folder turn by turn. Raises `CassetteError` for an unusable cassette."""
    if not stored.is_dir():
        return Shape.of(stored).changes(Shape.of(copy))
    from harness._cassette.sessions import turn_files

    before, after = turn_files(stored), turn_files(copy)
    found = [] if len(before) == len(after) else [f"turns: {len(before)} -> {len(after)}"]
    for number, (old, new) in enumerate(zip(before, after, strict=False), start=1):
        found += [f"turn {number}: {line}" for line in Shape.of(old).changes(Shape.of(new))]
    return found


def drift_rows(
    pairs: Iterable[tuple[Path, Path]], *, test: str, here: Path, folder: Path, run_id: str
) -> list[dict[str, Any]]:
    """A test's verdicts, one a (stored cassette, copy) pair, as plain data (a report
    carries them to the controller), each cassette named relative to `here` (where pytest
    runs): `not re-recorded` for a copy this run did not write."""
    from harness._exceptions import CassetteError
    from harness._modes import RecordMode
    from harness._testing.record_once import RecordGate

    rows = []
    for stored, copy in pairs:
        written = (
            copy.exists()
            and not RecordGate([copy], mode=RecordMode.DRIFT, run_id=run_id).needs_recording()
        )
        found: list[str] = []
        verdict = NOT_RERECORDED
        if written:
            try:
                found = changes(stored, copy)
            except CassetteError as error:
                found = [f"unreadable: {error}"]
            verdict = DRIFTED if found else AGREES
        rows.append(
            {
                "cassette": _shown(stored, here),
                "copy": os.fspath(copy),
                "folder": os.fspath(folder),
                "session": stored.is_dir(),
                "test": test,
                "verdict": verdict,
                "changes": found,
            }
        )
    return rows


def _shown(path: Path, here: Path) -> str:
    """`path` relative to `here` when it is inside it, else as it is."""
    try:
        return os.fspath(path.resolve().relative_to(here.resolve()))
    except ValueError:
        return os.fspath(path)


class DriftRows:
    """The run's drift verdicts, one a cassette (a cassette shared by several tests, or the
    rows of a `fault_variant` test, is listed once: by a test that re-recorded it, if one
    did), summed up at the end of the run: printed, kept in `report.txt` in the drift
    folder, and a drifted cassette makes a run that passed exit 1."""

    def __init__(self, *, worker: bool) -> None:
        self.worker = worker
        self.rows: dict[str, dict[str, Any]] = {}
        #: why a test did not re-record its cassettes: its skip's reason, or its failure
        self.why_not: dict[str, str] = {}

    def pytest_runtest_logreport(self, report: Any) -> None:
        if report.skipped and report.nodeid not in self.why_not:
            longrepr = report.longrepr
            reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
            self.why_not[report.nodeid] = f"skipped: {reason.removeprefix('Skipped: ')}"
        elif report.failed and report.nodeid not in self.why_not:
            self.why_not[report.nodeid] = f"the test failed in its {report.when}"
        for row in getattr(report, "harness_drift_rows", ()):
            kept = self.rows.get(row["cassette"])
            if kept is None or (kept["verdict"] == NOT_RERECORDED != row["verdict"]):
                self.rows[row["cassette"]] = row

    def lines(self) -> list[str]:
        """The summary: where the copies are, then the cassettes by verdict."""
        if not self.rows:
            return []
        by_verdict: dict[str, list[dict[str, Any]]] = {}
        for _, row in sorted(self.rows.items()):  # in one order, however the workers ran
            by_verdict.setdefault(row["verdict"], []).append(row)
        where = f"re-recorded into {self.folder()}"
        if not set(by_verdict) - {NOT_RERECORDED}:
            where = "nothing re-recorded"
        lines = [f"{where}; the stored cassettes are left as they were"]
        for verdict in VERDICTS:
            rows = by_verdict.get(verdict, [])
            if verdict == AGREES and rows:
                lines.append(f"{verdict} ({len(rows)}): {', '.join(r['cassette'] for r in rows)}")
            elif rows:
                lines.append(f"{verdict} ({len(rows)}):")
                lines += [line for row in rows for line in self._detail(row)]
        return lines

    def _detail(self, row: dict[str, Any]) -> list[str]:
        cassette, test = row["cassette"], row["test"]
        if row["verdict"] == NOT_RERECORDED:
            why = self.why_not.get(test, "the test sent no request for it")
            return [f"  {cassette} ({test}): {why}"]
        shown = [f"  {cassette} ({test})", *(f"    {change}" for change in row["changes"])]
        if row["session"]:
            return [*shown, f"    re-recorded: {row['copy']}"]
        return [*shown, f"    see: harness diff --ignore-ids {cassette} {row['copy']}"]

    def folder(self) -> str:
        """The run's drift folder (every row names the same)."""
        folder: str = next(iter(self.rows.values()))["folder"]
        return folder

    def pytest_sessionfinish(self, session: Any) -> None:
        """Keep the summary in the drift folder; a drifted cassette fails a passing run."""
        if self.worker or not self.rows:
            return
        folder = Path(self.folder())
        folder.mkdir(parents=True, exist_ok=True)
        (folder / REPORT_NAME).write_text("\n".join(self.lines()) + "\n", encoding="utf-8")
        if session.exitstatus == 0 and any(r["verdict"] == DRIFTED for r in self.rows.values()):
            session.exitstatus = 1

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.worker or not self.rows:
            return
        terminalreporter.write_sep("=", TITLE)
        for line in self.lines():
            terminalreporter.write_line(line)
