"""Gemini answers under the guard: SSE or the streamed JSON array, read as google-genai reads them.

`claims(method, path)` tells a POST at one of the provider's endpoints (the Gemini
API's and Vertex's `:streamGenerateContent` and `:generateContent`, under any base URL's
path). `answer_check` says how its answer is read, by the path and the `alt` query
parameter (`framing.streamed`): `:generateContent` answers once, a
`GenerateContentResponse` checked whole (`check_response`: the one chunk it is, then the
end rules); `:streamGenerateContent?alt=sse` is SSE; without `alt`, the streamed JSON
array.

`GeminiReader` is the `AnswerReader` (`harness._providers.answers`) of one stream: its
decoder hands on each chunk as google-genai does, and a `GeminiAdapter` judges it.

- SSE (`SSEChunks`): the one SSE line reader (`FieldsDecoder`), each event's `data` one
  chunk, read as JSON as the SDK reads it (`json.loads`: `NaN` is a number). An event
  the body ends before its blank line is still a chunk: google-genai hands on the data
  gathered when the body ends. Data that is not JSON raises `SSEFormatError` (the SDK
  raises its `UnknownApiResponseError` there).
- The array (`ArrayChunks`): `jsonarray.ArrayDecoder`, each element a chunk as its
  closing brace arrives; a body that is not one array of objects raises its
  `ArrayError` (`not_an_array`) where it breaks. A body that ends before `]` is judged
  by the adapter's end rules first (a stream cut before the finish is
  `missing_finish_reason`, as on SSE), then refused as `truncated_array`.

The chunk carrying candidate 0's `finishReason` completes the answer (a framework may
stop reading there), so it and what follows wait for the end of the body, where the end
rules run. An `{"error": ...}` chunk is the API's own report: it and the rest go on, and
the SDK raises its `APIError`. The reader rewrites nothing.

`harness proxy --strict` ends a refused stream in the API's own shape (`refusal`): one
more `{"error": ...}` chunk, SSE's or the array's, which google-genai raises as it
raises the API's.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, Final

from harness._exceptions import APIErrorEvent, StreamProtocolError
from harness._json import MAX_LINE_BYTES, dump_line, sdk_json
from harness._providers.answers import (
    API_ERROR,
    COMPLETING,
    GO,
    STRICT_ERROR_TYPE,
    AnswerCheck,
    BodyDecoder,
)
from harness._providers.gemini.adapter import COMPLETE_FINISH_REASONS, GeminiAdapter
from harness._providers.gemini.errors import PROVIDER
from harness._providers.gemini.framing import ENDPOINTS, encode_chunk, streamed
from harness._providers.jsonarray import CLOSING, OPENING, SEPARATOR, ArrayDecoder, ArrayError
from harness._providers.sse import FieldsDecoder, SSEFormatError
from harness._providers.wire import at_endpoint

__all__ = [
    "ArrayChunks",
    "GeminiReader",
    "SSEChunks",
    "answer_check",
    "check_response",
    "claims",
    "finish_reasons",
    "refusal",
]

#: What a note names as the chunk the guard withholds from.
COMPLETING_CHUNK: Final = "the chunk carrying finishReason"


def finish_reasons(allowed: Collection[str]) -> frozenset[str]:
    """The finish reasons that complete an answer: `STOP` and `allowed` (`MAX_TOKENS`)."""
    return COMPLETE_FINISH_REASONS | frozenset(allowed)


class SSEChunks:
    """An `alt=sse` body's chunks as google-genai hands them on (the module)."""

    def __init__(self, *, max_line: int = MAX_LINE_BYTES) -> None:
        self._fields = FieldsDecoder(max_line=max_line)
        self._count = 0
        #: the chunks of an event the body ended in (no blank line after it)
        self.trailing: list[Any] = []
        #: nothing to refuse at the end (an array's `truncated_array`)
        self.broken: ArrayError | None = None

    @property
    def rest_at(self) -> int:
        return self._fields.rest_at

    @property
    def ends(self) -> list[int]:
        return self._fields.ends

    def feed(self, piece: bytes) -> list[Any]:
        """The chunks `piece` completes; `SSEFormatError` at the first thing refused, with
        the chunks before it (`before`)."""
        try:
            fields = self._fields.feed(piece)
        except SSEFormatError as error:
            error.before = self._chunks(error.before)  # or an earlier chunk's own error
            raise
        return self._chunks(fields)

    def _chunks(self, fields: list[dict[str, Any]]) -> list[Any]:
        """The chunks of `fields` (each event's `data`, read); `SSEFormatError` at one that
        is not JSON, with the chunks before it."""
        chunks: list[Any] = []
        try:
            for event in fields:
                chunks.append(self._chunk(event["data"]))
        except SSEFormatError as error:
            error.before = chunks
            raise
        return chunks

    def finish(self) -> None:
        # The SDK hands on the data gathered when the body ends: a blank line ends it here.
        self.trailing = [self._chunk(event["data"]) for event in self._fields.feed(b"\n\n")]
        self._fields.finish()

    def _chunk(self, data: bytes) -> Any:
        self._count += 1
        try:
            return sdk_json(data)
        except ValueError as error:
            raise SSEFormatError(
                f"event {self._count} is not JSON (google-genai raises for it): {error}"
            ) from None


