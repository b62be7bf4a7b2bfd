"""`harness conform`'s report: each disagreement's class against the case's good stream,
the fault in words, the summary by class and fault, JSON's fields, Markdown's tables, a
crash's first error lines and a request that reached no cassette."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
from click.testing import CliRunner

from harness._testing.conform import Case, Result, collect_cases, judge, read_output
from harness._testing.findings import (
    ACCEPTED_SILENTLY,
    BROKE_THE_PROTOCOL,
    CRASHED_CLASS,
    FAILED_DIFFERENTLY,
    TIMED_OUT_CLASS,
    WRONG_DATA,
    Report,
    classify,
)
from harness.faults import fault_named
from harness_cli.main import cli

CASES = {case.name: case for case in collect_cases(["cassettes/interleaved.jsonl"])}
GOOD = CASES["interleaved"]


def output(events: list[dict[str, Any]], error: str | None = None) -> Result:
    lines = [json.dumps(event) for event in events]
    if error is not None:
        lines.append(json.dumps({"type": "error", "message": error}))
    return read_output("\n".join(lines).encode())


def kind_of(case: Case, got: Result, good: Result | None = None) -> tuple[str | None, str]:
    finding = classify(judge(case, got), good)
    return finding.kind, finding.detail


def texts_changed(change: Any) -> list[dict[str, Any]]:
    """The good stream's events with its text events changed by `change(list) -> list`."""
    events = GOOD.expected.events
    texts = [event for event in events if event["type"] == "text"]
    rest = [event for event in events if event["type"] != "text"]
    return list(change(texts)) + rest


def test_a_variant_given_what_the_good_stream_gives_is_accepted_silently() -> None:
    case = CASES["interleaved.drop_message_start"]
    assert kind_of(case, GOOD.expected, GOOD.expected) == (ACCEPTED_SILENTLY, "")


def test_a_library_cassette_accepted_gives_the_expected_events_then_more() -> None:
    """No good stream to compare: the events up to the expected failure must agree."""
    (case,) = collect_cases(["cassettes/errors/missing_message_start.jsonl"])
    assert case.expected.events == []
    accepted = output([{"type": "text", "text": "Hi"}, {"type": "done"}])
    assert kind_of(case, accepted) == (ACCEPTED_SILENTLY, "")


def test_the_good_streams_own_output_is_the_reference_for_accepted_silently() -> None:
    """What the command gave on the good stream (wrong there too) is what it accepts."""
    own = output(GOOD.expected.events[1:])
    case = CASES["interleaved.event_after_message_stop"]
    assert kind_of(case, own, own)[0] == ACCEPTED_SILENTLY
    assert kind_of(case, own, GOOD.expected)[0] == WRONG_DATA


@pytest.mark.parametrize(
    ("events", "detail"),
    [
        (texts_changed(lambda texts: texts[1:]), "text lost"),
        (texts_changed(lambda texts: [texts[0], *texts]), "text repeated"),
        (
            texts_changed(
                lambda texts: [{"type": "text", "text": "".join(t["text"] for t in texts)}]
            ),
            "text merged",
        ),
        (
            texts_changed(lambda texts: [{"type": "text", "text": "other"}, *texts[1:]]),
            "text changed",
        ),
        ([e for e in GOOD.expected.events if e["type"] != "tool_call"][:-1], "text"),
    ],
    ids=["lost", "repeated", "merged", "changed", "tool-calls-lost"],
)
def test_wrong_data_says_what_happened_to_the_text_and_the_calls(
    events: list[dict[str, Any]], detail: str
) -> None:
    kind, found = kind_of(GOOD, output([*events, {"type": "done"}]))
    assert kind == WRONG_DATA
    if detail == "text":
        assert found == "tool call lost"
    else:
        assert found.startswith(detail)


def test_another_error_is_failed_differently() -> None:
    case = CASES["interleaved.drop_stop_reason"]
    events = [event for event in GOOD.expected.events if event["type"] != "done"]
    got = output(events, "stream ended before message_stop")
    assert kind_of(case, got) == (FAILED_DIFFERENTLY, "")
    assert kind_of(GOOD, got) == (FAILED_DIFFERENTLY, "an error on a good stream")


def test_output_off_the_protocol_breaks_it_and_a_timeout_is_its_own_class() -> None:
    assert kind_of(GOOD, read_output(b"not json\n"))[0] == BROKE_THE_PROTOCOL
    timed_out = Result([], "", problem="timed out after 1 s")
    assert kind_of(GOOD, timed_out)[0] == TIMED_OUT_CLASS


def conform(*args: str) -> list[str]:
    return CliRunner().invoke(cli, ["conform", *args]).output.splitlines()


