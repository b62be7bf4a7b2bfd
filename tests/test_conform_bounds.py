"""`harness conform` stays bounded whatever the command does: a flood of output, an
endless line, a flood on standard error, a descendant that leaves the process group and
holds the pipes open. Each ends as that case's failure, and the run goes on.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness._testing.bounded import MAX_OUTPUT_BYTES, MAX_OUTPUT_LINE_BYTES, MAX_STDERR_BYTES
from harness._testing.conform import Case, Result, collect_cases, run_case
from harness_cli.main import cli

TEXT_ONLY = collect_cases(["cassettes/text_only.jsonl"])[0]
#: Far above any case here: only a run that never ends would reach it.
NEVER = 120.0


def python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def run_bounded(case: Case, command: list[str], timeout: float) -> Result:
    """`run_case`, in a thread, so that a regression fails the test instead of hanging it."""
    pool = ThreadPoolExecutor(max_workers=1)
    try:
        return pool.submit(run_case, case, command, timeout=timeout).result(timeout=NEVER)
    finally:
        pool.shutdown(wait=False)


@pytest.mark.slow
def test_a_flood_of_output_is_the_cases_failure_at_the_cap() -> None:
    flood = python(
        'import sys\nline = b\'{"type": "text", "text": "x"}\\n\' * 1000\n'
        "while True: sys.stdout.buffer.write(line)"
    )
    got = run_bounded(TEXT_ONLY, flood, NEVER)
    assert got.problem == f"the output went past {MAX_OUTPUT_BYTES} bytes, the limit"
    assert got.events[0] == {"type": "text", "text": "x"}


def test_a_line_without_end_is_the_cases_failure_at_the_line_cap() -> None:
    endless = python(
        'import sys\nsys.stdout.write(\'{"type": "done"}\\n\')\n'
        "while True: sys.stdout.write('x' * 65536)"
    )
    got = run_bounded(TEXT_ONLY, endless, NEVER)
    assert got.problem == (
        f"line 2 of the output is longer than {MAX_OUTPUT_LINE_BYTES} bytes, the limit"
    )


def test_a_flood_on_standard_error_is_the_cases_failure_at_its_cap() -> None:
    noisy = python("import sys\nwhile True: sys.stderr.write('warning: ' * 8192)")
    got = run_bounded(TEXT_ONLY, noisy, NEVER)
    assert got.problem == f"standard error went past {MAX_STDERR_BYTES} bytes, the limit"


def test_a_command_that_never_reads_its_input_is_still_judged() -> None:
    big = Case("big", ([{"type": "ping"}] * 100_000,), TEXT_ONLY.expected, "big")
    deaf = python('print(\'{"type": "done"}\')')
    got = run_bounded(big, deaf, NEVER)
    assert (got.outcome, got.problem) == ("done", None)


@pytest.fixture
def pid_file(tmp_path: Path) -> Iterator[Path]:
    """Where the runaway descendant writes its pid; it is killed after the test."""
    path = tmp_path / "descendant.pid"
    yield path
    if path.exists():
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(path.read_text()), signal.SIGKILL)


def runaway(pid_file: Path, then: str) -> list[str]:
    """A command that starts a process in a session of its own holding its pipes open."""
    return python(
        "import subprocess, sys\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'],"
        " start_new_session=True)\n"
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
        'print(\'{"type": "done"}\', flush=True)\n' + then
    )


@pytest.mark.slow
def test_a_descendant_holding_the_pipes_after_the_command_exits_ends_at_the_timeout(
    pid_file: Path,
) -> None:
    got = run_bounded(TEXT_ONLY, runaway(pid_file, ""), 1.0)
    assert got.problem == (
        "timed out after 1 s: the command exited, but a process it started kept its output open"
    )
    assert got.events == [{"type": "done"}]
    assert pid_file.exists()


@pytest.mark.slow
def test_a_hanging_command_whose_descendant_left_the_group_ends_at_the_timeout(
    pid_file: Path,
) -> None:
    got = run_bounded(TEXT_ONLY, runaway(pid_file, "import time; time.sleep(300)"), 1.0)
    assert got.problem == "timed out after 1 s"
    assert pid_file.exists()


@pytest.mark.slow  # a child process writing 16 MiB
def test_the_run_reports_a_flood_as_one_disagreement_and_goes_on() -> None:
    """The cap, never the timeout, ends the case however loaded the machine: each line of
    the flood is an event `{}` padded to 64 KiB, so the cap comes after 256 lines, not the
    5.6 million of a bare `{}` a line (5 s to read on an idle machine, past the 10 s
    default timeout on a loaded one), and the case's timeout is `NEVER`'s."""
    flood = python(
        "import sys\nline = '{' + ' ' * 65533 + '}\\n'\nwhile True: sys.stdout.write(line)"
    )
    command = ["conform", "--timeout", str(NEVER), "cassettes/errors/missing_stop_reason.jsonl"]
    result = CliRunner().invoke(cli, [*command, "--", *flood])
    lines = result.output.splitlines()
    first, last = lines[0], lines[-1]
    assert first.startswith(
        "missing_stop_reason: expected missing_stop_reason, got the output went past "
        f"{MAX_OUTPUT_BYTES} bytes, the limit"
    )
    assert last == "0/1 cases agree"
    assert result.exit_code == 1
