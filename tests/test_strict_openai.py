"""`harness.strict` and `StrictTransport` for OpenAI: the library of cassettes/openai/
served through an httpx2 `MockTransport`, read by the openai SDK's four stream readers
(sync and async), its non-streaming answers, and the guard's bytes."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from conftest import not_installed

openai = pytest.importorskip("openai", reason=not_installed("openai"))

from harness import StreamProtocolError, StrictTransport, strict  # noqa: E402
from harness._exceptions import ERROR_TABLES  # noqa: E402
from harness._strict.guard import StreamGuard, guarded  # noqa: E402
from harness._strict.http_client import _classes  # noqa: E402
from harness._strict.transport import check_for  # noqa: E402

LIBRARY = Path(__file__).parent.parent / "cassettes" / "openai"
CHAT = sorted((LIBRARY / "chat").glob("*.jsonl"))
RESPONSES = sorted((LIBRARY / "responses").glob("*.jsonl"))
#: the good answers (a refusal is refused by default: its own test)
CHAT_GOOD = CHAT
RESPONSES_GOOD = RESPONSES
CHAT_ERRORS = sorted((LIBRARY / "chat" / "errors").glob("*.jsonl"))
RESPONSES_ERRORS = sorted((LIBRARY / "responses" / "errors").glob("*.jsonl"))
TERMINAL = {"response.completed", "response.incomplete", "response.failed"}
ASK: Any = {"model": "gpt-4.1-mini", "messages": [{"role": "user", "content": "Go"}]}


def _code(path: Path) -> str:
    """The code an error cassette is named after: its stem, or the longest code its stem
    starts with (`refusal_after_text` is a `refusal`)."""
    codes = {*ERROR_TABLES["openai-chat"].templates, *ERROR_TABLES["openai-responses"].templates}
    named = [code for code in codes if path.stem == code or path.stem.startswith(f"{code}_")]
    return max(named, key=len, default=path.stem)


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()[1:]]


def _frame(line: dict[str, Any], dialect: str) -> bytes:
    """One cassette line as the API frames it: Chat `data:` alone, Responses named."""
    if line.get("harness") == "done":
        return b"data: [DONE]\n\n"
    data = json.dumps(line, separators=(",", ":")).encode()
    if dialect == "chat":
        return b"data: " + data + b"\n\n"
    return b"event: " + str(line["type"]).encode() + b"\ndata: " + data + b"\n\n"


def _chunks(path: Path) -> list[bytes]:
    return [_frame(line, _dialect(path)) for line in _lines(path)]


def _dialect(path: Path) -> str:
    return path.relative_to(LIBRARY).parts[0]


class _Body(httpx2.SyncByteStream, httpx2.AsyncByteStream):
    """A body sent a chunk at a time, to sync and async clients alike."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks

    def __iter__(self) -> Iterator[bytes]:
        yield from self.chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            yield chunk


def _server(
    chunks: list[bytes] | None = None,
    *,
    json_body: Any = None,
    seen: list[httpx2.Request] | None = None,
) -> httpx2.MockTransport:
    def answer(request: httpx2.Request) -> httpx2.Response:
        if seen is not None:
            seen.append(request)
        if json_body is not None:
            return httpx2.Response(200, json=json_body)
        headers = {"content-type": "text/event-stream"}
        return httpx2.Response(200, headers=headers, stream=_Body(list(chunks or [])))

    return httpx2.MockTransport(answer)


def _client(transport: httpx2.MockTransport, *, guard: bool = True, **options: Any) -> Any:
    client = openai.OpenAI(
        api_key="test-key",
        base_url="https://api.example.test/v1",
        max_retries=0,
        http_client=httpx2.Client(transport=transport),
    )
    return strict(client, **options) if guard else client


def _aclient(transport: httpx2.MockTransport, **options: Any) -> Any:
    client = openai.AsyncOpenAI(
        api_key="test-key",
        base_url="https://api.example.test/v1",
        max_retries=0,
        http_client=httpx2.AsyncClient(transport=transport),
    )
    return strict(client, **options)


# The four readers: what the code sees (dumped), and what it raised -------------------


def _chat_create(client: Any, **ask: Any) -> tuple[list[Any], BaseException | None]:
    seen: list[Any] = []
    try:
        for chunk in client.chat.completions.create(**{**ASK, **ask}, stream=True):
            seen.append(chunk.to_dict(warnings=False))
    except Exception as error:
        return seen, error
    return seen, None


def _chat_stream(client: Any, **ask: Any) -> tuple[list[Any], BaseException | None]:
    seen: list[Any] = []
    try:
        with client.chat.completions.stream(**{**ASK, **ask}) as stream:
            for event in stream:
                if event.type == "chunk":
                    seen.append(event.chunk.to_dict(warnings=False))
    except Exception as error:
        return seen, error
    return seen, None


