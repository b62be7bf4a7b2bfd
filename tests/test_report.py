"""`pytest --harness-report` (a fault run as a page, or as JSON) and `harness conform
--format html`: each cell the plugin's verdict, the page escaped and self-contained."""

from __future__ import annotations

import json
import shutil
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
from click.testing import CliRunner
from conftest import EXAMPLES, LIBRARY
from fault_run_project import HOSTILE_REASON, HOSTILE_TEXT, write_project

from harness._testing.fault_report import fault_run_data, report_paths
from harness._view import report as pages
from harness._view.page import CSP
from harness_cli.main import cli


class Parsed(HTMLParser):
    """A page's elements: every start tag with its attributes, and the text shown."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def named(self, tag: str) -> list[dict[str, str | None]]:
        return [attrs for name, attrs in self.tags if name == tag]

    def cells(self) -> dict[str, str]:
        """Each cell's test id -> its classes."""
        return {
            str(attrs["data-nodeid"]): str(attrs["class"])
            for attrs in self.named("td")
            if "data-nodeid" in attrs
        }


def _shown_safely(page: str) -> Parsed:
    """The page, parsed, after checking that it runs and loads nothing: no script, no
    element that fetches, no handler attribute, the policy in its head."""
    parsed = Parsed(page)
    assert parsed.named("script") == []
    assert [tag for tag, _ in parsed.tags if tag in ("img", "iframe", "link", "object")] == []
    assert [name for _, attrs in parsed.tags for name in attrs if name.startswith("on")] == []
    (policy,) = [a for a in parsed.named("meta") if a.get("http-equiv")]
    assert policy["content"] == CSP
    return parsed


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    write_project(pytester.path)
    return pytester


