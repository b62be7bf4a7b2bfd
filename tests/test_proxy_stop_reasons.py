"""`harness proxy --strict --allow-stop-reasons`: the stop reasons that complete a message,
from the command line to the guard, for streams and `Message`s alike; a bad value is one
line and status 2, before anything listens."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from click.testing import CliRunner
from conftest import LIBRARY

from harness._http.hosting import ServerThread
from harness._http.server import CassetteServer
from harness_cli import serve as serve_cli
from harness_cli.main import cli

REQUEST: dict[str, Any] = {"model": "m", "max_tokens": 64, "messages": []}
#: A good answer but for its stop reason, `max_tokens`.
CUT_BY_MAX_TOKENS = "errors/unsupported_stop_reason"


@contextmanager
def _proxy(monkeypatch: pytest.MonkeyPatch, out: Path, *options: str) -> Iterator[str]:
    """The proxy `harness proxy OPTIONS` makes, served in front of the cassette library."""
    made: list[Any] = []
    monkeypatch.setattr(serve_cli, "_run", lambda *run: made.append(run))
    with ServerThread(CassetteServer([str(LIBRARY)], match_on=None).app()) as upstream:
        command = ["proxy", "--upstream", upstream, "--out", str(out), *options]
        result = CliRunner().invoke(cli, command)
        assert result.exit_code == 0, result.output
        [(_, app, _, _, log, _)] = made
        try:
            with ServerThread(app) as url:
                yield url
        finally:
            log.close()


def _answer(url: str, cassette: str, *, stream: bool) -> tuple[int, str]:
    """The proxy's status and body for a Messages call answered from `cassette`."""
    response = httpx2.post(
        f"{url}/v1/messages",
        json={**REQUEST, "stream": stream},
        headers={"x-harness-cassette": cassette, "x-api-key": "sk-any"},
        timeout=30,
    )
    return response.status_code, response.text


def _last_event(body: str) -> dict[str, Any]:
    """The data of a streamed answer's last SSE event."""
    data = [line.removeprefix("data: ") for line in body.splitlines() if line.startswith("data:")]
    last: dict[str, Any] = json.loads(data[-1])
    return last


@pytest.mark.parametrize(
    ("options", "passes"),
    [
        ((), False),
        (("--allow-stop-reasons", "max_tokens"), True),
        (("--allow-stop-reasons", "stop_sequence,max_tokens"), True),
        (("--allow-stop-reasons", "stop_sequence"), False),
    ],
    ids=["default", "max_tokens", "two-names", "another-name"],
)
@pytest.mark.slow
def test_the_allowed_stop_reasons_complete_a_stream_and_a_message(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, options: tuple[str, ...], passes: bool
) -> None:
    with _proxy(monkeypatch, tmp_path, "--strict", *options) as url:
        status, body = _answer(url, CUT_BY_MAX_TOKENS, stream=True)
        assert status == 200
        last = _last_event(body)
        if passes:
            assert last == {"type": "message_stop"}
        else:
            assert last["error"]["code"] == "unsupported_stop_reason"
        status, body = _answer(url, CUT_BY_MAX_TOKENS, stream=False)
        assert status == (200 if passes else 502)
        assert json.loads(body)["stop_reason" if passes else "type"] == (
            "max_tokens" if passes else "error"
        )
        # the default still completes a message: a tool call's answer passes as before
        status, body = _answer(url, "two_tools", stream=True)
        assert (status, _last_event(body)) == (200, {"type": "message_stop"})


@pytest.mark.parametrize(
    ("options", "line"),
    [
        (
            ("--strict", "--allow-stop-reasons", ""),
            "no stop reason given: name them separated by commas, as max_tokens or length",
        ),
        (
            ("--strict", "--allow-stop-reasons", "max_tokens,"),
            "'max_tokens,' holds an empty stop reason: separate the names by single commas, "
            "as max_tokens,stop_sequence",
        ),
        (
            ("--strict", "--allow-stop-reasons", "max_tokens,,refusal"),
            "'max_tokens,,refusal' holds an empty stop reason: separate the names by single "
            "commas, as max_tokens,stop_sequence",
        ),
        (
            ("--strict", "--allow-stop-reasons", "max_tokens;refusal"),
            "'max_tokens;refusal' is not a stop reason: one is lower-case letters and "
            "underscores, as max_tokens or length",
        ),
        (
            ("--strict", "--allow-stop-reasons", "Max-Tokens"),
            "'Max-Tokens' is not a stop reason: one is lower-case letters and underscores, "
            "as max_tokens or length",
        ),
    ],
    ids=["empty", "trailing-comma", "empty-item", "semicolon", "not-a-name"],
)
def test_a_bad_list_is_one_line_and_status_2(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, options: tuple[str, ...], line: str
) -> None:
    started: list[Any] = []
    monkeypatch.setattr(serve_cli, "_run", lambda *run: started.append(run))
    command = ["proxy", "--upstream", "http://127.0.0.1:9", "--out", str(tmp_path), *options]
    result = CliRunner().invoke(cli, command)
    assert (result.exit_code, result.output) == (
        2,
        f"harness proxy: --allow-stop-reasons: {line}\n",
    )
    assert started == []


def test_allowing_stop_reasons_without_strict_is_one_line_and_status_2(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    started: list[Any] = []
    monkeypatch.setattr(serve_cli, "_run", lambda *run: started.append(run))
    command = ["proxy", "--upstream", "http://127.0.0.1:9", "--out", str(tmp_path)]
    result = CliRunner().invoke(cli, [*command, "--allow-stop-reasons", "max_tokens"])
    assert (result.exit_code, result.output) == (
        2,
        "harness proxy: --allow-stop-reasons needs --strict: without it no answer is checked\n",
    )
    assert started == []
