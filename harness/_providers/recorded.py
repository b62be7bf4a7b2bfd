"""What import and export ask of a provider, as one value each provider's `interop` gives.

`Recorded` says which calls are the provider's (method and path, any host), the request
a cassette keeps, an SSE body (whole, or its events as they arrive) and a plain answer
as the cassette's lines, the model they
name, the call and body an export writes (and that body's content type, SSE unless
the dialect's is another: Bedrock's ConverseStream frames), and for a dialect whose own
wire is event-stream frames, those (`frames`: import decodes a binary body with them).
A dialect whose own paths and query say where and how a call was answered (Gemini's:
the Gemini API's path or Vertex's, SSE or a JSON array) gives `host_of` (the host a
call's path names, for the header) and `exported` (the call and body an export writes
for a header's request and host).
`harness._interop.dialects` finds an exchange's provider through these; the importer
and the exporter spell no event type.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness._providers.frame_rows import Framed

__all__ = ["Line", "Recorded"]

#: A line as a provider reads and writes it: an event's object, or the bytes of a sentinel
#: `data` that is no object (Chat's `[DONE]`, the cassette's `done` line: `Recorded.done`).
Line = dict[str, Any] | bytes


@dataclass(frozen=True, slots=True)
class Recorded:
    """What import and export need of one provider."""

    provider: str
    #: the API's name, as a cassette's description and the report say it
    call: str
    #: what a plain (non-streaming) answer is, as a skip reason says it
    answer: str
    #: whether an HTTP error answer becomes a cassette (its `http_error` line) or is skipped
    http_errors: bool
    is_call: Callable[[str, str], bool]
    request_of: Callable[[str, str, dict[str, Any]], dict[str, Any]]
    stream_lines: Callable[[bytes], list[Any]]
    answer_lines: Callable[[Any], list[Any]]
    model_of: Callable[[list[Any]], Any]
    exported_call: Callable[[dict[str, Any]], tuple[str, str, dict[str, Any] | None]]
    request_headers: Mapping[str, list[str]]
    sse_body: Callable[[list[Any]], bytes]
    #: the sentinel `data` a cassette's `done` line stands for (Chat's `[DONE]`), if any
    done: bytes = b""
    #: the lines of SSE events already split into (name, data) (`sse.FieldsDecoder`), for
    #: a body read as it arrives (the proxy, `harness record`); None: `sse.StreamingDecoder`
    #: reads it (Anthropic's, whose events are named)
    field_lines: Callable[[list[tuple[str | None, bytes]]], list[Any]] | None = None
    #: a dialect whose own wire is AWS event-stream frames: its frames (an event's, and a
    #: reader of them into its lines), which import reads a binary body with and export
    #: writes one with; None: SSE (a host's frames, Bedrock's, are the host's to give)
    frames: Framed | None = None
    #: the content type of a streamed body `sse_body` writes (Bedrock's event-stream frames)
    content_type: str = "text/event-stream; charset=utf-8"
    #: a streamed body's reader as it arrives, for a dialect whose stream may be other than
    #: SSE (Gemini's JSON array): `(max_line) -> reader`, its `feed(piece)` and `finish()`
    #: giving the lines (`ValueError` for a body that cannot be its stream); None: SSE
    stream_reader: Callable[[int | None], Any] | None = None
    #: path -> the host its own paths name (a header's `host`; None: the direct API);
    #: None: a host's calls are `harness._hosts`' paths
    host_of: Callable[[str], str | None] | None = None
    #: (request, header's host, lines) -> (method, URI, JSON body, answer's body, its
    #: content type), the call an export writes, in the framing the request names; None:
    #: `exported_call` and `sse_body` (at a host of `harness._hosts`, the host's URL)
    exported: (
        Callable[
            [dict[str, Any], str | None, list[Any]],
            tuple[str, str, dict[str, Any] | None, bytes, str],
        ]
        | None
    ) = None