def _responses_create(client: Any, **ask: Any) -> tuple[list[Any], BaseException | None]:
    seen: list[Any] = []
    try:
        for event in client.responses.create(model="gpt-4.1-mini", input="Go", stream=True):
            seen.append(event.to_dict(warnings=False))
    except Exception as error:
        return seen, error
    return seen, None


def _responses_stream(client: Any, **ask: Any) -> tuple[list[Any], BaseException | None]:
    seen: list[Any] = []
    try:
        with client.responses.stream(model="gpt-4.1-mini", input="Go") as stream:
            for event in stream:
                seen.append(event.to_dict(warnings=False))
    except Exception as error:
        return seen, error
    return seen, None


async def _achat_create(client: Any) -> tuple[list[Any], BaseException | None]:
    seen: list[Any] = []
    try:
        async for chunk in await client.chat.completions.create(**ASK, stream=True):
            seen.append(chunk.to_dict(warnings=False))
    except Exception as error:
        return seen, error
    return seen, None


async def _achat_stream(client: Any) -> tuple[list[Any], BaseException | None]:
    seen: list[Any] = []
    try:
        async with client.chat.completions.stream(**ASK) as stream:
            async for event in stream:
                if event.type == "chunk":
                    seen.append(event.chunk.to_dict(warnings=False))
    except Exception as error:
        return seen, error
    return seen, None


async def _aresponses_create(client: Any) -> tuple[list[Any], BaseException | None]:
    seen: list[Any] = []
    try:
        stream = await client.responses.create(model="gpt-4.1-mini", input="Go", stream=True)
        async for event in stream:
            seen.append(event.to_dict(warnings=False))
    except Exception as error:
        return seen, error
    return seen, None


async def _aresponses_stream(client: Any) -> tuple[list[Any], BaseException | None]:
    seen: list[Any] = []
    try:
        async with client.responses.stream(model="gpt-4.1-mini", input="Go") as stream:
            async for event in stream:
                seen.append(event.to_dict(warnings=False))
    except Exception as error:
        return seen, error
    return seen, None


Reader = Callable[..., tuple[list[Any], BaseException | None]]
CHAT_READERS: list[Reader] = [_chat_create, _chat_stream]
RESPONSES_READERS: list[Reader] = [_responses_create, _responses_stream]
ASYNC_CHAT = [_achat_create, _achat_stream]
ASYNC_RESPONSES = [_aresponses_create, _aresponses_stream]


def _protocol_error(error: BaseException | None) -> StreamProtocolError | None:
    """The `StreamProtocolError` in the chain of what the SDK raised, if one is."""
    while error is not None:
        if isinstance(error, StreamProtocolError):
            return error
        error = error.__cause__ or error.__context__
    return None


def _completes(seen: list[Any]) -> bool:
    """Whether what the code saw holds the event that completes an answer."""
    for item in seen:
        if item.get("type") in TERMINAL:
            return True
        choices = item.get("choices") or []
        if any(choice.get("finish_reason") for choice in choices):
            return True
    return False


# Good streams --------------------------------------------------------------------------


@pytest.mark.parametrize("read", CHAT_READERS, ids=lambda r: r.__name__)
@pytest.mark.parametrize("path", CHAT_GOOD, ids=lambda p: p.stem)
def test_a_good_chat_stream_reads_the_same_with_the_guard(path: Path, read: Reader) -> None:
    plain, plain_error = read(_client(_server(_chunks(path)), guard=False))
    guarded_seen, error = read(_client(_server(_chunks(path))))
    assert plain_error is None
    assert error is None
    assert guarded_seen == plain
    assert _completes(guarded_seen)


@pytest.mark.parametrize("read", RESPONSES_READERS, ids=lambda r: r.__name__)
@pytest.mark.parametrize("path", RESPONSES_GOOD, ids=lambda p: p.stem)
@pytest.mark.slow
def test_a_good_responses_stream_reads_the_same_with_the_guard(path: Path, read: Reader) -> None:
    plain, plain_error = read(_client(_server(_chunks(path)), guard=False))
    guarded_seen, error = read(_client(_server(_chunks(path))))
    assert plain_error is None
    assert error is None
    assert guarded_seen == plain
    assert _completes(guarded_seen)


