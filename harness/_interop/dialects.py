"""Which provider an exchange is a call of, and what import and export ask of each: one place.

`DIALECTS` lists, per provider, the functions its own module supplies (the Anthropic one
in `harness._interop.anthropic`, the OpenAI ones in each dialect's `interop` module under
`harness._providers`): which calls are its (method and path), the request a cassette
keeps, an SSE body and a plain answer as the cassette's lines, the model they name, and
the call and body an export writes. `for_call` finds an exchange's dialect by its
request, `for_provider` a cassette's by its header. The importer and the exporter spell
no event type: they ask here. (To be folded into the provider registry.)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit

from harness._exceptions import ANTHROPIC
from harness._interop import anthropic
from harness._providers.openai_chat import interop as openai_chat
from harness._providers.openai_chat.errors import PROVIDER as OPENAI_CHAT
from harness._providers.openai_responses import interop as openai_responses
from harness._providers.openai_responses.errors import PROVIDER as OPENAI_RESPONSES
from harness._providers.sse import sse_fields

__all__ = ["CALLS", "DIALECTS", "NOT_A_CALL", "Dialect", "Line", "for_call", "for_provider"]

#: A line as a dialect reads and writes it: an event's object, or the bytes of a sentinel
#: `data` that is no object (Chat's `[DONE]`, the cassette's `done` line: `Dialect.done`).
Line = dict[str, Any] | bytes


@dataclass(frozen=True, slots=True)
class Dialect:
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


DIALECTS: Final = (
    Dialect(
        provider=ANTHROPIC,
        call="Messages",
        answer="a Message",
        http_errors=False,  # as before OpenAI: `status 529` is listed as skipped
        is_call=anthropic.is_call,
        request_of=anthropic.request_of,
        stream_lines=anthropic.stream_lines,
        answer_lines=anthropic.answer_lines,
        model_of=anthropic.model_of,
        exported_call=anthropic.exported_call,
        request_headers=anthropic.REQUEST_HEADERS,
        sse_body=anthropic.sse_body,
    ),
    Dialect(
        provider=OPENAI_CHAT,
        call="Chat Completions",
        answer="a chat completion",
        http_errors=True,
        is_call=openai_chat.is_call,
        request_of=openai_chat.request_of,
        stream_lines=lambda body: openai_chat.stream_lines(sse_fields(body)),
        answer_lines=openai_chat.answer_lines,
        model_of=openai_chat.model_of,
        exported_call=openai_chat.exported_call,
        request_headers=openai_chat.REQUEST_HEADERS,
        sse_body=openai_chat.sse_body,
        done=openai_chat.DONE_DATA,
    ),
    Dialect(
        provider=OPENAI_RESPONSES,
        call="Responses",
        answer="a response",
        http_errors=True,
        is_call=openai_responses.is_call,
        request_of=openai_responses.request_of,
        stream_lines=lambda body: openai_responses.stream_lines(sse_fields(body)),
        answer_lines=openai_responses.answer_lines,
        model_of=openai_responses.model_of,
        exported_call=openai_responses.exported_call,
        request_headers=openai_responses.REQUEST_HEADERS,
        sse_body=openai_responses.sse_body,
    ),
)
#: The calls import reads, as its report names them.
CALLS: Final = "a Messages, Chat Completions or Responses call"
#: Why an exchange that is none of them is skipped. (Still the words of the Anthropic-only
#: importer, which the README shows; `f"not {CALLS}"` once the README says so.)
NOT_A_CALL: Final = "not a POST to /v1/messages"


def for_call(method: str, uri: str) -> Dialect | None:
    """The dialect whose call `method uri` is (any host), or None."""
    try:
        path = urlsplit(uri).path
    except ValueError:  # e.g. a malformed IPv6 host
        return None
    method = method.upper()
    return next((dialect for dialect in DIALECTS if dialect.is_call(method, path)), None)


def for_provider(provider: str) -> Dialect:
    """The dialect of a cassette whose header names `provider`."""
    return next(dialect for dialect in DIALECTS if dialect.provider == provider)
