"""The fault run of a test suite as a file: `pytest --harness-report=PATH.html` (or `.json`).

Each fault row a test runs becomes a cell (`report_cell`): the plugin's verdict in its
own words (`harness.pytest_plugin.VERDICTS`), how a caught row was caught (the code
*refused* the broken stream, with the exception it raised; or, on a row whose stream
completes, *recovered*), the failure's words, and the broken variant's path. The cells
travel on the test reports (`harness_report_cell`, as `harness_fault_row` does), so a
`pytest -n 2` run gathers them in its controller, where `FaultReport` writes each file
at the end of the run, atomically: the extension picks the format, `.html` a page of
fault rows x tests (`harness._view.report`) whose verdicts link to the variants' pages,
`.json` the same data (`fault_run_data`) for CI tools. Given twice, the option writes both.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from harness._files import check_can_create
from harness._testing.fault_runs import DOES_NOT_APPLY

if TYPE_CHECKING:
    import pytest

    from harness._testing.fault_runs import FaultCase

__all__ = ["FORMATS", "FaultReport", "fault_run_data", "report_cell", "report_paths"]

#: The formats, by the report path's extension.
FORMATS: Final = {".html": "html", ".htm": "html", ".json": "json"}
TITLE: Final = "stream-harness fault rows"
#: The longest message a cell keeps (a failure's report can run to pages).
MESSAGE_LIMIT: Final = 4000
#: The JSON document's version: a field removed or changing meaning is a new version.
VERSION: Final = 1


def report_paths(given: Sequence[str], here: Path) -> list[Path]:
    """The report files `--harness-report` names (relative to `here`, where pytest runs),
    checked now, so that a run never ends without its report: a known extension, not a
    folder, in a folder that exists or can be made and where a file can be created (none
    is left there). `ValueError` says what is wrong."""
    paths = []
    for text in given:
        path = here / text
        if path.suffix.lower() not in FORMATS:
            raise ValueError(
                f"--harness-report {text}: the extension says the format: {', '.join(FORMATS)}"
            )
        if path.is_dir():
            raise ValueError(f"--harness-report {text}: is a folder, give a file in it")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise ValueError(
                f"--harness-report {text}: cannot create its folder: {error.strerror or error}"
            ) from None
        try:
            check_can_create(path.parent)
        except OSError as error:
            raise ValueError(
                f"--harness-report {text}: cannot write in {path.parent}: {error.strerror or error}"
            ) from None
        paths.append(path)
    return paths


def report_cell(
    case: FaultCase,
    verdict: str,
    item: pytest.Item,
    report: pytest.TestReport,
    call: pytest.CallInfo[None],
) -> dict[str, Any]:
    """A fault row's cell, as plain data (the report carries it to xdist's controller)."""
    from harness._replay.direct import failure_code

    raised = case.raised
    path, line, _ = item.location
    callspec = getattr(item, "callspec", None)
    served = verdict != DOES_NOT_APPLY and case.responses and case.path.exists()
    variant = case.path if served else None  # a row that does not apply served nothing
    return {
        "test": item.nodeid.partition("[")[0],
        "nodeid": item.nodeid,
        "file": path,
        "line": line,
        "order": list(callspec.indices.values()) if callspec is not None else [],
        "fault": case.fault.name,
        "description": case.fault.description,
        "verdict": verdict,
        "caught": None if verdict != "caught" else "recovered" if case.recoverable else "refused",
        "expected": case.expected_code,
        "accepted_because": case.accepted_because,
        "raised": None
        if raised is None
        else {
            "type": type(raised).__name__,
            "message": _capped(str(raised)),
            "code": failure_code(raised),
        },
        "outcome": report.outcome,
        "message": _message(report, call),
        "variant": None if variant is None else os.fspath(variant),
    }


def _capped(text: str) -> str:
    return text if len(text) <= MESSAGE_LIMIT else text[: MESSAGE_LIMIT - 1] + "…"


def _message(report: pytest.TestReport, call: pytest.CallInfo[None]) -> str | None:
    """The failure's words (an assertion's message, else the exception's line), or the
    skip's reason; None for a row that passed."""
    if report.skipped:
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        return reason.removeprefix("Skipped: ")
    if not report.failed or call.excinfo is None:
        return None
    value = call.excinfo.value
    text = str(value) if isinstance(value, AssertionError) and str(value) else None
    return _capped(text or call.excinfo.exconly())


