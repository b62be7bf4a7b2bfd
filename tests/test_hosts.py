"""Anthropic's dialect on Bedrock and Vertex: every library cassette, its lines unchanged,
read by `anthropic.AnthropicBedrock` (each event in AWS event-stream frames, the body cut
anywhere) and `anthropic.AnthropicVertex` (the direct API's SSE) as `anthropic.Anthropic`
reads it; and Bedrock's frames read back into the same events, a chunk the SDK skips
passed over as it is, under `harness.strict` too; a recording on Bedrock keeps a model id
holding a `/` (an ARN, sent as `%2F`) decoded, as the direct API's request names it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from conftest import LIBRARY, anthropic_on, library_cassettes, not_installed

import harness
from harness._cassette.codec import Cassette
from harness._hosts import bedrock, vertex
from harness._providers.eventstream import FrameError
from harness._record.live import RecordingTransport

anthropic = pytest.importorskip("anthropic")
pytest.importorskip("botocore", reason=not_installed("botocore"))

CASSETTES = library_cassettes()
#: Bedrock model ids: a plain one, and an application inference profile's ARN, whose `/`
#: the SDK sends as `%2F` (the model one segment of the path).
MODELS = {
    "plain": "claude-sonnet-5",
    "arn": "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3d4e5f6",
}
IDS = [path.stem if path.parent.name != "errors" else f"errors/{path.stem}" for path in CASSETTES]
ASK: Any = {
    "model": "claude-sonnet-5",
    "max_tokens": 64,
    "messages": [{"role": "user", "content": "Go"}],
}


class _Body(httpx2.SyncByteStream):
    def __init__(self, pieces: list[bytes]) -> None:
        self.pieces = pieces

    def __iter__(self) -> Iterator[bytes]:
        yield from self.pieces


def _cut(body: bytes, size: int | None) -> list[bytes]:
    return [body] if size is None else [body[at : at + size] for at in range(0, len(body), size)]


def _host(body: bytes, content_type: str, size: int | None, paths: list[str]) -> Any:
    """A stand-in host answering `body` in pieces of `size`, the paths asked kept in `paths`."""

    def answer(request: httpx2.Request) -> httpx2.Response:
        paths.append(request.url.path)
        headers = {"content-type": content_type}
        return httpx2.Response(200, headers=headers, stream=_Body(_cut(body, size)))

    return httpx2.MockTransport(answer)


def _served(body: bytes, content_type: str, size: int | None, paths: list[str]) -> Any:
    return httpx2.Client(transport=_host(body, content_type, size, paths))


def _read(client: Any) -> list[Any]:
    """What the code sees through `messages.create(stream=True)`: each event, then what
    it raised (its class and body: its message names the path, which is the host's)."""
    seen: list[Any] = []
    try:
        for event in client.messages.create(**ASK, stream=True):
            seen.append(event.to_dict())
    except anthropic.APIError as error:
        seen.append((type(error).__name__, error.body))
    return seen


def _direct(path: Path) -> list[Any]:
    body = b"".join(
        Cassette(path).sse(line) for line in Cassette(path).lines() if line.kind == "event"
    )
    http = _served(body, "text/event-stream", None, [])
    return _read(anthropic_on("direct", max_retries=0, http_client=http))


def _hosted(path: Path, host: str) -> bytes:
    cassette = Cassette(path)
    lines = [line for line in cassette.lines() if line.kind == "event"]
    if host == "bedrock":
        return b"".join(bedrock.encode_event(line.data) for line in lines)
    return b"".join(cassette.sse(line) for line in lines)


@pytest.mark.parametrize("size", [None, 1, 7], ids=["whole", "bytes", "sevens"])
@pytest.mark.parametrize("host", ["bedrock", "vertex"])
@pytest.mark.parametrize("path", CASSETTES, ids=IDS)
def test_every_anthropic_cassette_reads_the_same_on_bedrock_and_vertex(
    path: Path, host: str, size: int | None
) -> None:
    paths: list[str] = []
    content_type = bedrock.CONTENT_TYPE if host == "bedrock" else "text/event-stream"
    http = _served(_hosted(path, host), content_type, size, paths)
    assert _read(anthropic_on(host, max_retries=0, http_client=http)) == _direct(path)
    [asked] = paths
    pattern = bedrock.STREAM_PATH if host == "bedrock" else vertex.STREAM_PATH
    assert pattern.fullmatch(asked), asked


@pytest.mark.parametrize("path", CASSETTES, ids=IDS)
def test_bedrock_frames_read_back_into_the_cassettes_events(path: Path) -> None:
    body = _hosted(path, "bedrock")
    decoder = bedrock.EventDecoder()
    got = [event for at in range(0, len(body), 5) for event in decoder.feed(body[at : at + 5])]
    decoder.finish()
    assert got == list(Cassette(path).events())


def test_an_exception_frame_is_the_error_the_sdk_raises() -> None:
    path = library_cassettes()[0]
    events = list(Cassette(path).events())
    body = bedrock.encode_event(events[0]) + bedrock.encode_exception(
        "throttlingException", "Too many"
    )
    error = {"type": "error", "error": {"type": "throttlingException", "message": "Too many"}}
    http = _served(body, bedrock.CONTENT_TYPE, None, [])
    seen = _read(anthropic_on("bedrock", max_retries=0, http_client=http))
    assert seen[-1] == ("APIStatusError", error)
    assert bedrock.EventDecoder().feed(body)[-1] == error


@pytest.mark.parametrize(
    ("frame", "words"),
    [
        (
            bedrock.encode_frame({":message-type": "event", ":event-type": "other"}, b"{}"),
            "no event chunk",
        ),
        (
            bedrock.encode_frame(
                {":message-type": "event", ":event-type": "chunk"}, b'{"bytes": "%%"}'
            ),
            "not a base64 JSON event",
        ),
        (
            bedrock.encode_frame(
                {":message-type": "event", ":event-type": "chunk"}, b'{"bytes": "WzFd"}'
            ),
            "not a JSON object",
        ),
        # no type, but a `completion`: the SDK hands it on (as a legacy completion)
        (bedrock.encode_event({"completion": "Hi"}), "not a JSON object with a type"),
    ],
    ids=["event-type", "base64", "not-object", "completion"],
)
def test_a_frame_that_is_no_event_chunk_is_a_bad_frame(frame: bytes, words: str) -> None:
    with pytest.raises(FrameError) as refused:
        bedrock.EventDecoder().feed(frame)
    assert refused.value.code == "bad_frame" and words in str(refused.value)


#: Chunks whose event has no string `type` (nor a `completion`): `AnthropicBedrock`'s
#: decoder names no event for them and skips them, as the SDK skips an SSE event with no
#: name.
SKIPPED = {"no-type": {"foo": 1}, "number-type": {"type": 5}, "null-type": {"type": None}}


@pytest.mark.parametrize("chunk", list(SKIPPED.values()), ids=list(SKIPPED))
def test_a_chunk_the_sdk_skips_is_passed_over_under_strict_too(chunk: dict[str, Any]) -> None:
    path = LIBRARY / "text_only.jsonl"
    events = list(Cassette(path).events())
    body = b"".join(bedrock.encode_event(event) for event in [*events[:2], chunk, *events[2:]])
    assert bedrock.EventDecoder().feed(body) == events
    for guarded in (False, True):
        client = anthropic_on(
            "bedrock", max_retries=0, http_client=_served(body, bedrock.CONTENT_TYPE, None, [])
        )
        assert _read(harness.strict(client) if guarded else client) == _direct(path), guarded


@pytest.mark.parametrize("model", list(MODELS.values()), ids=list(MODELS))
def test_a_recording_on_bedrock_keeps_the_model_id_decoded(tmp_path: Path, model: str) -> None:
    path = LIBRARY / "text_only.jsonl"
    body = _hosted(path, "bedrock")
    live = _host(body, bedrock.CONTENT_TYPE, None, [])
    recording = RecordingTransport(live, [tmp_path / "recorded.jsonl"])
    client = anthropic_on("bedrock", max_retries=0, http_client=httpx2.Client(transport=recording))
    with client.messages.stream(**{**ASK, "model": model}) as stream:
        assert stream.get_final_message().stop_reason == "end_turn"
    recorded = Cassette(tmp_path / "recorded.jsonl")
    header = recorded.header or {}
    assert (header["host"], header["request"]["model"]) == ("bedrock", model)
    assert list(recorded.events()) == list(Cassette(path).events())
