"""The guard over Bedrock's ConverseStream (`bedrock-converse`): its frames read by the
provider's `EventDecoder`, each event judged by `ConverseAdapter`; good frames handed on
byte for byte, `messageStop` held back until the end rules pass, every row of the
catalogue refused with its code (a bad frame with `bad_frame` / `truncated_frame`), the
API's own exception frames passed on; `StrictTransport` and `harness proxy --strict` the
same (docs/strict.md, docs/bedrock-converse.md)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

import harness
from harness import StrictTransport
from harness._http.hosting import ServerThread
from harness._http.proxy import RecordingProxy
from harness._http.server import CassetteServer
from harness._providers.bedrock_converse.framing import CONTENT_TYPE, EventDecoder, encode_event
from harness._providers.bedrock_converse.guard import REFUSAL, check_converse
from harness._providers.bedrock_converse.interop import answer_lines
from harness._providers.eventstream import FrameError
from harness._providers.frame_rows import broken_frame, own_frame
from harness._strict.dialects import answer_check, provider_of
from harness._strict.guard import StreamGuard
from harness.faults import derive_variants

LIBRARY = Path(__file__).resolve().parent.parent / "cassettes" / "bedrock" / "converse"
GOOD = sorted(LIBRARY.glob("*.jsonl"))
STREAM = "/model/anthropic.claude-sonnet-4-5-20250929-v1:0/converse-stream"
PLAIN = "/model/anthropic.claude-sonnet-4-5-20250929-v1:0/converse"


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()[1:]]


def body_of(lines: list[dict[str, Any]]) -> bytes:
    """The bytes a server sends for `lines`: each event its frame, a `frame` directive's
    frame broken or sent as it says (the body ending where a cut ends it)."""
    body = bytearray()
    fault = None
    for line in lines:
        if line.get("harness") == "frame":
            if "fault" in line:
                fault = line["fault"]
            else:
                body += own_frame(line)
            continue
        if "harness" in line:
            continue
        frame = encode_event(line)
        if fault is not None:
            frame, ends = broken_frame(frame, fault)
            body += frame
            if ends:
                break
            fault = None
            continue
        body += frame
    return bytes(body)


def guard() -> StreamGuard:
    check = answer_check("POST", STREAM, {}, b"{}", 200, ())
    assert check is not None and check.stream
    return StreamGuard(reader=check.reader())


def guarded(body: bytes, size: int) -> tuple[bytes, StreamGuard]:
    """What the guard released of `body` fed `size` bytes at a time, and the guard."""
    made = guard()
    released = b""
    for at in range(0, len(body), size):
        released += made.feed(body[at : at + size])
        if made.failure is not None:
            return released, made
    return released + made.finish(), made


def test_the_guard_claims_converse_calls_and_reads_the_stream_from_the_path() -> None:
    found = provider_of("POST", STREAM)
    assert found is not None and found.name == "bedrock-converse"
    plain = answer_check("POST", PLAIN, {}, b'{"stream": true}', 200, ())
    assert plain is not None and not plain.stream  # the path says it, not the body
    assert answer_check("GET", STREAM, {}, b"", 200, ()) is None
    assert answer_check("POST", STREAM, {}, b"{}", 500, ()) is None


@pytest.mark.parametrize("size", [1, 7, 1 << 20], ids=["1", "7", "whole"])
@pytest.mark.parametrize("path", GOOD, ids=lambda path: path.stem)
def test_good_frames_pass_byte_for_byte_however_cut(path: Path, size: int) -> None:
    body = body_of(lines_of(path))
    released, made = guarded(body, size)
    assert made.failure is None
    assert released == body


def _rows() -> list[tuple[str, str, list[dict[str, Any]]]]:
    rows = []
    for name in ("text.jsonl", "tool_use.jsonl"):
        header = json.loads((LIBRARY / name).read_text().splitlines()[0])
        for variant in derive_variants(
            lines_of(LIBRARY / name), provider="bedrock-converse", header=header
        ):
            rows.append(
                (f"{name[:-6]}/{variant.fault.name}", variant.expected_code, variant.events)
            )
    return rows


ROWS = _rows()
#: The rows a bare guard cannot act on: what a transport does (an HTTP error, a session,
#: a dropped connection, a stall), replayed through boto3 in test_strict_boto3.py.
TRANSPORT_ROWS = ("http_", "cut_mid_event", "stall")


@pytest.mark.parametrize(
    ("name", "expected", "broken"),
    [row for row in ROWS if not row[0].split("/")[1].startswith(TRANSPORT_ROWS)],
    ids=[row[0] for row in ROWS if not row[0].split("/")[1].startswith(TRANSPORT_ROWS)],
)
def test_every_row_is_refused_with_its_code_before_messagestop_goes_on(
    name: str, expected: str, broken: list[dict[str, Any]]
) -> None:
    body = body_of(broken)
    try:
        released, made = guarded(body, 7)
    except FrameError as error:
        assert error.code == expected
        return
    events = EventDecoder().feed(released)
    if expected == "done" or expected.startswith("api_error:"):
        assert made.failure is None
        assert released == body  # the API's exception frame goes on, for boto3 to raise
        return
    assert made.failure is not None and made.failure.code == expected
    assert made.failure.provider == "bedrock-converse"
    assert body.startswith(released)
    assert not any("messageStop" in event for event in events)  # the completing frame held


def test_stop_reasons_widen_the_policy() -> None:
    lines = [
        {"messageStop": {"stopReason": "max_tokens"}} if "messageStop" in line else line
        for line in lines_of(LIBRARY / "text.jsonl")
    ]
    cut = body_of(lines)
    _, made = guarded(cut, 7)
    assert made.failure is not None and made.failure.code == "unsupported_stop_reason"
    check = answer_check("POST", STREAM, {}, b"{}", 200, {"max_tokens"})
    assert check is not None
    made = StreamGuard(reader=check.reader())
    assert made.feed(cut) + made.finish() == cut and made.failure is None


def test_a_converse_answer_is_checked_by_the_same_rules() -> None:
    from harness._providers.bedrock_converse.framing import converse_from_events

    for path in GOOD:
        check_converse(converse_from_events(lines_of(path)))  # every good one passes
    answer = converse_from_events(lines_of(LIBRARY / "tool_use.jsonl"))
    answer["stopReason"] = "end_turn"
    with pytest.raises(harness.StreamProtocolError) as raised:
        check_converse(answer)
    assert raised.value.code == "end_turn_with_tool_calls"
    answer["stopReason"] = "max_tokens"
    check_converse(answer, allowed={"max_tokens"})
    answer["output"]["message"]["content"][1]["toolUse"]["input"] = [1]
    answer["stopReason"] = "tool_use"
    with pytest.raises(harness.StreamProtocolError) as raised:
        check_converse(answer)
    assert raised.value.code == "non_object_tool_input"
    check_converse({"message": "not a Converse answer"})
    assert answer_lines(converse_from_events(lines_of(LIBRARY / "text.jsonl")))


def _transport_client(body: bytes) -> httpx2.Client:
    def answer(request: httpx2.Request) -> httpx2.Response:
        if request.url.path.endswith("/converse"):
            return httpx2.Response(200, json=json.loads(body))
        return httpx2.Response(200, headers={"content-type": CONTENT_TYPE}, content=body)

    return httpx2.Client(transport=StrictTransport(httpx2.MockTransport(answer)))


def test_strict_transport_refuses_a_broken_stream_and_a_broken_answer() -> None:
    broken = body_of(lines_of(LIBRARY / "errors" / "invalid_tool_json.jsonl"))
    with (
        _transport_client(broken) as client,
        client.stream("POST", "http://bedrock" + STREAM, content=b"{}") as response,
        pytest.raises(harness.StreamProtocolError) as raised,
    ):
        response.read()
    assert raised.value.code == "invalid_tool_json"
    good = body_of(lines_of(LIBRARY / "tool_use.jsonl"))
    with _transport_client(good) as client:
        assert client.post("http://bedrock" + STREAM, content=b"{}").content == good
    from harness._providers.bedrock_converse.framing import converse_from_events

    answer = converse_from_events(lines_of(LIBRARY / "tool_use.jsonl"))
    answer["stopReason"] = "end_turn"
    with (
        _transport_client(json.dumps(answer).encode()) as client,
        pytest.raises(harness.StreamProtocolError) as raised,
    ):
        client.post("http://bedrock" + PLAIN, content=b"{}")
    assert raised.value.code == "end_turn_with_tool_calls"


@pytest.fixture(scope="module")
def proxied(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The library behind a strict recording proxy."""
    serve = CassetteServer([str(LIBRARY), str(LIBRARY / "errors")], match_on=None)
    proxy = RecordingProxy("http://placeholder", tmp_path_factory.mktemp("rec"), strict=True)
    with ServerThread(serve.app()) as serve_url:
        proxy.upstream = serve_url
        with ServerThread(proxy.app()) as proxy_url:
            yield proxy_url


def _through_proxy(url: str, name: str) -> list[dict[str, Any]]:
    headers = {"x-harness-cassette": name}
    with httpx2.Client(base_url=url) as client:
        body = client.post(STREAM, json={"messages": []}, headers=headers).content
    return EventDecoder().feed(body)


def test_proxy_strict_ends_a_broken_stream_in_an_exception_frame(proxied: str) -> None:
    events = _through_proxy(proxied, "unfinished_tool_blocks.jsonl")
    assert not any("messageStop" in event for event in events)
    assert list(events[-1]) == [REFUSAL]
    assert events[-1][REFUSAL]["message"].startswith("unfinished_tool_blocks: ")
    good = _through_proxy(proxied, "two_tools.jsonl")
    assert good == lines_of(LIBRARY / "two_tools.jsonl")