@pytest.mark.parametrize(
    "path", [*CHAT_GOOD, *RESPONSES_GOOD], ids=lambda p: f"{p.parent.name}/{p.stem}"
)
def test_good_bytes_pass_the_transport_byte_for_byte(path: Path) -> None:
    chunks = _chunks(path)
    endpoint = "/v1/chat/completions" if _dialect(path) == "chat" else "/v1/responses"
    transport = StrictTransport(_server(chunks))
    with (
        httpx2.Client(transport=transport, base_url="https://api.example.test") as client,
        client.stream("POST", endpoint, json={**ASK, "stream": True}) as response,
    ):
        released = list(response.iter_raw())
    assert b"".join(released) == b"".join(chunks)
    # Released at event ends, the answer's first events at once: only what completes it
    # (and what follows) waits for the end of the body.
    if _dialect(path) == "chat":
        first = next(n for n, c in enumerate(chunks) if b'"finish_reason":null' not in c)
    else:
        first = len(chunks) - 1  # the terminal event
    assert released[:first] == chunks[:first]
    assert len(released) == first + 1


def test_the_async_readers_are_guarded_by_the_same_rules() -> None:
    async def run() -> None:
        for read in ASYNC_CHAT:
            seen, error = await read(_aclient(_server(_chunks(LIBRARY / "chat" / "text.jsonl"))))
            assert error is None and _completes(seen)
            broken = _chunks(LIBRARY / "chat" / "errors" / "missing_done.jsonl")
            seen, error = await read(_aclient(_server(broken)))
            found = _protocol_error(error)
            assert found is not None and found.code == "missing_done"
            assert not _completes(seen)
        for read in ASYNC_RESPONSES:
            good = _chunks(LIBRARY / "responses" / "text.jsonl")
            seen, error = await read(_aclient(_server(good)))
            assert error is None and _completes(seen)
            broken = _chunks(LIBRARY / "responses" / "errors" / "unfinished_output_items.jsonl")
            seen, error = await read(_aclient(_server(broken)))
            found = _protocol_error(error)
            assert found is not None and found.code == "unfinished_output_items"
            assert not _completes(seen)

    asyncio.run(run())


# Broken streams: refused before the completing event reaches the code ------------------


@pytest.mark.parametrize("read", CHAT_READERS, ids=lambda r: r.__name__)
@pytest.mark.parametrize("path", CHAT_ERRORS, ids=lambda p: p.stem)
def test_every_chat_error_cassette_raises_its_code_before_the_finish(
    path: Path, read: Reader
) -> None:
    seen, error = read(_client(_server(_chunks(path))))
    if path.stem == "server_error":  # the API's own error: the SDK raises it
        assert isinstance(error, openai.APIError) and _protocol_error(error) is None
        return
    found = _protocol_error(error)
    assert found is not None, error
    assert found.code == _code(path)
    assert found.provider == "openai-chat"
    assert not _completes(seen)


@pytest.mark.parametrize("read", RESPONSES_READERS, ids=lambda r: r.__name__)
@pytest.mark.parametrize("path", RESPONSES_ERRORS, ids=lambda p: p.stem)
def test_every_responses_error_cassette_raises_its_code_before_the_terminal_event(
    path: Path, read: Reader
) -> None:
    seen, error = read(_client(_server(_chunks(path))))
    if path.stem == "server_error":
        # The API's own report, of the documented flat shape, which the SDK alone hands on
        # as an event: the guard hands it on nested, so the SDK raises its API error.
        assert isinstance(error, openai.APIError) and _protocol_error(error) is None, error
        assert (error.code, error.message) == ("server_error", "The server had an error.")
        assert not _completes(seen) and all(event["type"] != "error" for event in seen)
        return
    found = _protocol_error(error)
    assert found is not None, error
    assert found.code == _code(path)
    assert found.provider == "openai-responses"
    assert not _completes(seen)


def test_a_refusal_is_refused_and_text_before_it_is_what_the_code_saw() -> None:
    seen, error = _chat_create(
        _client(_server(_chunks(LIBRARY / "chat" / "errors" / "refusal_after_text.jsonl")))
    )
    found = _protocol_error(error)
    assert found is not None and found.code == "refusal"
    assert not _completes(seen)


def test_a_final_response_other_than_the_one_streamed_is_refused() -> None:
    """Every event streams Paris., response.completed's output says Rome.: the SDK's
    helper hands on Rome. as the answer; under the guard it never reaches the code."""
    chunks = _chunks(LIBRARY / "responses" / "errors" / "output_mismatch.jsonl")
    ask = {"model": "gpt-4.1-mini", "input": "Go"}
    with _client(_server(chunks), guard=False).responses.stream(**ask) as stream:
        assert stream.get_final_response().output_text == "Rome."
    with (
        pytest.raises(StreamProtocolError) as raised,
        _client(_server(chunks)).responses.stream(**ask) as stream,
    ):
        stream.get_final_response()
    assert raised.value.code == "output_mismatch"


