"""`harness conform --persistent`: one process of the command handles case after case,
each ended by the separator line both ways; a case that ends without it costs the
process, and the next case gets a fresh one."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from conftest import EXAMPLES, LIBRARY

from harness._testing.conform import collect_cases, judge, read_output, run_cases
from harness._testing.findings import CRASHED_CLASS, classify
from harness._testing.persistent import SEPARATOR, SEPARATOR_LINE
from harness_cli.main import cli

PYTHON_WRAPPER = [sys.executable, str(EXAMPLES / "python" / "conform_stdin.py")]
SERVE_WRAPPER = [sys.executable, str(EXAMPLES / "python" / "conform_serve.py")]


def conform(*args: str) -> Result:
    return CliRunner().invoke(cli, ["conform", *args])


def test_the_separator_is_one_json_line() -> None:
    assert json.loads(SEPARATOR_LINE) == SEPARATOR == {"harness": "case_end"}


def test_one_process_agrees_on_a_cassette_and_its_variants(tmp_path: Path) -> None:
    starts = tmp_path / "starts"
    counting = [
        sys.executable,
        "-c",
        f"import runpy; open({str(starts)!r}, 'a').write('x')\n"
        f"runpy.run_path({str(EXAMPLES / 'python' / 'conform_stdin.py')!r})",
    ]
    result = conform("--persistent", "cassettes/interleaved.jsonl", "--", *counting)
    assert result.output.splitlines()[-1].startswith("18/18 cases agree")
    assert result.exit_code == 0
    assert starts.read_text() == "x"


#: Answers `done` to every case, and dies on the second case of each of its processes.
DIES_ON_ITS_SECOND_CASE = """
import json, sys
handled = 0
for line in sys.stdin:
    if json.loads(line) != {"harness": "case_end"}:
        continue
    handled += 1
    if handled == 2:
        sys.stderr.write("RuntimeError: the second case\\n")
        sys.exit(3)
    print(json.dumps({"type": "done"}))
    print(json.dumps({"harness": "case_end"}), flush=True)
"""


@pytest.mark.slow
def test_a_crash_costs_its_case_only_and_the_next_case_gets_a_fresh_process() -> None:
    cases = collect_cases(["cassettes/text_only.jsonl"])
    command = [sys.executable, "-c", DIES_ON_ITS_SECOND_CASE]
    verdicts = list(run_cases(cases, command, persistent=True, timeout=60))
    crashed = [classify(verdict).kind == CRASHED_CLASS for verdict in verdicts]
    assert crashed == [False, True] * 5
    assert verdicts[1].got.problem == (
        "the output ended with neither done nor an error line (exit status 3)"
    )
    assert verdicts[1].got.stderr == ("RuntimeError: the second case",)
    assert all(verdict.got.outcome == "done" for verdict in verdicts[::2])


@pytest.mark.slow
def test_a_command_that_never_ends_a_case_times_out_case_by_case() -> None:
    one_shot = [sys.executable, "-c", "import sys; sys.stdin.read()"]
    result = conform(
        "--persistent",
        "--timeout",
        "0.5",
        "cassettes/errors/missing_stop_reason.jsonl",
        "--",
        *one_shot,
    )
    assert result.output.splitlines()[0].startswith(
        "missing_stop_reason: expected missing_stop_reason, got timed out after 0.5 s; timed out"
    )
    assert result.exit_code == 1


@pytest.mark.slow
def test_the_harness_adapter_agrees_on_every_default_case_in_one_process_a_job() -> None:
    result = conform("--persistent", "-j", "2", "--", *PYTHON_WRAPPER)
    assert result.output.splitlines() == [
        "239/239 cases agree (60 wire-level cases skipped: --serve runs them)"
    ]


@pytest.mark.slow
def test_serve_hands_each_persistent_process_its_cases_in_turn_sessions_included() -> None:
    result = conform(
        "--serve",
        "--persistent",
        "--timeout",
        "120",
        "cassettes/text_only.jsonl",
        "--",
        *SERVE_WRAPPER,
    )
    assert result.output.splitlines() == ["14/14 cases agree"]


def test_the_case_shown_whole_in_the_docs_is_the_cases_own_exchange() -> None:
    """docs/conform.md's `--persistent` case: its input and an agreeing output, separators
    included, are what the harness sends and reads."""
    text = (LIBRARY.parent / "docs" / "conform.md").read_text()
    shown = text.split("One case whole, `errors/missing_stop_reason`", 1)[1]
    blocks = re.findall(r"\n\n((?:    .*\n)+)", shown)[:2]
    stdin, stdout = ([json.loads(line[4:]) for line in block.splitlines()] for block in blocks)
    (case,) = collect_cases(["cassettes/errors/missing_stop_reason.jsonl"])
    assert stdin == [*case.events, SEPARATOR]
    assert stdout[-1] == SEPARATOR
    got = read_output(b"\n".join(json.dumps(line).encode() for line in stdout[:-1]))
    assert judge(case, got).agree
