"""Each provider's wire framing, looked up by name: the one place replay asks a dialect.

`framing_of(provider)` gives a `Framing`: how an event line is sent as SSE bytes, what
a `{"harness": "done"}` line is sent as (Chat's `data: [DONE]`), the non-streaming
answer the events fold into (raising `StreamErrorEvent` for an API error line, which is
answered as that HTTP error, or `ValueError` when they fold into none), the paths its
requests are POSTed to, the request fields compared by default, and, for a dialect
whose streams resume, how a resume request is told apart and which lines answer it.
The plan (`harness._replay.plan`), the `Replayer` and the trace read a dialect through
this alone, never by spelling an event type. (To be folded into the provider registry.)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Final

from harness._cassette.codec import CassetteLine
from harness._cassette.message import StreamErrorEvent, message_from_events
from harness._cassette.sse import encode_event, register_encoder
from harness._exceptions import ANTHROPIC, APIErrorEvent
from harness._providers.openai_chat import framing as chat
from harness._providers.openai_chat.errors import PROVIDER as OPENAI_CHAT
from harness._providers.openai_responses import framing as responses
from harness._providers.openai_responses.errors import PROVIDER as OPENAI_RESPONSES

__all__ = ["PROVIDERS", "Framing", "framing_of", "resume_request"]

ANTHROPIC_MATCH_ON: Final = ("model", "messages", "system", "tools")


@dataclass(frozen=True, slots=True)
class Framing:
    """What one provider's wire decides (module docstring)."""

    provider: str
    encode: Callable[[dict[str, Any]], bytes]
    answer: Callable[[Iterable[dict[str, Any]]], dict[str, Any]]
    match_on: tuple[str, ...]
    #: the paths its requests are POSTed to; empty: any path is answered
    endpoints: tuple[str, ...] = ()
    done: bytes | None = None
    #: (method, path) -> the id of the response a request resumes, or None
    resume_target: Callable[[str, str], str | None] | None = None
    #: the id of the response a cassette's events are of
    response_id: Callable[[Iterable[dict[str, Any]]], str | None] | None = None
    #: (lines, after) -> the lines a stream resumed after sequence `after` answers with
    resumed_lines: Callable[[Iterable[CassetteLine], int], Iterator[CassetteLine]] | None = None


def _message(events: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Anthropic's `Message` of the events; an `error` event as the `APIErrorEvent` of the
    HTTP error it stands for."""
    try:
        return message_from_events(events)
    except StreamErrorEvent as error:
        raise APIErrorEvent(error.body, error.status) from None


_FRAMINGS: Final[dict[str, Framing]] = {
    ANTHROPIC: Framing(ANTHROPIC, encode_event, _message, ANTHROPIC_MATCH_ON),
    OPENAI_CHAT: Framing(
        OPENAI_CHAT,
        chat.encode_chunk,
        chat.completion_from_chunks,
        chat.MATCH_ON,
        endpoints=(chat.ENDPOINT,),
        done=chat.DONE_SSE,
    ),
    OPENAI_RESPONSES: Framing(
        OPENAI_RESPONSES,
        responses.encode_event,
        responses.response_from_events,
        responses.MATCH_ON,
        endpoints=(responses.ENDPOINT,),
        resume_target=responses.resume_target,
        response_id=responses.response_id,
        resumed_lines=responses.resumed_lines,
    ),
}
#: Every provider with a framing.
PROVIDERS: Final = tuple(_FRAMINGS)
for _provider, _framing in _FRAMINGS.items():
    if _provider != ANTHROPIC:
        register_encoder(_provider, _framing.encode)  # a cassette's `sse()` reads it


def framing_of(provider: str) -> Framing:
    """The framing of `provider` (a cassette header's `provider`); `KeyError` for none."""
    return _FRAMINGS[provider]


def resume_request(method: str, path: str) -> tuple[Framing, str] | None:
    """The framing and response id of a request that resumes a stream, else None."""
    for provider in PROVIDERS:
        framing = framing_of(provider)
        if framing.resume_target is not None:
            target = framing.resume_target(method, path)
            if target is not None:
                return framing, target
    return None
