"""ConverseStream under the guard: which requests, the reading it drives, a `Converse`
answer checked whole.

`claims(method, path)`: a `POST .../model/{modelId}/converse-stream` or `.../converse`
(under any base URL's path) is a Converse call; the path, not the body, says whether
boto3 reads the answer as a stream (`answer_check`).

`ConverseReader` is the `AnswerReader` (`harness._providers.answers`) of one stream:
the provider's `framing.EventDecoder` reads the event-stream frames (a bad one raises
its `FrameError`, `bad_frame` or `truncated_frame`, as botocore refuses it), and a
`ConverseAdapter(text=False)` judges each event. `messageStop` completes the answer
(its `stopReason` is what boto3's code and the frameworks take as the end), so it and
the `metadata` after it wait until the body ends and the end rules pass. An exception
frame is the API's own report: boto3 raises its `EventStreamError` for it, as it does
without the guard. The frames are released as they came, byte for byte.

`check_converse` checks a non-streaming `Converse` answer by the same rules, as the
events a stream of it carries (`interop.answer_lines`); other JSON is not checked.

`strict_client` (from `hooks`) is how `harness.strict` guards a boto3 client, which
sends through no HTTP client of ours: through botocore's own event hooks.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, Final

from harness._exceptions import StreamProtocolError
from harness._providers.answers import API_ERROR, COMPLETING, GO, AnswerCheck
from harness._providers.bedrock_converse.adapter import (
    COMPLETE_STOP_REASONS,
    EXCEPTIONS,
    ConverseAdapter,
    event_name,
)
from harness._providers.bedrock_converse.errors import PROVIDER
from harness._providers.bedrock_converse.framing import PATHS, EventDecoder, encode_event
from harness._providers.bedrock_converse.hooks import STRICT_CLIENTS, strict_client
from harness._providers.bedrock_converse.interop import answer_lines

__all__ = [
    "REFUSAL",
    "STRICT_CLIENTS",
    "ConverseReader",
    "answer_check",
    "check_converse",
    "claims",
    "refusal",
    "stop_reasons",
    "strict_client",
]

#: The exception a proxy ends a refused stream with: the one Bedrock sends for a model's
#: stream that broke (boto3 raises its `EventStreamError`, this its code).
REFUSAL: Final = "modelStreamErrorException"


def stop_reasons(allowed: Collection[str]) -> frozenset[str]:
    """The stop reasons that complete an answer: `end_turn`, `tool_use` and `allowed`."""
    return COMPLETE_STOP_REASONS | frozenset(allowed)


class ConverseReader:
    """One ConverseStream as the guard reads it; see the module."""

    completing = "messageStop"

    def __init__(self, *, allowed: Collection[str] = ()) -> None:
        self.decoder = EventDecoder()
        self._adapter = ConverseAdapter(stop_reasons=stop_reasons(allowed), text=False)
        self.rewritten = False

    def text_delta(self, chunk: bytes) -> bool:
        return False  # a frame is read whole: no event is told from its bytes

    def read(self, event: dict[str, Any]) -> int:
        name = event_name(event)
        if name in EXCEPTIONS:
            return API_ERROR
        self._adapter.feed(event)
        return COMPLETING if name == "messageStop" else GO

    def check_end(self) -> None:
        self._adapter.check_end()

    def finish(self) -> None:
        self._adapter.finish()

    def after_end(self, event: dict[str, Any] | None) -> StreamProtocolError:
        name = "more than the guard holds" if event is None else event_name(event)
        return StreamProtocolError("event_after_stop", provider=PROVIDER, event=name)

    def encode(self, events: list[dict[str, Any]]) -> bytes:
        """Each event as the frame Bedrock sends it in."""
        return b"".join(encode_event(event) for event in events)


def refusal(error: StreamProtocolError, sent: bool = False) -> bytes:
    """The frame a proxy ends a refused stream with, whatever went before (`sent`):
    Bedrock's `REFUSAL` exception, its message the code first (boto3 raises
    `EventStreamError`, `Code` the exception)."""
    return encode_event({REFUSAL: {"message": f"{error.code}: {error}"}})


def check_converse(value: object, *, allowed: Collection[str] = ()) -> None:
    """Raise `StreamProtocolError` if a non-streaming answer that is a `Converse` answer
    breaks the rules a stream of it would; any other value is not checked."""
    try:
        lines = answer_lines(value)
    except (ValueError, TypeError, AttributeError):
        return  # not a Converse answer: boto3 reports what it cannot read
    adapter = ConverseAdapter(stop_reasons=stop_reasons(allowed), text=False)
    for line in lines:
        adapter.feed(line)
    adapter.finish()


def claims(method: str, path: str) -> bool:
    """Whether a request is a Converse call: `POST .../model/{modelId}/converse[-stream]`."""
    return method.upper() == "POST" and PATHS.read(path) is not None


def answer_check(
    method: str,
    path: str,
    params: Mapping[str, str],
    content: bytes,
    allowed: Collection[str],
    profile: str | None,
) -> AnswerCheck | None:
    """How the answer to a Converse call is checked (None for another request): a stream
    at `converse-stream`, a `Converse` answer at `converse`; `allowed` widens the stop
    reasons."""
    read = PATHS.read(path) if method.upper() == "POST" else None
    if read is None:
        return None

    def reader() -> ConverseReader:
        return ConverseReader(allowed=allowed)

    def check_value(value: object) -> None:
        check_converse(value, allowed=allowed)

    return AnswerCheck(
        PROVIDER, read[1], reader, check_value, answer="the Converse answer", refusal=refusal
    )
