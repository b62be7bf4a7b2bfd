"""Which answers the guard checks, and by which provider's rules: the one place that says it.

`answer_check` reads a request (method, path, query, body) and its answer's status and
returns how to check that answer (`AnswerCheck`: whether the SDK reads it as a stream,
the provider's `AnswerReader` for a stream, the check of a non-streaming body), or None
for an answer the guard passes untouched. The provider is told by the path, as each
SDK builds it:

- `POST .../v1/messages`: Anthropic Messages (`"stream": true` in the body asks for a
  stream);
- `POST .../chat/completions`: OpenAI Chat Completions (the body's `stream` and
  `tool_choice`);
- `POST .../responses`, `GET .../responses/{id}`: OpenAI Responses (the body's
  `stream`; a GET's `stream=true` and `starting_after=N`, a resumed stream).

What each provider reads of the request, and what completes its answers, is its own
(`harness._providers.*.guard`, `harness._providers.anthropic.guard`); this module only
routes. It is folded into the provider registry at its merge.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any, Final

import orjson

from harness._json import sdk_json
from harness._providers.answers import AnswerReader
from harness._providers.anthropic.guard import AnthropicReader
from harness._providers.openai_chat import guard as chat
from harness._providers.openai_chat.errors import PROVIDER as OPENAI_CHAT
from harness._providers.openai_responses import guard as responses
from harness._providers.openai_responses.errors import PROVIDER as OPENAI_RESPONSES
from harness._strict.guard import check_answer
from harness._strict.policy import completing_stop_reasons

__all__ = ["ANTHROPIC", "AnswerCheck", "answer_check", "provider_of"]

ANTHROPIC: Final = "anthropic"
#: A retrieved (or resumed) response: `/responses/{id}`, nothing after the id.
_RESPONSE_PATH: Final = re.compile(r"/responses/[^/]+\Z")


@dataclass(frozen=True, slots=True)
class AnswerCheck:
    """How the guard checks one answer."""

    provider: str
    #: whether the SDK reads the answer as a stream (then `reader`), or whole (`check`)
    stream: bool
    reader: Callable[[], AnswerReader]
    #: a non-streaming body (and its content type) checked whole; raises at a violation
    check: Callable[[bytes | bytearray, str], None]


def provider_of(method: str, path: str) -> str | None:
    """The provider whose answers a request to `path` gets, if the guard checks them."""
    method = method.upper()
    if method == "POST":
        if path.endswith("/v1/messages"):
            return ANTHROPIC
        if path.endswith("/chat/completions"):
            return OPENAI_CHAT
        if path.endswith("/responses"):
            return OPENAI_RESPONSES
    elif method == "GET" and _RESPONSE_PATH.search(path):
        return OPENAI_RESPONSES
    return None


def answer_check(
    method: str,
    path: str,
    params: Mapping[str, str],
    content: bytes,
    status: int,
    allowed: Collection[str],
    *,
    profile: str | None = None,
) -> AnswerCheck | None:
    """How to check the answer (of `status`) to a request, or None: see the module.
    `allowed` are the stop (finish, incomplete) reasons the caller accepts besides the
    provider's own; `profile` the compatible server a Chat answer is read under."""
    if not 200 <= status < 300:
        return None
    provider = provider_of(method, path)
    if provider is None:
        return None
    if provider == ANTHROPIC:
        return _anthropic(content, allowed)
    body = _body(content)
    if provider == OPENAI_CHAT:
        return _chat(body, allowed, profile)
    return _responses(method, params, body, allowed)


def _body(content: bytes) -> dict[str, Any]:
    """A request's JSON body, `{}` for none (a GET) or one that is not an object."""
    if not content:
        return {}
    try:
        body = orjson.loads(content)
    except orjson.JSONDecodeError:
        return {}
    return body if isinstance(body, dict) else {}


def _anthropic(content: bytes, allowed: Collection[str]) -> AnswerCheck:
    from harness._strict.transport import asks_for_stream

    stop_reasons = completing_stop_reasons(allowed)
    return AnswerCheck(
        ANTHROPIC,
        asks_for_stream(content),
        lambda: AnthropicReader(stop_reasons=stop_reasons),
        lambda body, content_type: check_answer(body, content_type, stop_reasons=stop_reasons),
    )


def _chat(body: dict[str, Any], allowed: Collection[str], profile: str | None) -> AnswerCheck:
    def reader() -> AnswerReader:
        return chat.reader_for(body, allowed=allowed, profile=profile)

    def check(answer: bytes | bytearray, content_type: str) -> None:
        _check_openai(
            answer,
            content_type,
            lambda value: chat.check_completion(value, body, allowed=allowed, profile=profile),
            reader,
        )

    return AnswerCheck(OPENAI_CHAT, body.get("stream") is True, reader, check)


def _responses(
    method: str, params: Mapping[str, str], body: dict[str, Any], allowed: Collection[str]
) -> AnswerCheck:
    if method.upper() == "GET":
        streams = params.get("stream") == "true"
    else:
        streams = body.get("stream") is True

    def reader() -> AnswerReader:
        return responses.reader_for(params, allowed=allowed)

    def check(answer: bytes | bytearray, content_type: str) -> None:
        _check_openai(
            answer,
            content_type,
            lambda value: responses.check_response(value, allowed=allowed),
            reader,
        )

    return AnswerCheck(OPENAI_RESPONSES, streams, reader, check)


def _check_openai(
    answer: bytes | bytearray,
    content_type: str,
    check_value: Callable[[object], None],
    reader: Callable[[], AnswerReader],
) -> None:
    """A non-streaming OpenAI answer read as the SDK reads it (JSON, leniently) and checked
    by `check_value`; a body that is not JSON under a type that is not JSON is read as
    the stream it would be (as `check_answer` does for Messages)."""
    try:
        value = sdk_json(answer)
    except ValueError:
        check_answer(answer, content_type, reader=reader())
        return
    check_value(value)
