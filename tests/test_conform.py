"""`harness conform`: the cases, their expected outcomes, the output protocol and the verdicts.

The harness's own adapter behind the protocol (examples/python/conform_stdin.py) agrees on
every default case; the expected outcomes, computed without the SDK, equal what replay
through the SDK's event objects gives.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from conftest import EXAMPLES, LIBRARY

from harness._exceptions import ERROR_TABLE
from harness._replay.direct import replay_outcome
from harness._testing.conform import (
    UNRECOGNISED,
    Case,
    collect_cases,
    judge,
    read_output,
    run_case,
    write_case,
)
from harness._testing.coverage import outcome_code
from harness.faults import CATALOGUE, fault_named
from harness_cli.main import cli

PYTHON_WRAPPER = [sys.executable, str(EXAMPLES / "python" / "conform_stdin.py")]
SERVE_WRAPPER = [sys.executable, str(EXAMPLES / "python" / "conform_serve.py")]
#: A command that accepts every stream: it prints `done` whatever it reads.
ACCEPT_ALL = [sys.executable, "-c", 'import sys; sys.stdin.read(); print(\'{"type": "done"}\')']

CASES = collect_cases()


def conform(*args: str) -> Result:
    return CliRunner().invoke(cli, ["conform", *args])


def named(name: str) -> Case:
    return next(case for case in CASES if case.name == name)


def test_the_default_cases_are_the_library_and_every_variant_of_its_good_cassettes() -> None:
    files = sorted(LIBRARY.glob("*.jsonl")) + sorted(LIBRARY.glob("errors/*.jsonl"))
    files += sorted(LIBRARY.glob("sessions/*/turn-*.jsonl"))
    singles = [case for case in CASES if case.fault is None]
    assert sorted(Path(case.source) for case in singles) == sorted(files)
    good = [case for case in singles if case.expected.outcome == "done"]
    variants = [case for case in CASES if case.fault is not None]
    assert {case.source for case in variants} == {case.source for case in good}
    assert named("interleaved.drop_message_start").expected.outcome == "missing_message_start"
    assert named("errors/missing_stop_reason").expected.outcome == "missing_stop_reason"


def test_wire_cases_are_the_wire_rows_of_the_catalogue() -> None:
    wire_rows = {fault.name for fault in CATALOGUE if fault.wire}
    assert {case.fault for case in CASES if case.wire} == wire_rows


@pytest.mark.parametrize("case", [case for case in CASES if not case.wire], ids=lambda c: c.name)
def test_expected_outcomes_equal_replay_through_the_sdk_objects(case: Case, tmp_path: Path) -> None:
    outcome = replay_outcome(write_case(case, tmp_path))
    expected = [line for line in outcome.to_json_lines() if "error_type" not in line]
    expected = [line for line in expected if line["type"] != "protocol_error"]
    assert case.expected.events == expected
    assert case.expected.outcome == outcome_code(outcome)


def test_every_variant_expects_its_fault_rows_outcome() -> None:
    for case in CASES:
        if case.fault is not None:
            assert case.expected.outcome == fault_named(case.fault).expect, case.name


@pytest.mark.slow
def test_the_harness_adapter_behind_the_protocol_agrees_on_every_default_case() -> None:
    result = conform("-j", "2", "--", *PYTHON_WRAPPER)
    stdin_cases = sum(not case.wire for case in CASES)
    wire_cases = len(CASES) - stdin_cases
    assert result.output.splitlines() == [
        f"{stdin_cases}/{stdin_cases} cases agree "
        f"({wire_cases} wire-level cases skipped: --serve runs them)"
    ]
    assert result.exit_code == 0


@pytest.mark.slow
def test_the_harness_adapter_agrees_on_one_cassette_and_its_variants() -> None:
    result = conform("cassettes/interleaved.jsonl", "--", *PYTHON_WRAPPER)
    assert result.output.splitlines()[-1].startswith("18/18 cases agree")
    assert result.exit_code == 0


@pytest.mark.slow
def test_serve_runs_the_wire_cases_through_the_sdks_client() -> None:
    # Two Pythons that import the SDK, each handed its cases in turn (a process a case is
    # the TypeScript wrapper's test, tests/test_conform_typescript.py: a Python importing
    # the SDK for each case costs seconds of CPU). The per-case limit is far above what a
    # case needs on a loaded machine; a hang still ends the run.
    result = conform(
        "--serve",
        "--persistent",
        "-j",
        "2",
        "--timeout",
        "120",
        "cassettes/text_only.jsonl",
        "--",
        *SERVE_WRAPPER,
    )
    assert result.output.splitlines() == ["14/14 cases agree"]
    assert result.exit_code == 0


# -- reading the output --------------------------------------------------------------------


def test_an_error_line_maps_to_its_code_by_the_tables_pattern() -> None:
    got = read_output(
        b'{"type": "text", "text": "a"}\n{"type": "error", "message": '
        b'"stream ended before message_stop"}\n'
    )
    assert (got.events, got.outcome, got.problem) == (
        [{"type": "text", "text": "a"}],
        "missing_message_stop",
        None,
    )


def test_an_api_error_line_names_its_type() -> None:
    got = read_output(
        b'{"type": "error", "message": "Overloaded", "error_type": "overloaded_error"}'
    )
    assert got.outcome == "api_error:overloaded_error"


@pytest.mark.parametrize(
    ("stdout", "problem"),
    [
        (b'{"type": "done"}\nnot json\n', "line 2 is not a JSON object: not json"),
        (b'{"type": "error", "message": "x"}\n{"type": "done"}\n', "line 2 follows the error"),
        (b'{"type": "text", "text": "a"}\n', "the output ended with neither done nor an error"),
    ],
)
def test_output_off_the_protocol_is_a_problem(stdout: bytes, problem: str) -> None:
    got = read_output(stdout)
    assert got.problem is not None and got.problem.startswith(problem)


def test_an_unknown_message_is_unrecognised_and_agrees_only_with_a_connection_error() -> None:
    got = read_output(b'{"type": "error", "message": "TypeError: x is undefined"}')
    assert got.outcome == UNRECOGNISED
    assert not judge(named("errors/missing_stop_reason"), got).agree
    cut = next(case for case in CASES if case.fault == "cut_mid_event")
    got_cut = read_output(
        b"".join(json.dumps(event).encode() + b"\n" for event in cut.expected.events)
        + b'{"type": "error", "message": "terminated"}\n'
    )
    assert judge(cut, got_cut).agree


def test_a_command_that_outlives_the_timeout_is_killed() -> None:
    sleeper = [sys.executable, "-c", "import time; time.sleep(30)"]
    got = run_case(named("text_only"), sleeper, timeout=0.2)
    assert got.problem == "timed out after 0.2 s"


# -- the command line ----------------------------------------------------------------------


def test_each_disagreement_is_one_line_with_the_first_difference_and_a_trace() -> None:
    result = conform("cassettes/errors/missing_stop_reason.jsonl", "--", *ACCEPT_ALL)
    lines = result.output.splitlines()
    assert lines == [
        "missing_stop_reason: expected missing_stop_reason, got done; wrong data: text lost, "
        'and the broken stream accepted; event 1: expected {"type":"text","text":"Hello."}, '
        'got {"type":"done"}; cassette: message_delta carries stop_reason null and no other '
        "arrives: missing_stop_reason at the end.; trace: harness replay --trace "
        "cassettes/errors/missing_stop_reason.jsonl",
        "By class and fault:",
        "  wrong data  (the cassette itself)     1",
        "0/1 cases agree",
    ]
    assert result.exit_code == 1


@pytest.mark.slow
def test_keep_writes_the_disagreeing_variants_for_their_trace(tmp_path: Path) -> None:
    keep = tmp_path / "kept"
    result = conform("--keep", str(keep), "cassettes/text_only.jsonl", "--", *ACCEPT_ALL)
    first = result.output.splitlines()[0]
    assert first.startswith("text_only: expected done, got done; wrong data: text lost; event 1:")
    assert result.exit_code == 1
    line = next(line for line in result.output.splitlines() if "drop_message_start" in line)
    path = keep / "text_only.drop_message_start.jsonl"
    assert line.endswith(f"trace: harness replay --trace {path}")
    assert outcome_code(replay_outcome(path)) == "missing_message_start"


@pytest.mark.slow
def test_json_format_is_an_object_a_case_then_a_summary() -> None:
    result = conform("--format", "json", "cassettes/text_only.jsonl", "--", *PYTHON_WRAPPER)
    lines = [json.loads(line) for line in result.output.splitlines()]
    *cases, summary = lines
    fields = {"case", "expected", "got", "agree", "fault", "class", "detail", "description"}
    fields |= {"difference", "trace"}
    assert all(set(line) == fields for line in cases)
    assert all(line["agree"] and line["class"] is None for line in cases)
    drop = next(line for line in cases if line["case"] == "text_only.drop_message_start")
    assert drop["fault"] == "drop_message_start"
    assert drop["description"] == fault_named("drop_message_start").description
    assert summary == {
        "summary": {"cases": 10, "agree": 10, "disagree": 0, "skipped": 4, "by_class": []}
    }


def test_list_prints_every_case_and_the_error_table_as_one_document() -> None:
    result = conform("--list")
    document: dict[str, Any] = json.loads(result.output)
    assert [row["code"] for row in document["error_table"]] == list(ERROR_TABLE)
    for row in document["error_table"]:
        fields = {
            "index": 3,
            "indexes": "1, 3",
            "count": 2,
            "stop_reason": "x",
            "event_type": "ping",
        }
        assert re.match(row["pattern"], row["template"].format(**fields))
    assert [case["case"] for case in document["cases"]] == [case.name for case in CASES]
    listed = {case["case"]: case for case in document["cases"]}
    drop = listed["interleaved.drop_message_start"]
    assert drop["expected"]["outcome"] == "missing_message_start"
    assert drop["events"][0]["type"] == "content_block_start"
    assert "responses" in listed["interleaved.http_429_then_ok"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "harness conform: give the command to judge after --"),
        (("--", "no-such-command-here"), "harness conform: no-such-command-here: command not"),
        (("missing.jsonl", "--", "true"), "harness conform: missing.jsonl: no such file"),
        (("docs", "--", "true"), "harness conform: docs: no cassettes (*.jsonl) in the folder"),
    ],
)
def test_unusable_input_is_one_line_and_exit_2(args: tuple[str, ...], message: str) -> None:
    result = conform(*args)
    assert result.output.startswith(message)
    assert len(result.output.splitlines()) == 1
    assert result.exit_code == 2


@pytest.mark.slow
def test_conform_does_not_import_the_sdk() -> None:
    import subprocess

    code = (
        "import sys\nfrom harness_cli.main import cli\n"
        "try:\n    cli.main(['conform', '--list'], standalone_mode=False)\n"
        "finally:\n    print('anthropic' in sys.modules, file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stderr.strip() == "False"


def test_the_case_shown_whole_in_the_docs_is_the_cases_own_input_and_output() -> None:
    """docs/conform.md shows one case's stdin and an agreeing stdout: they must not drift."""
    text = (LIBRARY.parent / "docs" / "conform.md").read_text()
    shown = text.split("One case whole, `text_only.tool_use_without_tools`", 1)[1]
    blocks = re.findall(r"\n\n((?:    .*\n)+)", shown)[:2]
    stdin, stdout = ([line[4:] for line in block.splitlines()] for block in blocks)
    case = named("text_only.tool_use_without_tools")
    assert [json.loads(line) for line in stdin] == case.events
    got = read_output("\n".join(stdout).encode())
    assert judge(case, got).agree


def test_the_case_counts_the_docs_give_are_the_librarys() -> None:
    """A new cassette changes them: docs/conform.md, the README and the serve figures
    (docs/conform.md's last block, measured) are updated with it."""
    text = " ".join((LIBRARY.parent / "docs" / "conform.md").read_text().split())
    stdin = sum(not case.wire for case in CASES)
    singles = sum(case.fault is None for case in CASES)
    assert f"{len(CASES)} cases, of which {stdin} go through standard input" in text
    assert f"and {len(CASES) - stdin} only over HTTP" in text
    assert f"each turn of the agent sessions, {singles} cassettes" in text
    readme = (LIBRARY.parent / "README.md").read_text()
    assert f"# {stdin}/{stdin} cases agree" in readme