def fault_run_data(cells: Iterable[Mapping[str, Any]], verdicts: Sequence[str]) -> dict[str, Any]:
    """The run's cells as one document, in one order however the workers ran: the tests
    by file and line, each test's rows in the order they were collected; the fault rows
    (the page's rows) in catalogue order; the count of each verdict."""
    by_test: dict[str, list[Mapping[str, Any]]] = {}
    for cell in cells:
        by_test.setdefault(cell["test"], []).append(cell)
    tests = sorted(
        by_test.items(),
        key=lambda pair: (pair[1][0]["file"], pair[1][0]["line"] or 0, pair[0]),
    )
    place: dict[str, tuple[int, ...]] = {}
    described: dict[str, str] = {}
    summary = dict.fromkeys(verdicts, 0)
    for _, rows in tests:
        for cell in rows:
            order = tuple(cell["order"])
            place[cell["fault"]] = min(place.get(cell["fault"], order), order)
            described.setdefault(cell["fault"], cell["description"])
            summary[cell["verdict"]] = summary.get(cell["verdict"], 0) + 1
    return {
        "title": TITLE,
        "version": VERSION,
        "verdicts": list(verdicts),
        "summary": summary,
        "faults": [
            {"fault": name, "description": described[name]}
            for name in sorted(place, key=lambda name: (place[name], name))
        ],
        "tests": [
            {"test": test, "rows": sorted(rows, key=lambda cell: (cell["order"], cell["fault"]))}
            for test, rows in tests
        ],
    }


def variants_folder(report: Path) -> Path:
    """Where a page report's variant pages go: `faults.html` -> `faults-variants/`."""
    return report.with_name(f"{report.stem}-variants")


class FaultReport:
    """The run's cells, gathered from every report (a worker's too) and written at the end
    of the run into each `--harness-report` file; the terminal summary names them."""

    def __init__(self, paths: Sequence[Path], verdicts: Sequence[str]) -> None:
        self.paths = list(paths)
        self.verdicts = tuple(verdicts)
        self.cells: list[Mapping[str, Any]] = []
        #: a line for each file: where it was written, or why it could not be
        self.told: list[str] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        cell = getattr(report, "harness_report_cell", None)
        if cell is not None:
            self.cells.append(cell)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        from harness._files import atomic_write

        data = fault_run_data(self.cells, self.verdicts)
        for path in self.paths:
            try:
                text = _json(data) if FORMATS[path.suffix.lower()] == "json" else _html(data, path)
                with atomic_write(path) as handle:
                    handle.write(text.encode("utf-8"))
            except OSError as error:
                self.told.append(f"cannot write {path}: {error.strerror or error}")
                if session.exitstatus == 0:
                    session.exitstatus = 1
            else:
                self.told.append(f"written to {path}")

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        for line in self.told:
            terminalreporter.write_line(f"stream-harness fault report {line}")


def _json(data: Mapping[str, Any]) -> str:
    from harness._terminal import json_text

    return json_text(data, indent=2) + "\n"


def _html(data: Mapping[str, Any], path: Path) -> str:
    """The page, each verdict linked to its variant's page (`variant_link`)."""
    from harness._view.report import fault_run_page, variant_link
    from harness.pytest_plugin import _folder_name

    pages = variants_folder(path)
    links = {
        cell["nodeid"]: variant_link(
            Path(cell["variant"]), pages / f"{_folder_name(cell['nodeid'])}.html", path
        )
        for test in data["tests"]
        for cell in test["rows"]
        if cell["variant"] is not None
    }
    return fault_run_page(data, links)