def test_allow_stop_reasons_lets_length_finish_a_chat_answer() -> None:
    path = LIBRARY / "chat" / "errors" / "unsupported_finish_reason.jsonl"
    finish = next(
        choice["finish_reason"]
        for line in _lines(path)
        for choice in line.get("choices") or []
        if choice.get("finish_reason")
    )
    seen, error = _chat_create(_client(_server(_chunks(path)), allow_stop_reasons={finish}))
    assert error is None and _completes(seen)


def test_a_forcing_tool_choice_lets_stop_finish_forced_calls() -> None:
    chunks = _chunks(LIBRARY / "chat" / "errors" / "stop_with_tool_calls.jsonl")
    _, error = _chat_create(_client(_server(chunks)))
    assert _protocol_error(error) is not None
    forced = {"type": "function", "function": {"name": "get_weather"}}
    for tool_choice in ("required", forced):
        seen, error = _chat_create(_client(_server(chunks)), tool_choice=tool_choice)
        assert error is None and _completes(seen)


def test_a_chunk_after_done_is_refused_though_the_sdk_stops_at_done() -> None:
    chunks = _chunks(LIBRARY / "chat" / "errors" / "chunk_after_done.jsonl")
    _, plain_error = _chat_create(_client(_server(chunks), guard=False))
    assert plain_error is None  # the SDK reads nothing after [DONE]
    seen, error = _chat_create(_client(_server(chunks)))
    assert _protocol_error(error) is not None and not _completes(seen)


# The tolerated deviation: a call's id and name repeated on every piece ------------------


def _repeating() -> list[bytes]:
    """one_tool.jsonl with the call's id, type and name on every piece."""
    chunks = []
    for line in _lines(LIBRARY / "chat" / "one_tool.jsonl"):
        for choice in line.get("choices") or []:
            for piece in choice["delta"].get("tool_calls") or []:
                piece.update(id="call_01Weather", type="function")
                piece["function"]["name"] = "get_weather"
        chunks.append(_frame(line, "chat"))
    return chunks


def test_a_repeated_id_and_name_joins_in_the_sdk_without_the_guard() -> None:
    with _client(_server(_repeating()), guard=False).chat.completions.stream(**ASK) as stream:
        call = stream.get_final_completion().choices[0].message.tool_calls[0]
    assert call.id == "call_01Weathercall_01Weathercall_01Weather"


def test_the_guard_hands_on_a_repeated_id_and_name_once() -> None:
    with _client(_server(_repeating())).chat.completions.stream(**ASK) as stream:
        completion = stream.get_final_completion()
    call = completion.choices[0].message.tool_calls[0]
    assert (call.id, call.function.name) == ("call_01Weather", "get_weather")
    assert json.loads(call.function.arguments) == {"city": "Paris"}
    seen, error = _chat_create(_client(_server(_repeating())))
    assert error is None
    pieces = [
        piece
        for chunk in seen
        for c in chunk["choices"]
        for piece in c["delta"].get("tool_calls", [])
    ]
    assert [piece.get("id") for piece in pieces] == ["call_01Weather", None, None]
    assert [piece["function"].get("name") for piece in pieces] == ["get_weather", None, None]
    assert "".join(piece["function"]["arguments"] for piece in pieces) == '{"city": "Paris"}'


# An index the SDK misreads: -1 is "the last call" to it ------------------------------


def _second_call_at_minus_one() -> list[bytes]:
    """parallel_tools.jsonl with its second call's pieces at index -1."""
    chunks = []
    for line in _lines(LIBRARY / "chat" / "parallel_tools.jsonl"):
        for choice in line.get("choices") or []:
            for piece in choice["delta"].get("tool_calls") or []:
                if piece["index"] == 1:
                    piece["index"] = -1
        chunks.append(_frame(line, "chat"))
    return chunks


def test_a_negative_index_merges_two_calls_in_the_sdk_and_the_guard_refuses_it() -> None:
    unguarded = _client(_server(_second_call_at_minus_one()), guard=False)
    with unguarded.chat.completions.stream(**ASK) as stream:
        calls = stream.get_final_completion().choices[0].message.tool_calls
    assert len(calls) == 1  # the SDK folded the second call into the first
    for read in (_chat_create, _chat_stream):
        seen, error = read(_client(_server(_second_call_at_minus_one())))
        refused = _protocol_error(error)
        assert refused is not None and refused.code == "incomplete_tool_call_start"
        assert not _completes(seen)


