"""What the guard asks of a provider: which answers it checks (`AnswerCheck`), one answer's
reading (`AnswerReader`) and its verdicts.

`harness._strict.guard.StreamGuard` is provider-neutral: it holds, withholds and
releases bytes. Everything a dialect decides goes through an `AnswerReader`, made fresh
for each answer: the SSE decoder that reads the body as that provider's SDK does, the
adapter fed each event, and the verdict on each event (`GO`; `COMPLETING` from the event
that completes an answer on; `HARMLESS` for one that can change no verdict; `API_ERROR`
for the API's own report). The readers: `anthropic_guard.AnthropicReader` (the default),
`openai_chat.guard.ChatReader`, `openai_responses.guard.ResponsesReader`.

Each provider's `guard` module says which requests are its own (`claims(method, path)`,
by the path its SDK builds) and how their answers are checked (`answer_check(method,
path, params, content, allowed, profile)`, an `AnswerCheck`: whether the SDK reads the
answer as a stream, the reader for a stream, the check of a non-streaming answer's JSON
value); `harness._strict.dialects` asks each registered provider in turn.
`request_json` and `asks_for_stream` read a request's body as every guard does.
`Guarding` is the guard handed to a provider whose SDK `harness.strict` guards through
the SDK's own hooks (`guard.strict_client`). Imports the flat core only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

import orjson

from harness._exceptions import StreamProtocolError
from harness._providers.sse import StreamingDecoder

__all__ = [
    "API_ERROR",
    "COMPLETING",
    "GO",
    "HARMLESS",
    "STRICT_ERROR_TYPE",
    "AnswerCheck",
    "AnswerReader",
    "BodyDecoder",
    "Guarding",
    "asks_for_stream",
    "request_json",
]
#: The verdicts on an event the adapter accepted: it goes on as it is,
GO: Final = 0
#: it completes the answer (it and what follows wait for the end of the body),
COMPLETING: Final = 1
#: it changes no verdict (it goes on even while the end waits),
HARMLESS: Final = 2
#: it is the API's own error (it and everything after go on unchecked, for the SDK).
API_ERROR: Final = 3

#: The error type `harness proxy --strict` ends a broken answer with, in each dialect's
#: error shape (Messages' `error.type`, Gemini's `error.status`).
STRICT_ERROR_TYPE: Final = "stream_protocol_error"


class BodyDecoder(Protocol):
    """What the guard asks of the decoder of an answer's body: the events each piece
    completes, where in it each of them ends (`ends`: the guard hands on those before a
    broken one), where the last ends (`rest_at`, -1: it completed none), and the end.
    At bytes no SDK reads `feed` raises a `ValueError` whose `before` holds the events
    the piece completed before them (`ends` saying where each ends), as an SDK reading
    event by event would have read them first. SSE's `StreamingDecoder`; a host's
    framing (Bedrock's `harness._hosts.bedrock.EventDecoder`)."""

    @property
    def rest_at(self) -> int: ...

    @property
    def ends(self) -> Sequence[int]: ...

    def feed(self, piece: bytes) -> list[dict[str, Any]]: ...

    def finish(self) -> object: ...


class AnswerReader(Protocol):
    """One answer's provider-specific reading, as `StreamGuard` drives it."""

    @property
    def decoder(self) -> StreamingDecoder | BodyDecoder:
        """The decoder that reads the body as the provider's SDK does."""

    #: the event the guard withholds from, as its notes name it (`message_delta`)
    completing: str
    #: set by `read` when it rewrote an event into what the code must get: the guard
    #: then hands on `encode(events)` in place of the bytes that came (and clears it)
    rewritten: bool

    def text_delta(self, chunk: bytes) -> bool:
        """Whether `chunk`, with nothing held, is one whole plain text event, fed to the
        adapter without being built (raises as `read` does); False: `read` it."""

    def read(self, event: dict[str, Any]) -> int:
        """Feed the adapter one decoded event; its verdict, or `StreamProtocolError`."""

    def check_end(self) -> None:
        """Raise what the end of the body here would raise; the reading goes on."""

    def finish(self) -> None:
        """The body ended: the end rules."""

    def after_end(self, event: dict[str, Any] | None) -> StreamProtocolError:
        """The error for `event` (None: the completing one's bytes past the limit) where
        the SDK would not hand it on, in an answer the end rules found complete."""

    def encode(self, events: list[dict[str, Any]]) -> bytes:
        """The SSE bytes of `events` as the provider frames them (after a rewrite)."""


@dataclass(frozen=True, slots=True)
class AnswerCheck:
    """How the guard checks the successful answer to one request of a provider's."""

    provider: str
    #: whether the SDK reads the answer as a stream (then `reader`), or whole (`check_value`)
    stream: bool
    reader: Callable[[], AnswerReader]
    #: a non-streaming answer's JSON value, read as the SDK reads it, checked whole;
    #: raises `StreamProtocolError` at a violation, passes what is not its answer's shape
    check_value: Callable[[object], None]
    #: how the proxy's log names a non-streaming answer (`the Message`)
    answer: str = "the answer"
    #: whether `harness proxy --strict` checks it only when the request's body is JSON
    needs_json_request: bool = False
    #: the bytes `harness proxy --strict` ends a refused stream with, in the dialect's
    #: own framing, given the error and whether any of the answer went on before it
    #: (None: the SSE `error` event, or the host's frame of it)
    refusal: Callable[[StreamProtocolError, bool], bytes] | None = None


class Guarding(Protocol):
    """The guard as `harness.strict` hands it to a provider whose SDK sends through no
    HTTP client of ours but has hooks of its own (a provider's `guard.strict_client`:
    boto3's event system), each answer told by its request's method and path (and body,
    `content`), as `harness._strict.dialects` routes any other."""

    def stream(
        self, method: str, path: str, content: bytes, chunks: Iterable[bytes]
    ) -> Iterator[bytes]:
        """A streamed answer's body (`chunks`) as the guard releases it, raising its error
        where it refuses; `chunks` as they are for an answer it does not check."""

    def whole(self, method: str, path: str, content: bytes, body: bytes, content_type: str) -> None:
        """Check a non-streaming answer's body (raising at a violation); nothing for an
        answer it does not check."""


def request_json(content: bytes) -> dict[str, Any]:
    """A request's JSON body, `{}` for none (a GET) or one that is not an object."""
    if not content:
        return {}
    try:
        body = orjson.loads(content)
    except orjson.JSONDecodeError:
        return {}
    return body if isinstance(body, dict) else {}


def asks_for_stream(content: bytes) -> bool:
    """Whether a request's JSON body asks for a stream (`"stream": true`)."""
    if content.find(b'"stream"') < 0:
        return False
    return request_json(content).get("stream") is True
