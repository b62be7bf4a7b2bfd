"""`harness serve`'s app over a real socket: real SDK clients, the selection order, the faults."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import pytest
from conftest import LIBRARY, library_cassettes, raises_connection_error

from harness import InputError
from harness._cassette.codec import make_header
from harness._http.hosting import ServerThread
from harness._http.server import CassetteServer
from harness._providers.anthropic.adapter import ato_model_events, to_model_events
from harness._providers.sse import encode_event
from harness._replay.direct import Outcome, acollect, collect, replay_outcome

KEY = "sk-ant-server-test-key-0123456789"
REQUEST: dict[str, Any] = {
    "model": "claude-harness-test",
    "max_tokens": 64,
    "messages": [{"role": "user", "content": "hello"}],
}
CASSETTES = [str(path) for path in library_cassettes()]
TEXT_ONLY = LIBRARY / "text_only.jsonl"


def _name(path: str) -> str:
    return str(Path(path).relative_to(LIBRARY))


@pytest.fixture(scope="module")
def library() -> Iterator[str]:
    """The whole library served once; tests pick a cassette by header."""
    with ServerThread(CassetteServer([str(LIBRARY)], match_on=None).app()) as url:
        yield url


def _client(url: str, **options: Any) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=url, api_key=KEY, **{"max_retries": 0, **options})


def _outcome_sync(url: str, name: str) -> Outcome:
    headers = {"x-harness-cassette": name}
    with _client(url) as client:
        try:
            stream = client.messages.create(**REQUEST, stream=True, extra_headers=headers)
        except anthropic.APIStatusError as error:
            return Outcome(error=error)
        with stream:
            return collect(to_model_events(stream))


async def _outcome_async(url: str, name: str) -> Outcome:
    headers = {"x-harness-cassette": name}
    async with anthropic.AsyncAnthropic(base_url=url, api_key=KEY, max_retries=0) as client:
        try:
            stream = await client.messages.create(**REQUEST, stream=True, extra_headers=headers)
        except anthropic.APIStatusError as error:
            return Outcome(error=error)
        async with stream:
            return await acollect(ato_model_events(stream))


@pytest.mark.parametrize("path", CASSETTES, ids=_name)
def test_the_sync_client_over_a_socket_gets_the_outcome_of_direct_replay(
    library: str, path: str
) -> None:
    got = _outcome_sync(library, _name(path))
    assert got.to_json_lines() == replay_outcome(path).to_json_lines()


@pytest.mark.parametrize("path", CASSETTES, ids=_name)
def test_the_async_client_over_a_socket_gets_the_outcome_of_direct_replay(
    library: str, path: str
) -> None:
    got = asyncio.run(_outcome_async(library, _name(path)))
    assert got.to_json_lines() == replay_outcome(path).to_json_lines()


def test_a_non_streaming_call_gets_the_message_the_events_fold_into(library: str) -> None:
    headers = {"x-harness-cassette": "parallel_tools"}
    with _client(library) as client:
        message = client.messages.create(**REQUEST, extra_headers=headers)
    assert message.stop_reason == "tool_use"
    assert [block.type for block in message.content] == ["text", "tool_use", "tool_use"]


def test_an_unknown_cassette_name_is_a_404_naming_it(library: str) -> None:
    headers = {"x-harness-cassette": "no/such/cassette"}
    with _client(library) as client, pytest.raises(anthropic.NotFoundError) as raised:
        client.messages.create(**REQUEST, extra_headers=headers)
    assert "no cassette named 'no/such/cassette' is served" in str(raised.value)


# -- which cassette answers ------------------------------------------------------------------


def _write(path: Path, text: str, request: dict[str, Any] | None = None) -> Path:
    """A one-block text cassette saying `text`, recorded for `request` if given."""
    extra = {"request": request} if request is not None else {}
    header = make_header(f"says {text}", "recorded", **extra)
    start = {"type": "message_start", "message": {"id": "msg_1", "type": "message",
             "role": "assistant", "model": "m", "content": [], "stop_reason": None,
             "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}}  # fmt: skip
    events = [
        start,
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {}},
        {"type": "message_stop"},
    ]
    path.write_text("\n".join(json.dumps(line) for line in [header, *events]) + "\n")
    return path


def _asking(prompt: str) -> dict[str, Any]:
    return {**REQUEST, "messages": [{"role": "user", "content": prompt}]}


def _text(client: anthropic.Anthropic, request: dict[str, Any], **options: Any) -> str:
    message = client.messages.create(**request, **options)
    return "".join(block.text for block in message.content if block.type == "text")


def test_one_path_alone_is_served_as_one_path() -> None:
    assert (
        CassetteServer(str(TEXT_ONLY)).names.keys() == CassetteServer([str(TEXT_ONLY)]).names.keys()
    )


@pytest.mark.parametrize(
    ("paths", "says"),
    [
        (None, "paths are a path or a sequence of them, not NoneType"),
        (3, "paths are a path or a sequence of them, not int"),
        ([str(TEXT_ONLY), None], "a path is a str or an os.PathLike, not NoneType"),
    ],
    ids=["none", "int", "none-in-list"],
)
def test_a_server_of_what_is_no_path_is_one_input_error(paths: Any, says: str) -> None:
    with pytest.raises(InputError) as raised:
        CassetteServer(paths)
    assert str(raised.value) == says


def test_a_session_folder_is_answered_turn_by_turn_then_runs_out(tmp_path: Path) -> None:
    for number in (1, 2):
        _write(tmp_path / f"turn-{number:02d}.jsonl", f"turn {number}")
    with ServerThread(CassetteServer([str(tmp_path)]).app()) as url, _client(url) as client:
        assert [_text(client, REQUEST), _text(client, REQUEST)] == ["turn 1", "turn 2"]
        with pytest.raises(anthropic.NotFoundError) as raised:
            client.messages.create(**REQUEST)
    assert "request 3, but the cassettes hold 2 responses" in str(raised.value)


def test_a_header_naming_a_session_folder_gets_its_turns_in_order(tmp_path: Path) -> None:
    (tmp_path / "s").mkdir()
    for number in (2, 1, 10):  # turn order is by number: turn-10 after turn-02
        _write(tmp_path / "s" / f"turn-{number:02d}.jsonl", f"s{number}")
    _write(tmp_path / "other.jsonl", "other")
    with ServerThread(CassetteServer([str(tmp_path)]).app()) as url, _client(url) as client:
        named = {"x-harness-cassette": "s"}
        texts = [_text(client, REQUEST, extra_headers=named) for _ in range(3)]
        other = _text(client, REQUEST, extra_headers={"x-harness-cassette": "other"})
        assert [*texts, other] == ["s1", "s2", "s10", "other"]
        with pytest.raises(anthropic.NotFoundError) as raised:
            client.messages.create(**REQUEST, extra_headers=named)
        assert "session 's': its 3 turns were all answered" in str(raised.value)
        client.post("/_harness/reset", cast_to=object)
        assert _text(client, REQUEST, extra_headers=named) == "s1"


def test_the_header_wins_then_the_matching_request_then_the_order(tmp_path: Path) -> None:
    _write(tmp_path / "a.jsonl", "a")
    _write(tmp_path / "b.jsonl", "b", request=_asking("about b"))
    _write(tmp_path / "c.jsonl", "c")
    with ServerThread(CassetteServer([str(tmp_path)]).app()) as url, _client(url) as client:
        by_header = _text(client, REQUEST, extra_headers={"x-harness-cassette": "c.jsonl"})
        by_match = _text(client, _asking("about b"))
        in_order = _text(client, _asking("anything"))
    assert (by_header, by_match, in_order) == ("c", "b", "a")


def test_a_request_differing_from_the_recorded_one_fails_with_a_diff(tmp_path: Path) -> None:
    _write(tmp_path / "turn-01.jsonl", "hi", request=_asking("recorded prompt"))
    with (
        ServerThread(CassetteServer([str(tmp_path)]).app()) as url,
        _client(url) as client,
        pytest.raises(anthropic.NotFoundError) as raised,
    ):
        client.messages.create(**_asking("another prompt"))
    assert '-    "content": "recorded prompt",' in str(raised.value)
    assert '+    "content": "another prompt",' in str(raised.value)


def test_a_refused_request_consumes_no_cassette_nor_turn(tmp_path: Path) -> None:
    """A request unlike the recorded one is refused (404) and leaves the cassette it was
    compared with next, in order and in a session named by the header alike."""
    _write(tmp_path / "a.jsonl", "a", request=_asking("about a"))
    _write(tmp_path / "b.jsonl", "b")
    (tmp_path / "s").mkdir()
    _write(tmp_path / "s" / "turn-01.jsonl", "s1", request=_asking("turn 1"))
    _write(tmp_path / "s" / "turn-02.jsonl", "s2")
    named = {"x-harness-cassette": "s"}
    with ServerThread(CassetteServer([str(tmp_path)]).app()) as url, _client(url) as client:
        for headers in ({}, named):
            with pytest.raises(anthropic.NotFoundError, match="does not match"):
                client.messages.create(**_asking("something else"), extra_headers=headers)
        texts = [
            _text(client, _asking("turn 1"), extra_headers=named),
            _text(client, _asking("anything"), extra_headers=named),
            _text(client, _asking("about a")),
            _text(client, _asking("anything")),
        ]
    assert texts == ["s1", "s2", "a", "b"]


def test_captured_requests_keep_no_credential_and_reset_starts_over(tmp_path: Path) -> None:
    _write(tmp_path / "turn-01.jsonl", "only")
    with ServerThread(CassetteServer([str(tmp_path)]).app()) as url, _client(url) as client:
        assert _text(client, REQUEST) == "only"
        captured = httpx2.get(f"{url}/_harness/requests").json()
        assert httpx2.post(f"{url}/_harness/reset").status_code == 200
        assert _text(client, REQUEST) == "only"
        after_reset = httpx2.get(f"{url}/_harness/requests").json()
    [request] = captured
    assert (request["method"], request["path"], request["body"]) == (
        "POST",
        "/v1/messages",
        REQUEST,
    )
    assert KEY not in json.dumps(captured)
    assert not {"x-api-key", "authorization"} & set(request["headers"])
    assert len(after_reset) == 1


#: Credentials a query carries: a presigned URL's (`X-Amz-Credential` holds the access key
#: id), Google's bearer token, Azure's and Gemini's keys.
QUERY_CREDENTIALS = {
    "X-Amz-Security-Token": "FQoGZXIvYXdzSESSIONTOKENSECRET",
    "X-Amz-Signature": "deadbeefSIGNATURE0123",
    "X-Amz-Credential": "AKIAEXAMPLEKEY123/20250101/us-east-1/bedrock/aws4_request",
    "access_token": "ya29.GOOGLEBEARERSECRET",
    "api-key": "AZUREKEYSECRET1",
    "key": "AIzaGEMINIKEY123",
}


def test_captured_requests_keep_no_credential_of_the_query(tmp_path: Path) -> None:
    _write(tmp_path / "turn-01.jsonl", "only")
    plain = {"beta": "true", "X-Amz-Date": "20250101T000000Z"}
    with ServerThread(CassetteServer([str(tmp_path)]).app()) as url:
        answer = httpx2.post(
            f"{url}/v1/messages", params={**QUERY_CREDENTIALS, **plain}, json=REQUEST
        )
        listed = httpx2.get(f"{url}/_harness/requests")
    assert answer.status_code == 200
    [request] = listed.json()
    assert request["query"] == plain
    for value in [*QUERY_CREDENTIALS.values(), "AKIAEXAMPLEKEY123"]:
        assert value not in listed.text


# -- HTTP and wire faults from the cassette ----------------------------------------------------


def _variant(tmp_path: Path, name: str, lines: list[dict[str, Any]]) -> Path:
    path = tmp_path / name
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return path


OVERLOADED = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
EVENTS = [json.loads(line) for line in TEXT_ONLY.read_text().splitlines()[1:]]


def test_two_529s_then_a_stream_are_retried_through_by_the_sdk(tmp_path: Path) -> None:
    error = {
        "harness": "http_error",
        "status": 529,
        "headers": {"retry-after-ms": "1", "x-should-retry": "true"},
        "body": OVERLOADED,
    }
    _variant(tmp_path, "turn-01.jsonl", [error])
    _variant(tmp_path, "turn-02.jsonl", [error])
    _variant(tmp_path, "turn-03.jsonl", EVENTS)
    server = CassetteServer([str(tmp_path)])
    with ServerThread(server.app()) as url, _client(url, max_retries=2) as client:
        assert _text(client, REQUEST, stream=False) == "The file has three sections."
    assert len(server.replayer.requests) == 3


def test_a_cut_mid_event_is_the_drop_a_live_client_sees(tmp_path: Path) -> None:
    path = _variant(tmp_path, "cut.jsonl", [*EVENTS[:3], {"harness": "cut", "after_bytes": 9}])
    with (
        ServerThread(CassetteServer([str(path)]).app()) as url,
        _client(url) as client,
        raises_connection_error(
            "RemoteProtocolError", "peer closed connection without sending complete message body"
        ),
        client.messages.stream(**REQUEST) as stream,
    ):
        stream.until_done()


@pytest.mark.slow
def test_a_stall_longer_than_the_clients_timeout_times_it_out(tmp_path: Path) -> None:
    path = _variant(tmp_path, "stall.jsonl", [*EVENTS[:2], {"harness": "stall", "ms": 5000}])
    with (
        ServerThread(CassetteServer([str(path)]).app()) as url,
        _client(url, timeout=0.2) as client,
        raises_connection_error("ReadTimeout"),
        client.messages.stream(**REQUEST) as stream,
    ):
        stream.until_done()


@pytest.mark.slow
def test_a_client_leaving_mid_stream_does_not_disturb_another(tmp_path: Path) -> None:
    stalled = [*EVENTS[:2], {"harness": "stall", "ms": 300}, *EVENTS[2:]]
    path = _variant(tmp_path, "slow.jsonl", stalled)
    server = CassetteServer([str(path)], match_on=None)
    body = {**REQUEST, "stream": True}
    headers = {"x-harness-cassette": "slow"}
    whole = b"".join(encode_event(event) for event in EVENTS)
    with ServerThread(server.app()) as url, httpx2.Client(timeout=10) as http:
        with http.stream("POST", f"{url}/v1/messages", json=body, headers=headers) as staying:
            with http.stream("POST", f"{url}/v1/messages", json=body, headers=headers) as leaving:
                next(leaving.iter_bytes())
            received = b"".join(staying.iter_bytes())
        after = http.post(f"{url}/v1/messages", json=body, headers=headers).content
    assert received == whole
    assert after == whole


# -- what the API itself answers to bad requests -----------------------------------------------


@pytest.fixture(scope="module")
def small_limit() -> Iterator[str]:
    with ServerThread(CassetteServer([str(TEXT_ONLY)], max_body=1000).app()) as url:
        yield url


@pytest.mark.parametrize(
    ("method", "path", "content", "status", "kind"),
    [
        pytest.param("POST", "/v1/messages", b"{not json", 400, "invalid_request_error", id="json"),
        pytest.param("POST", "/v1/messages", b"[1, 2]", 400, "invalid_request_error", id="list"),
        pytest.param("POST", "/v1/messages", b"x" * 2000, 413, "request_too_large", id="size"),
        pytest.param("GET", "/v1/models", b"", 404, "not_found_error", id="unknown-path"),
        pytest.param("GET", "/v1/messages", b"", 405, "invalid_request_error", id="method"),
        pytest.param("POST", "/v1/messages", b"{}", 415, "invalid_request_error", id="text/plain"),
        pytest.param("POST", "/v1/messages", b"{}", 415, "invalid_request_error", id="no-type"),
    ],
)
def test_bad_requests_get_the_apis_error_shape(
    small_limit: str,
    method: str,
    path: str,
    content: bytes,
    status: int,
    kind: str,
    request: pytest.FixtureRequest,
) -> None:
    kinds = {"text/plain": "text/plain", "no-type": None}
    content_type = kinds.get(request.node.callspec.id, "application/json")
    headers = {} if content_type is None else {"content-type": content_type}
    response = httpx2.request(method, small_limit + path, content=content, headers=headers)
    assert response.status_code == status
    body = response.json()
    assert body == {"type": "error", "error": {"type": kind, "message": body["error"]["message"]}}
    assert "Traceback" not in response.text


def test_realtime_pacing_delivers_the_same_stream(tmp_path: Path) -> None:
    paced: list[dict[str, Any]] = []
    for number, event in enumerate(EVENTS):
        paced += [{"harness": "at", "ms": number * 5}, event]
    path = _variant(tmp_path, "paced.jsonl", paced)
    server = CassetteServer([str(path)], realtime=True)
    with ServerThread(server.app()) as url, contextlib.closing(_client(url)) as client:
        assert _text(client, REQUEST) == "The file has three sections."


def test_a_python_test_serves_a_session_from_the_public_api() -> None:
    """The docs' way to test a service end to end from pytest: public names only."""
    from harness import CassetteServer as PublicServer, ServerThread as PublicThread

    server = PublicServer([str(LIBRARY / "sessions" / "read-notes")])
    with PublicThread(server.app()) as url, _client(url) as client:
        for _ in range(2):
            with client.messages.stream(**REQUEST) as stream:
                stream.until_done()
    assert len(server.replayer.requests) == 2


def test_answers_come_from_the_cassettes_as_read_at_start(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    _write(path, "as read at start")
    with ServerThread(CassetteServer([str(path)]).app()) as url, _client(url) as client:
        path.write_text("not a cassette any more\n")  # read, checked and encoded once
        assert _text(client, REQUEST) == "as read at start"