def test_only_the_chunks_that_repeat_are_rewritten() -> None:
    chunks = _repeating()
    request = httpx2.Request("POST", "https://x/v1/chat/completions", json={**ASK, "stream": True})
    check = check_for(request, httpx2.Response(200), ())
    assert check is not None
    out = list(guarded(iter(chunks), StreamGuard(reader=check.reader())))
    # The two pieces after the opening one are rewritten; the rest goes on as it came
    # (the finish, the usage chunk and [DONE] at the end of the body, together).
    assert out[:2] == chunks[:2]
    assert out[2] != chunks[2] and out[3] != chunks[3]
    assert b"".join(out[4:]) == b"".join(chunks[4:])
    assert json.loads(out[2].removeprefix(b"data: ")) == {
        **json.loads(chunks[2].removeprefix(b"data: ")),
        "choices": [
            {
                "index": 0,
                "delta": {
                    "tool_calls": [
                        {"index": 0, "function": {"arguments": '{"city":'}, "type": "function"}
                    ]
                },
                "finish_reason": None,
            }
        ],
    }


# Requests: which answers, read how ------------------------------------------------------


def test_a_resumed_responses_stream_starts_where_the_request_says() -> None:
    lines = _lines(LIBRARY / "responses" / "text.jsonl")
    after = 2
    rest = [_frame(line, "responses") for line in lines if line["sequence_number"] > after]
    client = _client(_server(rest))
    events = [
        event.type
        for event in client.responses.retrieve("resp_x", stream=True, starting_after=after)
    ]
    assert events[-1] == "response.completed"
    with pytest.raises(StreamProtocolError) as raised:
        list(client.responses.retrieve("resp_x", stream=True))
    assert raised.value.code == "missing_response_created"


def _completion(finish_reason: str, **message: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "gpt-4.1-mini",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": None, **message},
                "finish_reason": finish_reason,
            }
        ],
    }