class ArrayChunks:
    """A streamed JSON array's chunks, each element as it closes (the module)."""

    def __init__(self) -> None:
        self._array = ArrayDecoder()
        self.trailing: list[Any] = []
        self.broken: ArrayError | None = None

    @property
    def rest_at(self) -> int:
        return self._array.rest_at

    @property
    def ends(self) -> list[int]:
        return self._array.ends

    def feed(self, piece: bytes) -> list[Any]:
        return list(self._array.feed(piece))

    def finish(self) -> None:
        try:
            self._array.finish()
        except ArrayError as error:  # refused after the end rules (`GeminiReader.finish`)
            self.broken = error


class GeminiReader:
    """One Gemini stream as the guard reads it; see the module."""

    completing = COMPLETING_CHUNK

    def __init__(
        self,
        *,
        allowed: Collection[str] = (),
        array: bool = False,
        max_line: int = MAX_LINE_BYTES,
    ) -> None:
        self._chunks: SSEChunks | ArrayChunks = (
            ArrayChunks() if array else SSEChunks(max_line=max_line)
        )
        self._adapter = GeminiAdapter(finish_reasons=finish_reasons(allowed))
        self.rewritten = False

    @property
    def decoder(self) -> BodyDecoder:
        return self._chunks

    def text_delta(self, chunk: bytes) -> bool:
        return False  # every chunk is read whole

    def read(self, event: dict[str, Any]) -> int:
        finished = self._adapter.finish_reason is not None
        try:
            self._adapter.feed(event)
        except APIErrorEvent:
            return API_ERROR
        if not finished and self._adapter.finish_reason is not None:
            return COMPLETING
        return GO

    def check_end(self) -> None:
        self._adapter.check_end()

    def finish(self) -> None:
        for chunk in self._chunks.trailing:
            try:
                self._adapter.feed(chunk)
            except APIErrorEvent:
                return  # the API's own error: the SDK raises it
        self._adapter.finish()
        if self._chunks.broken is not None:
            raise self._chunks.broken

    def after_end(self, event: dict[str, Any] | None) -> StreamProtocolError:
        return StreamProtocolError(
            "chunk_after_finish", provider=PROVIDER, what="a candidate past the guard's limit"
        )

    def encode(self, events: list[dict[str, Any]]) -> bytes:
        """The chunks as `alt=sse` frames them (never asked: this reader rewrites nothing)."""
        return b"".join(encode_chunk(event) for event in events)


def refusal(error: StreamProtocolError, *, array: bool, sent: bool) -> bytes:
    """What `harness proxy --strict` ends a refused stream with: the API's own error chunk
    (`error` its first key, as google-genai looks for it: it raises its `ServerError`),
    status 502 as the refused `:generateContent` answer's, the code first in its message;
    on SSE one more event, in the array one more element (the array opened first if none
    of it was `sent`), and the array closed."""
    chunk = dump_line(
        {"error": {"code": 502, "message": f"{error.code}: {error}", "status": STRICT_ERROR_TYPE}}
    )
    if not array:
        return b"data: " + chunk + b"\r\n\r\n"
    return (SEPARATOR if sent else OPENING) + chunk + CLOSING


def check_response(value: object, *, allowed: Collection[str] = ()) -> None:
    """Raise `StreamProtocolError` if a `generateContent` answer (a
    `GenerateContentResponse`) breaks the rules a stream of it would: the one chunk it
    is, then the end rules. Any other value has nothing to check."""
    if not isinstance(value, dict) or not ({"candidates", "promptFeedback"} & value.keys()):
        return
    adapter = GeminiAdapter(finish_reasons=finish_reasons(allowed))
    adapter.feed(value)
    adapter.finish()


def claims(method: str, path: str) -> bool:
    """Whether a request is a Gemini call (a POST at one of its endpoints)."""
    return method.upper() == "POST" and at_endpoint(ENDPOINTS, path)


def answer_check(
    method: str,
    path: str,
    params: Mapping[str, str],
    content: bytes,
    allowed: Collection[str],
    profile: str | None,
) -> AnswerCheck | None:
    """How the answer to a Gemini call is checked (None for another request): as its path
    and `alt` say (the module); `allowed` widens the finish reasons."""
    if not claims(method, path):
        return None
    framing = streamed(path, params)

    def reader() -> GeminiReader:
        return GeminiReader(allowed=allowed, array=framing is not True)

    def check_value(value: object) -> None:
        check_response(value, allowed=allowed)

    def refuse(error: StreamProtocolError, sent: bool) -> bytes:
        return refusal(error, array=framing is not True, sent=sent)

    return AnswerCheck(
        PROVIDER,
        framing is not False,
        reader,
        check_value,
        answer="the GenerateContentResponse",
        refusal=refuse,
    )
