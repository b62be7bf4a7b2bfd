"""`harness proxy`'s options: an `--upstream` or `--out` that would fail every request
is one line and status 2 at the start, nothing started, the upstream's password never
shown."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from harness_cli import serve as serve_cli
from harness_cli.main import cli


@pytest.mark.parametrize(
    ("upstream", "said"),
    [
        ("ftp://127.0.0.1", "'ftp://127.0.0.1' is not an http(s) URL"),
        ("http://", "'http://' names no host"),
        ("http://127.0.0.1:99999", "'http://127.0.0.1:99999' is not a URL: Port out of range"),
        ("http://admin:PASSWORD1@127.0.0.1:99999/v1", "'http://127.0.0.1:99999/v1' is not a URL"),
        ("http://[::1", "'<unparsable URI>' is not a URL: Invalid IPv6 URL"),
    ],
)
def test_an_unusable_upstream_is_one_line_and_status_2(
    upstream: str, said: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    started: list[Any] = []
    monkeypatch.setattr(serve_cli, "_run", lambda *run: started.append(run))
    result = CliRunner().invoke(cli, ["proxy", "--upstream", upstream, "--out", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert result.output.startswith(f"harness proxy: --upstream {said}")
    assert result.output.count("\n") == 1 and "PASSWORD1" not in result.output
    assert started == []


def test_an_out_that_is_a_file_is_one_line_and_status_2(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    started: list[Any] = []
    monkeypatch.setattr(serve_cli, "_run", lambda *run: started.append(run))
    a_file = tmp_path / "a_file"
    a_file.write_text("kept\n")
    command = ["proxy", "--upstream", "http://127.0.0.1:9", "--out", str(a_file)]
    result = CliRunner().invoke(cli, command)
    assert (result.exit_code, result.output) == (
        2,
        f"harness proxy: --out {str(a_file)!r} is a file, not a folder\n",
    )
    assert started == [] and a_file.read_text() == "kept\n"