def _cells(data: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {
        (test["test"].rpartition("::")[2], cell["fault"]): cell
        for test in data["tests"]
        for cell in test["rows"]
    }


@pytest.mark.slow
def test_the_report_is_a_page_and_json_of_every_fault_row_with_its_verdict(
    project: pytest.Pytester,
) -> None:
    result = project.runpytest("--harness-report=out/run.html", "--harness-report=out/run.json")
    result.assert_outcomes(passed=21, failed=18, skipped=24)
    out = project.path / "out"
    assert f"stream-harness fault report written to {out / 'run.json'}" in result.outlines
    data = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert [test["test"] for test in data["tests"]] == [
        "test_inner.py::test_summarize",  # in the file's order
        "test_inner.py::test_careful",
        "test_inner.py::test_adapter",
    ]
    assert data["summary"] == {
        "caught": 20,
        "accepted silently": 13,
        "accepted on purpose": 1,
        "wrong code": 0,
        "crashed": 5,
        "not answered": 0,
        "not recovered": 0,
        "not judged": 0,
        "does not apply": 24,
    }
    cells = _cells(data)
    refused = cells["test_careful", "overloaded_mid_stream"]
    assert (refused["verdict"], refused["caught"], refused["outcome"]) == (
        "caught",
        "refused",
        "passed",
    )
    assert refused["raised"] == {
        "type": "Refused",
        "message": "no summary: APIStatusError",
        "code": None,
    }
    by_adapter = cells["test_adapter", "drop_message_start"]["raised"]
    assert by_adapter["code"] == "missing_message_start"
    assert by_adapter["message"].endswith(
        "stream began with content_block_start instead of message_start"
    )
    assert cells["test_summarize", "http_429_then_ok"]["caught"] == "recovered"
    silent = cells["test_summarize", "cut_connection"]
    assert (silent["verdict"], silent["outcome"], silent["raised"]) == (
        "accepted silently",
        "failed",
        None,
    )
    assert silent["message"].startswith(f"summarize returned {HOSTILE_TEXT!r} on cut_connection")
    crashed = cells["test_summarize", "orphan_json_delta"]
    assert crashed["verdict"] == "crashed"
    assert crashed["raised"]["type"] == "IndexError"
    assert "not a caught fault (expect_failure expects StreamProtocolError)" in crashed["message"]
    on_purpose = cells["test_summarize", "drop_stop_reason"]
    assert (on_purpose["verdict"], on_purpose["accepted_because"]) == (
        "accepted on purpose",
        HOSTILE_REASON,
    )
    skipped = cells["test_adapter", "repeat_tool_start"]
    assert (skipped["verdict"], skipped["variant"]) == ("does not apply", None)
    assert skipped["message"] == "fault repeat_tool_start does not apply to hostile.jsonl"
    assert Path(silent["variant"]).name == "cut_connection.jsonl"
    assert Path(silent["variant"]).is_file()

    page = (out / "run.html").read_text(encoding="utf-8")
    parsed = _shown_safely(page)
    classes = parsed.cells()
    assert len(classes) == 63 - 24  # the 8 rows no test's cassette has are named below
    assert classes[silent["nodeid"]] == "v-accepted-silently failed"
    assert classes[refused["nodeid"]] == "v-caught"
    links = [str(attrs["href"]) for attrs in parsed.named("a")]
    assert len(links) == 63 - 24  # every cell links to its variant
    assert all((out / unquote(link)).is_file() for link in links)
    shown = "".join(parsed.text)
    assert f"summarize returned {HOSTILE_TEXT!r} on cut_connection" in shown
    assert HOSTILE_REASON in shown
    assert "refused: Refused: no summary: APIStatusError" in shown
    assert "does not apply to any test: repeat_tool_start, truncate_tool_json" in shown


@pytest.mark.slow
def test_under_xdist_the_controller_writes_the_whole_run(project: pytest.Pytester) -> None:
    project.runpytest("--harness-report=alone.json").assert_outcomes(
        passed=21, failed=18, skipped=24
    )
    result = project.runpytest_subprocess("-n", "2", "--harness-report=workers.json")
    result.assert_outcomes(passed=21, failed=18, skipped=24)

    def comparable(name: str) -> dict[str, Any]:
        data: dict[str, Any] = json.loads((project.path / name).read_text(encoding="utf-8"))
        for test in data["tests"]:
            for cell in test["rows"]:
                cell["variant"] = cell["variant"] and Path(cell["variant"]).name
                if cell["message"]:  # the trace command names the worker's folder
                    cell["message"] = cell["message"].partition("trace: ")[0]
        return data

    assert comparable("workers.json") == comparable("alone.json")


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("run.txt", "--harness-report run.txt: the extension says the format: .html, .htm, .json"),
        ("out.json", "--harness-report out.json: is a folder, give a file in it"),
        ("file/run.html", "--harness-report file/run.html: cannot create its folder: File exists"),
        pytest.param(
            "/proc/run.html",
            "--harness-report /proc/run.html: cannot write in /proc: No such file or directory",
            marks=pytest.mark.skipif(sys.platform != "linux", reason="/proc is Linux's"),
            id="a-folder-no-file-can-be-made-in",
        ),
    ],
)
@pytest.mark.slow
def test_a_bad_report_path_is_a_usage_error_in_one_line(
    pytester: pytest.Pytester, given: str, said: str
) -> None:
    (pytester.path / "out.json").mkdir()
    (pytester.path / "file").write_text("", encoding="utf-8")
    pytester.makepyfile("def test_nothing():\n    pass\n")
    result = pytester.runpytest(f"--harness-report={given}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert [line for line in result.errlines if line.strip()] == [f"ERROR: {said}"]


def test_checking_a_report_path_leaves_no_file_behind(tmp_path: Path) -> None:
    (path,) = report_paths(["new/run.html"], tmp_path)
    assert path == tmp_path / "new" / "run.html"
    assert list((tmp_path / "new").iterdir()) == []


@pytest.mark.slow
def test_a_run_without_fault_rows_writes_an_empty_report(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_nothing():\n    pass\n")
    pytester.runpytest("--harness-report=new/run.html", "--harness-report=new/run.json")
    data = json.loads((pytester.path / "new" / "run.json").read_text(encoding="utf-8"))
    assert (data["tests"], data["faults"]) == ([], [])
    page = (pytester.path / "new" / "run.html").read_text(encoding="utf-8")
    assert "No test ran a fault row (fault_variant)." in "".join(_shown_safely(page).text)


@pytest.mark.slow
def test_a_report_that_cannot_be_written_is_said_and_fails_the_run(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        "import shutil\n\ndef test_removes_the_folder():\n    shutil.rmtree('gone')\n"
    )
    result = pytester.runpytest("--harness-report=gone/run.json")
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    written = pytester.path / "gone" / "run.json"
    assert (
        f"stream-harness fault report cannot write {written}: No such file or directory"
        in result.outlines
    )


def test_a_verdict_links_to_the_variants_page_or_to_its_cassette_where_none_is_drawn(
    tmp_path: Path,
) -> None:
    variant = tmp_path / "variants" / "test_a.py__test_b.cut" / "cut.jsonl"
    variant.parent.mkdir(parents=True)
    variant.write_text("not a cassette\n", encoding="utf-8")
    report = tmp_path / "ci" / "run.html"
    page = tmp_path / "ci" / "run-variants" / "test_a.py__test_b.cut.html"
    assert (
        pages.variant_link(variant, page, report) == "../variants/test_a.py__test_b.cut/cut.jsonl"
    )
    assert not page.exists()
    shutil.copyfile(LIBRARY / "text_only.jsonl", variant)
    assert pages.variant_link(variant, page, report) == "run-variants/test_a.py__test_b.cut.html"
    drawn = page.read_text(encoding="utf-8")
    assert "<title>cut.jsonl: test_a.py__test_b.cut · harness view</title>" in drawn
    assert 'class="timeline"' in drawn


def test_every_text_of_the_page_is_escaped() -> None:
    hostile = '"><script>window.pwned=1</script><marquee onclick="x">\u202e\ud800'
    nodeid = f"t.py::{hostile}[row]"
    cell: dict[str, Any] = {
        "test": f"t.py::{hostile}",
        "nodeid": nodeid,
        "file": "t.py",
        "line": 1,
        "order": [0],
        "fault": hostile,
        "description": hostile,
        "verdict": "crashed",
        "caught": None,
        "expected": hostile,
        "accepted_because": None,
        "raised": {"type": hostile, "message": hostile, "code": None},
        "outcome": "failed",
        "message": hostile * 5,
        "variant": None,
    }
    data = fault_run_data([cell], ["crashed"])
    page = pages.fault_run_page(data, {nodeid: f"{hostile}.html"})
    parsed = _shown_safely(page)
    assert [tag for tag, _ in parsed.tags if tag == "marquee"] == []
    assert page.encode("utf-8")  # the lone surrogate, escaped, is text UTF-8 can hold
    assert "\\u202e\\ud800" in "".join(parsed.text)


#: The harness's own adapter, but a stream without message_start is taken as done.
LENIENT = [
    sys.executable,
    "-c",
    "import io, runpy, sys\n"
    "data = sys.stdin.read()\n"
    "if 'message_start' not in data:\n"
    '    print(\'{"type": "done"}\')\n'
    "else:\n"
    "    sys.stdin = io.StringIO(data)\n"
    f"    runpy.run_path({str(EXAMPLES / 'python' / 'conform_stdin.py')!r}, run_name='__main__')\n",
]


@pytest.mark.slow
def test_conform_html_is_the_json_drawn_the_disagreeing_cases_first() -> None:
    runner = CliRunner()
    base = ["conform", "cassettes/text_only.jsonl"]
    as_json = runner.invoke(cli, [*base, "--format", "json", "--", *LENIENT])
    *records, summary = [json.loads(line) for line in as_json.output.splitlines()]
    result = runner.invoke(cli, [*base, "--format", "html", "--", *LENIENT])
    assert result.exit_code == 1
    parsed = _shown_safely(result.output)
    rows = [(str(a["data-case"]), str(a["class"])) for a in parsed.named("tr") if "data-case" in a]
    assert rows[0] == ("text_only.drop_message_start", "disagree")
    assert rows[1:] == [(r["case"], "agree") for r in records if r["case"] != rows[0][0]]
    assert summary["summary"] == {
        "cases": 10,
        "agree": 9,
        "disagree": 1,
        "skipped": 4,
        "by_class": [{"class": "accepted silently", "fault": "drop_message_start", "cases": 1}],
    }
    shown = "".join(parsed.text)
    assert "9/10 cases agree (4 wire-level cases skipped: --serve runs them)" in shown
    (drop,) = [r for r in records if not r["agree"]]
    assert drop["difference"] == (
        'event 1: expected the end (missing_message_start), got {"type":"done"}'
    )
    assert drop["difference"] in shown
    assert drop["trace"] == (
        "--keep DIR writes it, then harness replay --trace DIR/text_only.drop_message_start.jsonl"
    )
    assert drop["trace"] in shown
    assert all(r["trace"] is None and r["difference"] is None for r in records if r["agree"])
