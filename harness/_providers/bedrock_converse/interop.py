"""ConverseStream as import and export read and write it: the call, its body, its answer.

A Converse call is a `POST` to `/model/{modelId}/converse-stream` (or `/converse`, not
streamed) on any host. Its body is AWS event-stream frames (`eventstream.FrameDecoder`):
each event frame a line `{<:event-type>: <payload>}`, Bedrock's `p` padding dropped as
botocore drops it, each exception frame a line `{<:exception-type>: <payload>}`. A
plain answer (`Converse`'s JSON) becomes the events a stream of it carries: messageStart,
each content block (a text delta, a tool's start and its input as one delta, reasoning),
its stop, messageStop and metadata. The request kept is the body with the path's model
in it (`model`). Export writes the lines back as the frames Bedrock sends.
"""

from __future__ import annotations

from typing import Any, Final
from urllib.parse import quote

import orjson

from harness._providers.bedrock_converse.errors import PROVIDER
from harness._providers.bedrock_converse.framing import (
    CONTENT_TYPE,
    FRAMED,
    PATHS,
    EventDecoder,
    encode_event,
)
from harness._providers.recorded import Recorded

__all__ = [
    "API_URL",
    "RECORDED",
    "answer_lines",
    "exported_call",
    "is_call",
    "model_of",
    "request_of",
    "stream_body",
    "stream_lines",
]

#: The API's address, the path below it naming the model.
API_URL: Final = "https://bedrock-runtime.us-east-1.amazonaws.com"


def is_call(method: str, path: str) -> bool:
    return method.upper() == "POST" and PATHS.read(path.partition("?")[0]) is not None


def request_of(method: str, uri: str, body: dict[str, Any]) -> dict[str, Any]:
    """The request as the path says it (`PATHS.request`): the body, with the model its
    path names and, for the stream, `"stream": true` (which a cassette does not keep: the
    proxy reads the answer as a stream by it)."""
    path = uri.split("://", 1)[-1].partition("/")[2].partition("?")[0]
    kept: dict[str, Any] = PATHS.request("/" + path, body)
    return kept


def stream_lines(body: bytes) -> list[dict[str, Any]]:
    """The lines of an event-stream body; `eventstream.FrameError` (a `ValueError`) for a
    bad frame, one that is not Bedrock's event or exception, or a body ending in one."""
    decoder = EventDecoder()
    lines = decoder.feed(body)
    decoder.finish()
    return lines


def _block_lines(index: int, block: Any) -> list[dict[str, Any]]:
    if not isinstance(block, dict) or not block:
        raise ValueError(f"content block {index} is not an object")
    lines: list[dict[str, Any]] = []

    def delta(value: dict[str, Any]) -> None:
        lines.append({"contentBlockDelta": {"contentBlockIndex": index, "delta": value}})

    if "toolUse" in block:
        use = block["toolUse"]
        start = {key: use[key] for key in ("toolUseId", "name", "type") if key in use}
        lines.append(
            {"contentBlockStart": {"contentBlockIndex": index, "start": {"toolUse": start}}}
        )
        delta({"toolUse": {"input": orjson.dumps(use.get("input", {})).decode()}})
    elif "text" in block:
        delta({"text": block["text"]})
    elif "reasoningContent" in block:
        reasoning = block["reasoningContent"].get("reasoningText") or {}
        delta({"reasoningContent": {"text": reasoning.get("text", "")}})
        if "signature" in reasoning:
            delta({"reasoningContent": {"signature": reasoning["signature"]}})
    else:
        kind = next(iter(block))
        lines.append(
            {"contentBlockStart": {"contentBlockIndex": index, "start": {kind: block[kind]}}}
        )
    lines.append({"contentBlockStop": {"contentBlockIndex": index}})
    return lines


def answer_lines(answer: Any) -> list[dict[str, Any]]:
    """The lines of the stream a `Converse` answer carries; `ValueError` for other JSON."""
    output = answer.get("output") if isinstance(answer, dict) else None
    message = output.get("message") if isinstance(output, dict) else None
    if not isinstance(message, dict) or "stopReason" not in answer:
        raise ValueError("the JSON response is not a Converse answer")
    lines: list[dict[str, Any]] = [{"messageStart": {"role": message.get("role", "assistant")}}]
    for index, block in enumerate(message.get("content") or []):
        lines += _block_lines(index, block)
    stop: dict[str, Any] = {"stopReason": answer["stopReason"]}
    if "additionalModelResponseFields" in answer:
        stop["additionalModelResponseFields"] = answer["additionalModelResponseFields"]
    lines.append({"messageStop": stop})
    metadata = {key: answer[key] for key in ("usage", "metrics") if key in answer}
    if metadata:
        lines.append({"metadata": metadata})
    return lines


def model_of(lines: list[Any]) -> Any:
    """None: the model is in the path, never in the events."""
    return None


def exported_call(request: dict[str, Any]) -> tuple[str, str, dict[str, Any] | None]:
    """The method, URI and JSON body of the call an export replays (the model in its path,
    quoted as botocore quotes it: `:` as `%3A`)."""
    body = {key: value for key, value in request.items() if key not in ("model", "stream")}
    model = quote(str(request.get("model") or "harness-model"), safe="")
    return "POST", f"{API_URL}/model/{model}/converse-stream", body


def stream_body(lines: list[Any]) -> bytes:
    """The lines as Bedrock sends them: one event-stream frame each."""
    return b"".join(encode_event(line) for line in lines if isinstance(line, dict))


#: ConverseStream, as import and export read and write it.
RECORDED: Final = Recorded(
    provider=PROVIDER,
    call="Bedrock ConverseStream",
    answer="a Converse answer",
    http_errors=True,
    is_call=is_call,
    request_of=request_of,
    stream_lines=stream_lines,
    answer_lines=answer_lines,
    model_of=model_of,
    exported_call=exported_call,
    request_headers={},
    sse_body=stream_body,
    content_type=CONTENT_TYPE,
    frames=FRAMED,
)
