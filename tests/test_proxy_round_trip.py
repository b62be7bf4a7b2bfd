"""client → `harness proxy` → `harness serve`: every library cassette comes back out the same.

The proxy records what serve answers; the recording must hold the same events (the
directives aside), and the client must see the outcome direct replay gives.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import pytest
from conftest import LIBRARY, library_cassettes

from harness._cassette.codec import Cassette
from harness._http.hosting import ServerThread
from harness._http.proxy import RecordingProxy
from harness._http.server import CassetteServer
from harness._providers.anthropic.adapter import to_model_events
from harness._replay.direct import Outcome, collect, replay_outcome

REQUEST: dict[str, Any] = {
    "model": "claude-harness-test",
    "max_tokens": 64,
    "messages": [{"role": "user", "content": "round trip"}],
}
CASSETTES = [str(path) for path in library_cassettes()]
OVERLOADED = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
HTTP_ERROR = {
    "harness": "http_error",
    "status": 529,
    "headers": {"retry-after-ms": "1", "x-should-retry": "true"},
    "body": OVERLOADED,
}


def _name(path: str) -> str:
    return str(Path(path).relative_to(LIBRARY))


@pytest.fixture(scope="module")
def chain(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, RecordingProxy]]:
    """serve (the library and two fault cassettes) behind a recording proxy."""
    faults = tmp_path_factory.mktemp("faults")
    (faults / "overloaded.jsonl").write_text(json.dumps(HTTP_ERROR) + "\n")
    text_only = (LIBRARY / "text_only.jsonl").read_text().splitlines()
    cut = [*text_only[:5], json.dumps({"harness": "cut", "after_bytes": 7}), *text_only[5:]]
    (faults / "cut.jsonl").write_text("\n".join(cut) + "\n")
    serve = CassetteServer([str(LIBRARY), str(faults)], match_on=None)
    proxy = RecordingProxy("http://placeholder", tmp_path_factory.mktemp("recorded"))
    with ServerThread(serve.app()) as serve_url:
        proxy.upstream = serve_url
        with ServerThread(proxy.app()) as proxy_url:
            yield proxy_url, proxy


def _recorded(proxy: RecordingProxy, before: int) -> str:
    """The one recording made since `before`. A client that stops at an `error` event
    does not wait for the answer's end, so the recording may land just after it returns."""
    deadline = time.monotonic() + 30
    while len(proxy.written) == before and time.monotonic() < deadline:
        time.sleep(0.01)
    [recorded] = proxy.written[before:]
    return recorded


def _outcome(url: str, name: str) -> Outcome:
    headers = {"x-harness-cassette": name}
    with anthropic.Anthropic(base_url=url, api_key="sk-any", max_retries=0) as client:
        try:
            stream = client.messages.create(**REQUEST, stream=True, extra_headers=headers)
        except anthropic.APIStatusError as error:
            return Outcome(error=error)
        with stream:
            outcome = collect(to_model_events(stream))
            for _ in stream:  # read to the end: a client leaving early is not recorded
                pass
            return outcome


@pytest.mark.parametrize("path", CASSETTES, ids=_name)
def test_every_library_cassette_comes_back_out_of_the_proxy_the_same(
    chain: tuple[str, RecordingProxy], path: str
) -> None:
    url, proxy = chain
    before = len(proxy.written)
    outcome = _outcome(url, _name(path))
    assert outcome.to_json_lines() == replay_outcome(path).to_json_lines()
    recorded = _recorded(proxy, before)
    assert list(Cassette(recorded).events()) == list(Cassette(path).events())
    assert Cassette(recorded).header == {**(Cassette(recorded).header or {}), "request": REQUEST}


def test_an_http_error_comes_back_out_as_the_same_http_error_line(
    chain: tuple[str, RecordingProxy],
) -> None:
    url, proxy = chain
    before = len(proxy.written)
    outcome = _outcome(url, "overloaded")
    assert isinstance(outcome.error, anthropic.APIStatusError)
    assert outcome.error.status_code == 529
    directives = [line.data for line in Cassette(_recorded(proxy, before)).lines()]
    assert directives[-1] == HTTP_ERROR


def test_a_cut_comes_back_out_as_a_cut_after_the_whole_events(
    chain: tuple[str, RecordingProxy],
) -> None:
    url, proxy = chain
    before = len(proxy.written)
    failure = _outcome(url, "cut").to_json_lines()[-1]
    assert failure["type"] == "connection_error"
    assert failure["message"].startswith("peer closed connection without sending complete")
    lines = [line.data for line in Cassette(_recorded(proxy, before)).lines()]
    events = [line for line in lines if "type" in line]
    assert events == list(Cassette(LIBRARY / "text_only.jsonl").events())[:4]
    assert lines[-1] == {"harness": "cut"}


def test_a_non_streaming_call_comes_back_out_as_the_events_of_its_message(
    chain: tuple[str, RecordingProxy],
) -> None:
    url, proxy = chain
    before = len(proxy.written)
    headers = {"x-harness-cassette": "parallel_tools"}
    with anthropic.Anthropic(base_url=url, api_key="sk-any", max_retries=0) as client:
        message = client.messages.create(**REQUEST, extra_headers=headers)
    recorded = Cassette(_recorded(proxy, before))
    assert (recorded.header or {})["synthesized_from"] == "message"
    replayed = replay_outcome(recorded).to_json_lines()
    assert replayed == replay_outcome(LIBRARY / "parallel_tools.jsonl").to_json_lines()
    assert message.stop_reason == "tool_use"
