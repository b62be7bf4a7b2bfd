"""Cassettes from standard input, pipes, FIFOs and devices: read once, lines bounded."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import LIBRARY

from harness import Cassette, CassetteError
from harness._cassette.codec import MAX_LINE_BYTES
from harness._replay.direct import replay_outcome
from harness_cli.main import cli

GOOD = LIBRARY / "interleaved.jsonl"
HARNESS = [sys.executable, "-c", "from harness_cli.main import main; main()"]


def expected_replay() -> str:
    return CliRunner().invoke(cli, ["replay", str(GOOD)]).stdout


def test_dash_reads_standard_input() -> None:
    result = CliRunner().invoke(cli, ["replay", "-"], input=GOOD.read_bytes())
    assert result.exit_code == 0, result.output
    assert result.stdout == expected_replay()


def test_a_bad_line_from_standard_input_is_named_stdin() -> None:
    result = CliRunner().invoke(cli, ["validate", "-"], input=b'{"type": "ping"}\n{"type":\n')
    assert result.exit_code == 2
    assert result.stderr.startswith("<stdin>:2: not valid JSON")


@pytest.mark.parametrize("path", ["-", "/dev/stdin"])
@pytest.mark.slow
def test_a_pipe_is_read_once_and_validates_like_the_file(path: str) -> None:
    done = subprocess.run(
        [*HARNESS, "validate", path], input=GOOD.read_bytes(), capture_output=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    name = "<stdin>" if path == "-" else path
    assert done.stdout.decode() == f"{name}: ok, 16 events\n"


@pytest.mark.slow
def test_a_pipe_through_dev_stdin_replays_like_the_file() -> None:
    done = subprocess.run(
        [*HARNESS, "replay", "/dev/stdin"],
        input=GOOD.read_bytes(),
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode() == expected_replay()


def test_faults_from_a_pipe_reads_the_stream_twice_from_one_read(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli, ["faults", "-", "--out", str(tmp_path)], input=GOOD.read_bytes()
    )
    assert result.exit_code == 0, result.output
    assert sorted(tmp_path.glob("stdin.*.jsonl"))


def test_a_named_fifo_is_read_once(tmp_path: Path) -> None:
    fifo = tmp_path / "cassette.fifo"
    os.mkfifo(fifo)

    def feed() -> None:
        with open(fifo, "wb") as writer:
            writer.write(GOOD.read_bytes())

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    result = CliRunner().invoke(cli, ["replay", str(fifo)])
    writer.join(timeout=10)
    assert result.exit_code == 0, result.output
    assert result.stdout == expected_replay()


def test_a_stream_cassette_serves_several_passes(tmp_path: Path) -> None:
    read, write = os.pipe()
    with os.fdopen(write, "wb") as writer:
        writer.write(GOOD.read_bytes())
    cassette = Cassette(f"/dev/fd/{read}")
    try:
        assert list(cassette.events()) == list(Cassette(GOOD).events())
        assert replay_outcome(cassette) == replay_outcome(GOOD)
    finally:
        os.close(read)


def test_a_line_longer_than_the_limit_is_refused_with_path_and_line(tmp_path: Path) -> None:
    long = tmp_path / "long.jsonl"
    with long.open("wb") as handle:
        handle.write(GOOD.read_bytes().splitlines(keepends=True)[0])
        handle.write(b" " * (MAX_LINE_BYTES + 1))
    with pytest.raises(CassetteError) as caught:
        Cassette(long).validate()
    assert str(caught.value) == f"{long}:2: line longer than {MAX_LINE_BYTES} bytes, the limit"


def test_a_line_of_exactly_the_limit_is_read(tmp_path: Path) -> None:
    line = b'{"type": "ping", "pad": "'
    line += b"x" * (MAX_LINE_BYTES - len(line) - 2) + b'"}'
    assert len(line) == MAX_LINE_BYTES
    exact = tmp_path / "exact.jsonl"
    exact.write_bytes(line + b"\n")
    assert Cassette(exact).validate() == 1


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
@pytest.mark.parametrize("command", ["replay", "validate"])
@pytest.mark.slow
def test_dev_zero_ends_at_once_with_one_line(command: str) -> None:
    done = subprocess.run([*HARNESS, command, "/dev/zero"], capture_output=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.decode() == (
        f"/dev/zero:1: line longer than {MAX_LINE_BYTES} bytes, the limit\n"
    )