def test_a_non_streaming_chat_completion_is_checked_by_the_same_rules() -> None:
    good = _completion("stop", content="Paris.")
    assert _client(_server(json_body=good)).chat.completions.create(**ASK).id == "chatcmpl-1"
    call = {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{"}}
    for body, code in [
        (_completion("length", content="Par"), "unsupported_finish_reason"),
        (_completion("tool_calls", tool_calls=[call]), "invalid_tool_json"),
        (
            _completion(
                "stop", tool_calls=[{**call, "function": {"name": "f", "arguments": "{}"}}]
            ),
            "stop_with_tool_calls",
        ),
        (_completion("stop", refusal="No."), "refusal"),
    ]:
        with pytest.raises(StreamProtocolError) as raised:
            _client(_server(json_body=body)).chat.completions.create(**ASK)
        assert raised.value.code == code
    cut = _completion("length", content="Par")
    client = _client(_server(json_body=cut), allow_stop_reasons={"length"})
    assert client.chat.completions.create(**ASK).choices[0].finish_reason == "length"


def _response(status: str, output: list[Any], **fields: Any) -> dict[str, Any]:
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 0,
        "model": "gpt-4.1-mini",
        "status": status,
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        **fields,
    }


MESSAGE: Any = {
    "type": "message",
    "id": "msg_1",
    "role": "assistant",
    "status": "completed",
    "content": [{"type": "output_text", "text": "Paris.", "annotations": []}],
}


def test_a_non_streaming_response_is_checked_by_the_same_rules() -> None:
    def create(body: Any, **options: Any) -> Any:
        client = _client(_server(json_body=body), **options)
        return client.responses.create(model="gpt-4.1-mini", input="Go")

    assert create(_response("completed", [MESSAGE])).output_text == "Paris."
    assert create(_response("queued", [], background=True)).status == "queued"
    cut = _response("incomplete", [MESSAGE], incomplete_details={"reason": "max_output_tokens"})
    with pytest.raises(StreamProtocolError) as raised:
        create(cut)
    assert raised.value.code == "response_incomplete"
    assert create(cut, allow_stop_reasons={"max_output_tokens"}).status == "incomplete"
    call = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f"}
    for output, code in [
        ([{**call, "arguments": "[1]"}], "non_object_tool_input"),
        ([{**call, "arguments": "{}", "type": "computer_call"}], "unsupported_output_item"),
        ([{**MESSAGE, "content": [{"type": "refusal", "refusal": "No."}]}], "refusal"),
    ]:
        with pytest.raises(StreamProtocolError) as raised:
            create(_response("completed", output))
        assert raised.value.code == code


def test_other_requests_pass_untouched() -> None:
    seen: list[httpx2.Request] = []
    listing = {"object": "list", "data": []}
    client = _client(_server(json_body=listing, seen=seen))
    assert client.models.list().data == []
    assert seen[0].url.path == "/v1/models"


# The client: a copy, with the original's HTTP client doing the sending ------------------


def test_strict_copies_the_client_and_sends_through_its_http_client() -> None:
    seen: list[httpx2.Request] = []
    hooked: list[str] = []
    http = httpx2.Client(
        transport=_server(json_body=_completion("stop", content="Hi"), seen=seen),
        headers={"x-own": "kept"},
        event_hooks={"request": [lambda request: hooked.append(request.url.path)]},
    )
    client = openai.OpenAI(
        api_key="test-key", base_url="https://api.example.test/v1", http_client=http
    )
    client = client.with_options(timeout=12.5, max_retries=1)
    guarded_client = strict(client)
    assert type(guarded_client) is type(client) and guarded_client is not client
    assert (guarded_client.timeout, guarded_client.max_retries) == (12.5, 1)
    assert client._client is http  # the original is left as it was
    guarded_client.chat.completions.create(**ASK)
    assert hooked == ["/v1/chat/completions"]
    assert seen[0].headers["x-own"] == "kept"
    assert isinstance(guarded_client._client, _classes("httpx2")[0])


def test_a_violation_is_raised_as_it_is_and_not_retried() -> None:
    seen: list[httpx2.Request] = []
    body = _completion("length", content="Par")
    client = openai.OpenAI(
        api_key="test-key",
        base_url="https://api.example.test/v1",
        max_retries=3,
        http_client=httpx2.Client(transport=_server(json_body=body, seen=seen)),
    )
    with pytest.raises(StreamProtocolError):
        strict(client).chat.completions.create(**ASK)
    assert len(seen) == 1


def test_strict_transport_guards_an_openai_client_built_on_it() -> None:
    chunks = _chunks(LIBRARY / "chat" / "errors" / "missing_finish_reason.jsonl")
    client = openai.OpenAI(
        api_key="test-key",
        base_url="https://api.example.test/v1",
        max_retries=0,
        http_client=httpx2.Client(transport=StrictTransport(_server(chunks))),
    )
    seen, error = _chat_create(client)
    found = _protocol_error(error)
    assert found is not None and found.code == "missing_finish_reason"
    assert not _completes(seen)


# The reading: as the openai SDK reads the bytes -----------------------------------------


def _verdict(
    chunks: list[bytes], endpoint: str = "/v1/chat/completions", **ask: Any
) -> tuple[bytes, BaseException | None]:
    """What the guard releases of a body and what it raises, for a request to `endpoint`."""
    request = httpx2.Request("POST", f"https://x{endpoint}", json={**ASK, **ask, "stream": True})
    check = check_for(request, httpx2.Response(200), ())
    assert check is not None and check.stream
    released: list[bytes] = []
    try:
        released.extend(guarded(iter(chunks), StreamGuard(reader=check.reader())))
    except Exception as error:
        return b"".join(released), error
    return b"".join(released), None


def _handed_on(path: Path) -> bytes:
    """The bytes the guard hands on of a cassette it passes: the body, but for a flat
    Responses `error` event, handed on with its `error` set (the SDK raises for that)."""
    if _dialect(path) == "chat":
        return b"".join(_chunks(path))
    lines = _lines(path)
    for line in lines:
        if line.get("type") == "error" and "error" not in line:
            fields = {"message": line["message"], "type": line["code"], "param": line["param"]}
            line["error"] = {**fields, "code": line["code"]}
    return b"".join(_frame(line, "responses") for line in lines)


def _cut(body: bytes, size: int) -> list[bytes]:
    return [body[start : start + size] for start in range(0, len(body), size)]


@pytest.mark.parametrize("size", [1, 7, 64, None])
@pytest.mark.parametrize(
    "path", [*CHAT, *CHAT_ERRORS, *RESPONSES, *RESPONSES_ERRORS], ids=lambda p: p.stem
)
def test_however_cut_the_guard_releases_the_same_bytes_and_raises_the_same(
    path: Path, size: int | None
) -> None:
    endpoint = "/v1/chat/completions" if _dialect(path) == "chat" else "/v1/responses"
    whole = _verdict(_chunks(path), endpoint)
    body = b"".join(_chunks(path))
    cut = _verdict(_cut(body, size) if size else [body], endpoint)
    if whole[1] is None:
        assert cut[0] == whole[0] == _handed_on(path)
    else:  # the good events that share a piece with the broken one wait with it
        assert whole[0].startswith(cut[0])
    assert type(cut[1]) is type(whole[1])
    assert getattr(cut[1], "code", None) == getattr(whole[1], "code", None)


def test_the_event_name_decides_nothing_for_the_openai_sdk() -> None:
    named = [b"event: ping\n" + chunk for chunk in _chunks(LIBRARY / "chat" / "text.jsonl")]
    assert _verdict(named) == (b"".join(named), None)
    seen, error = _chat_create(_client(_server(named)))
    assert error is None and _completes(seen)


def _marked(dialect: str) -> list[bytes]:
    """text.jsonl with a byte order mark before its first `data:`."""
    chunks = _chunks(LIBRARY / dialect / "text.jsonl")
    return [chunks[0].replace(b"data:", "\ufeffdata:".encode(), 1), *chunks[1:]]


def test_a_byte_order_mark_before_the_first_data_loses_the_first_words_in_the_sdk() -> None:
    unguarded, error = _chat_create(_client(_server(_marked("chat")), guard=False))
    whole, _ = _chat_create(_client(_server(_chunks(LIBRARY / "chat" / "text.jsonl"))))
    assert error is None and unguarded == whole[1:]


@pytest.mark.parametrize("dialect", ["chat", "responses"])
def test_the_guard_refuses_a_byte_order_mark_before_data(dialect: str) -> None:
    read = _chat_create if dialect == "chat" else _responses_create
    seen, error = read(_client(_server(_marked(dialect))))
    refused = _protocol_error(error)
    assert refused is not None and "byte order mark" in " ".join(refused.__notes__)
    assert not seen


@pytest.mark.parametrize(
    ("last", "code"),
    [
        (b"data: [DONE]", "missing_done"),  # no blank line: the SDK never reads it
        (b"data: [DONE]\n", "missing_done"),
    ],
)
def test_done_without_its_blank_line_is_no_done(last: bytes, code: str) -> None:
    chunks = [*_chunks(LIBRARY / "chat" / "text.jsonl")[:-1], last]
    released, error = _verdict(chunks)
    assert isinstance(error, StreamProtocolError) and error.code == code
    assert b'finish_reason":"stop' not in released
    assert any("never reaches the code" in note for note in error.__notes__)


def test_a_finish_no_blank_line_ends_is_one_the_code_never_reads() -> None:
    chunks = _chunks(LIBRARY / "chat" / "text.jsonl")
    finish = next(n for n, c in enumerate(chunks) if b'"finish_reason":null' not in c)
    released, error = _verdict([*chunks[:finish], chunks[finish].rstrip(b"\n")])
    assert isinstance(error, StreamProtocolError)
    assert error.code == "missing_done"
    assert released == b"".join(chunks[:finish])


@pytest.mark.parametrize(
    "bad", [b"data: {not json}\n\n", b"data: [1, 2]\n\n", b"event: x\n\n", b"data:\n\n"]
)
def test_data_the_sdk_fails_on_is_an_sse_format_error(bad: bytes) -> None:
    chunks = _chunks(LIBRARY / "chat" / "text.jsonl")
    released, error = _verdict([*chunks[:2], bad, *chunks[2:]])
    assert isinstance(error, ValueError) and not isinstance(error, StreamProtocolError)
    assert released == b"".join(chunks[:2])


def test_an_assistants_event_name_is_refused_where_it_would_change_the_data() -> None:
    chunks = _chunks(LIBRARY / "chat" / "text.jsonl")
    renamed = [chunks[0], b"event: thread.message.delta\n" + chunks[1], *chunks[2:]]
    _, error = _verdict(renamed)
    assert isinstance(error, StreamProtocolError)
    assert any("Assistants" in note for note in error.__notes__)


def test_done_ends_a_responses_stream_as_the_sdk_reads_it() -> None:
    chunks = _chunks(LIBRARY / "responses" / "text.jsonl")
    after = [*chunks, b"data: [DONE]\n\n", b'data: {"type": "whatever"}\n\n']
    assert _verdict(after, "/v1/responses") == (b"".join(after), None)
    early = [*chunks[:-1], b"data: [DONE]\n\n", chunks[-1]]
    _, error = _verdict(early, "/v1/responses")
    assert isinstance(error, StreamProtocolError) and error.code == "missing_response_completed"


def test_an_error_line_is_the_apis_report_and_goes_on_with_what_was_held() -> None:
    chunks = _chunks(LIBRARY / "chat" / "text.jsonl")
    finish = next(n for n, c in enumerate(chunks) if b'"finish_reason":null' not in c)
    error_line = b'data: {"error": {"type": "server_error", "message": "Overloaded"}}\n\n'
    body = [*chunks[: finish + 1], error_line]
    assert _verdict(body) == (b"".join(body), None)
    _, raised = _chat_create(_client(_server(body)))
    assert isinstance(raised, openai.APIError) and "Overloaded" in str(raised)


def test_strict_transport_raises_a_non_streaming_violation_as_it_is_unretried() -> None:
    seen: list[httpx2.Request] = []
    server = _server(json_body=_completion("content_filter", content="Par"), seen=seen)
    client = openai.OpenAI(
        api_key="test-key",
        base_url="https://api.example.test/v1",
        max_retries=2,
        http_client=httpx2.Client(transport=StrictTransport(server)),
    )
    with pytest.raises(StreamProtocolError) as raised:
        client.chat.completions.create(**ASK)
    assert raised.value.code == "unsupported_finish_reason"
    assert len(seen) == 1  # the openai SDK wraps and retries HTTP errors only


# harness proxy --strict in front of an OpenAI-compatible upstream -----------------------


#: the `x-cassette` of each request the upstream below answered
UPSTREAM_HITS: list[str] = []


def _upstream_app() -> Any:
    """A local OpenAI-compatible upstream: the library's answer named by the request's
    `x-cassette` header, streamed an event at a time, or a JSON body for a non-stream."""
    from aiohttp import web

    async def answer(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        name = request.headers["x-cassette"]
        UPSTREAM_HITS.append(name)
        if name.startswith("json:"):
            return web.json_response(json.loads(name.removeprefix("json:")))
        response = web.StreamResponse(headers={"content-type": "text/event-stream"})
        await response.prepare(request)
        assert body.get("stream") is True
        for chunk in _chunks(LIBRARY / name):
            await response.write(chunk)
        await response.write_eof()
        return response

    app = web.Application()
    app.router.add_post("/v1/chat/completions", answer)
    app.router.add_post("/v1/responses", answer)
    return app


@pytest.fixture(scope="module")
def proxied(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from harness._http.hosting import ServerThread
    from harness._http.proxy import RecordingProxy

    out = tmp_path_factory.mktemp("rec")
    with ServerThread(_upstream_app()) as upstream:
        proxy = RecordingProxy(upstream, out, strict=True)
        with ServerThread(proxy.app()) as url:
            yield url
            for client in _OPENED:  # their connections, before the servers stop
                client.close()
    # OpenAI answers are guarded and recorded (docs/server.md), the key never written
    from harness._cassette.codec import Cassette

    recorded = [Cassette(path) for path in sorted(out.iterdir())]
    assert recorded
    assert {cassette.provider for cassette in recorded} <= {"openai-chat", "openai-responses"}
    assert not [path for path in out.iterdir() if "test-key" in path.read_text()]


#: The clients `_through` made, closed with the proxy (a socket left to the garbage
#: collector warns in whichever test it is collected).
_OPENED: list[Any] = []


def _through(url: str, name: str) -> Any:
    client = openai.OpenAI(
        api_key="test-key",
        base_url=f"{url}/v1",
        max_retries=0,
        default_headers={"x-cassette": name},
    )
    _OPENED.append(client)
    return client


@pytest.mark.parametrize(
    "path",
    [LIBRARY / "chat" / "text.jsonl", LIBRARY / "chat" / "one_tool.jsonl", *CHAT_ERRORS],
    ids=lambda p: p.stem,
)
def test_the_proxy_ends_a_broken_chat_stream_in_an_error_the_sdk_raises(
    proxied: str, path: Path
) -> None:
    name = str(path.relative_to(LIBRARY))
    plain, _ = _chat_create(_client(_server(_chunks(path)), guard=False))
    seen, error = _chat_create(_through(proxied, name))
    if "errors" not in path.parts:
        assert error is None and seen == plain
        return
    assert isinstance(error, openai.APIError)
    assert seen == plain[: len(seen)]
    assert not _completes(seen)
    if path.stem != "server_error":
        assert isinstance(error.body, dict) and error.body["code"] == _code(path)


@pytest.mark.parametrize(
    "path",
    [LIBRARY / "responses" / "text.jsonl", *RESPONSES_ERRORS],
    ids=lambda p: p.stem,
)
def test_the_proxy_ends_a_broken_responses_stream_before_its_terminal_event(
    proxied: str, path: Path
) -> None:
    name = str(path.relative_to(LIBRARY))
    seen, error = _responses_stream(_through(proxied, name))
    if "errors" not in path.parts:
        assert error is None and _completes(seen)
        return
    if path.stem == "server_error":  # the API's report, handed on for the SDK to raise
        assert isinstance(error, openai.APIError) and error.code == "server_error"
        assert not _completes(seen)
        return
    assert isinstance(error, openai.APIError)
    assert isinstance(error.body, dict) and error.body["code"] == _code(path)
    assert not _completes(seen)


def test_the_proxy_refuses_a_broken_chat_completion_with_a_502_not_retried(
    proxied: str,
) -> None:
    good = _completion("stop", content="Paris.")
    client = _through(proxied, "json:" + json.dumps(good))
    assert client.chat.completions.create(**ASK).choices[0].message.content == "Paris."
    name = "json:" + json.dumps(_completion("length", content="Par"))
    client = _through(proxied, name).with_options(max_retries=2)
    with pytest.raises(openai.InternalServerError) as raised:
        client.chat.completions.create(**ASK)
    assert UPSTREAM_HITS.count(name) == 1  # x-should-retry: false
    assert raised.value.status_code == 502
    assert isinstance(raised.value.body, dict)
    assert raised.value.body["code"] == "unsupported_finish_reason"