def test_a_crash_shows_the_first_error_lines_not_the_last_line_of_stderr() -> None:
    crash = (
        'import sys\nprint(\'{"type": "text", "text": "a"}\', flush=True)\n'
        "sys.stderr.write('TypeError: Cannot read properties of undefined\\n"
        "    at toModelEvents (model-events.js:40:12)\\n\\nNode.js v22.1.0\\n')\nsys.exit(1)"
    )
    lines = conform("cassettes/errors/missing_stop_reason.jsonl", "--", sys.executable, "-c", crash)
    assert lines[0].startswith(
        "missing_stop_reason: expected missing_stop_reason, got the output ended with neither "
        "done nor an error line (exit status 1), stderr: TypeError: Cannot read properties of "
        "undefined | at toModelEvents (model-events.js:40:12) | Node.js v22.1.0; crashed; "
    )
    assert lines[-2:] == [f"  {CRASHED_CLASS}  (the cassette itself)     1", "0/1 cases agree"]


ACCEPT_ALL = [sys.executable, "-c", 'import sys; sys.stdin.read(); print(\'{"type": "done"}\')']


@pytest.mark.slow
def test_each_line_gives_the_fault_in_words_and_the_summary_counts_by_class_and_fault() -> None:
    lines = conform("cassettes/text_only.jsonl", "--", *ACCEPT_ALL)
    drop = next(line for line in lines if line.startswith("text_only.drop_message_start:"))
    description = fault_named("drop_message_start").description
    assert f"; fault drop_message_start: {description}; trace: " in drop
    at = lines.index("By class and fault:")
    rows = [line.split() for line in lines[at + 1 : -1]]
    by_fault = {row[-2]: (" ".join(row[:-2]), int(row[-1])) for row in rows}
    assert by_fault["drop_message_start"] == (ACCEPTED_SILENTLY, 1)
    assert by_fault["itself)"] == ("wrong data (the cassette", 1)
    assert sum(count for _, count in by_fault.values()) == 10
    assert lines[-1].startswith("0/10 cases agree")


@pytest.mark.slow
def test_markdown_is_a_table_of_disagreements_then_one_by_class_then_the_count() -> None:
    lines = conform("--format", "markdown", "cassettes/text_only.jsonl", "--", *ACCEPT_ALL)
    assert lines[:2] == ["| case | expected | got | class | the fault |", "|---|---|---|---|---|"]
    assert (
        "| `text_only.drop_message_start` | `missing_message_start` | `done` | accepted "
        f"silently | fault drop_message_start: {fault_named('drop_message_start').description} |"
    ) in lines
    assert "| class | fault | cases |" in lines
    assert "| accepted silently | `drop_message_start` | 1 |" in lines
    assert lines[-1] == "**0/10 cases agree (4 wire-level cases skipped: --serve runs them)**"


@pytest.mark.slow
def test_json_rows_carry_the_fault_and_class_and_the_summary_counts_them() -> None:
    lines = conform("--format", "json", "cassettes/text_only.jsonl", "--", *ACCEPT_ALL)
    *rows, summary = [json.loads(line) for line in lines]
    drop = next(row for row in rows if row["case"] == "text_only.drop_message_start")
    assert (drop["fault"], drop["class"]) == ("drop_message_start", ACCEPTED_SILENTLY)
    by_class = summary["summary"]["by_class"]
    assert {"class": ACCEPTED_SILENTLY, "fault": "drop_message_start", "cases": 1} in by_class
    assert sum(row["cases"] for row in by_class) == summary["summary"]["disagree"] == 10


#: A `--serve` command whose base URL lacks `/v1`: it asks for POST /messages.
WRONG_PATH = (
    "import json, os, urllib.error, urllib.request\n"
    "request = urllib.request.Request(os.environ['ANTHROPIC_BASE_URL'] + '/messages',"
    " data=b'{}', headers={'x-harness-cassette': os.environ['HARNESS_CASSETTE']})\n"
    "try:\n    urllib.request.urlopen(request, timeout=30)\n"
    "except urllib.error.HTTPError as error:\n"
    "    print(json.dumps({'type': 'error', 'message': f'{error.code} Not Found'}))\n"
)


def test_a_request_that_reaches_no_cassette_names_the_path_it_asked_for() -> None:
    lines = conform(
        "--serve",
        "cassettes/errors/missing_stop_reason.jsonl",
        "--",
        sys.executable,
        "-c",
        WRONG_PATH,
    )
    assert (
        "; asked for POST /messages, which no cassette answers (the server answers POST "
        in (lines[0])
    )
    assert "/v1/messages: a base URL without /v1?); " in lines[0]


def test_the_report_writes_nothing_per_case_for_agreeing_cases() -> None:
    written: list[str] = []
    report = Report(written.append)
    report.add(judge(GOOD, GOOD.expected))
    report.finish(0)
    assert written == ["1/1 cases agree"]
