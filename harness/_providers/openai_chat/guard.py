"""Chat Completions under the guard: what completes an answer, what the request says, and
the one deviation handed on in its canonical form.

`ChatReader` is the `AnswerReader` (`harness._providers.answers`) of one
`stream=True` answer: `OpenAIDecoder` reads the body as the openai SDK does, a
`ChatAdapter(text=False)` judges each chunk. The chunk carrying choice 0's
`finish_reason` completes the answer (the SDK's `chat.completions.stream()` and the
frameworks take it as done there), so it and what follows wait until `data: [DONE]`
checks out (`ChatAdapter.check_end` at it) and the body ends; an `{"error": ...}` line
is the API's own report. The request's `tool_choice` is read (`reader_for`): a named
function or `required` lets `stop` finish forced calls.

A profile's deviations are handed on in the form OpenAI sends (docs/profiles.md): a
piece without `index` gets the index it was read as, a `stop` that finished calls is
`tool_calls`, a list `content` is its text (its thinking as `reasoning_content`), every
chunk carries the first one's `id`, and annotations without `index` are numbered.

The deviation tolerated under every profile: a call's `id` or `function.name` repeated,
unchanged, on its later pieces. The adapter reads it as one call; the SDK's readers join strings
(`call_acall_a`, `get_weatherget_weather`). The reader hands such a chunk on rewritten
in the canonical form, the repeated `id` and `name` dropped from the later pieces
(`rewritten`, then `encode`): the code gets the call the adapter read. A chunk that
needs no rewrite goes on byte for byte.

`check_completion` checks a non-streaming `chat.completion` by the same rules, as the
one chunk that carries its message, then `[DONE]`. `claims`: a `POST
.../chat/completions` (under any base URL's path: `/v1`, Azure's deployments) is Chat's,
its answer read as its body's `stream` and `tool_choice` say (`answer_check`).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from typing import Any, Final

from harness._exceptions import APIErrorEvent, StreamProtocolError
from harness._json import MAX_LINE_BYTES
from harness._providers.answers import API_ERROR, COMPLETING, GO, AnswerCheck, request_json
from harness._providers.openai_chat.adapter import COMPLETE_FINISH_REASONS, DONE, ChatAdapter
from harness._providers.openai_chat.errors import PROVIDER
from harness._providers.openai_chat.profiles import OPENAI, Profile, profile as named
from harness._providers.openai_sse import OpenAIDecoder, is_done

__all__ = [
    "ChatReader",
    "answer_check",
    "check_completion",
    "claims",
    "finish_reasons",
    "reader_for",
]

#: What a note names as the event the guard withholds from.
COMPLETING_CHUNK: Final = "the chunk carrying finish_reason"


def finish_reasons(allowed: Collection[str]) -> frozenset[str]:
    """The finish reasons that complete an answer: `stop`, `tool_calls` and `allowed`
    (as `length`, for code that handles truncation)."""
    return COMPLETE_FINISH_REASONS | frozenset(allowed)


class ChatReader:
    """One Chat Completions stream as the guard reads it; see the module."""

    completing = COMPLETING_CHUNK

    def __init__(
        self,
        *,
        allowed: Collection[str] = (),
        tool_choice: object = None,
        max_line: int = MAX_LINE_BYTES,
        profile: Profile = OPENAI,
    ) -> None:
        self.decoder = OpenAIDecoder(max_line=max_line)
        self._adapter = ChatAdapter(
            finish_reasons=finish_reasons(allowed),
            tool_choice=tool_choice,
            text=False,
            profile=profile,
        )
        self._profile = profile
        #: the `tool_calls[].index`es opened so far
        self._opened: set[int] = set()
        #: the first answer chunk's `id`, which a profile's varying ids are handed on as
        self._id: object = None
        #: the annotations handed on so far, as the server sent them (without `index`)
        self._annotations: list[object] = []
        self.rewritten = False

    def text_delta(self, chunk: bytes) -> bool:
        return False  # every chunk is read whole: the adapter reads text in a few steps

    def read(self, event: dict[str, Any]) -> int:
        if is_done(event):
            self._adapter.feed(DONE)
            self._adapter.check_end()  # `[DONE]` ends what the SDK reads: it must check out
            return COMPLETING
        try:
            self._adapter.feed(event)
        except APIErrorEvent:
            return API_ERROR
        choices = event.get("choices")
        if self._profile.varying_chunk_ids:
            self._same_id(event, bool(choices))
        if type(choices) is not list or not choices:
            return GO
        choice = choices[0]
        if type(choice) is not dict:
            return GO
        delta = choice.get("delta")
        if type(delta) is dict:
            if delta.get("tool_calls"):
                self._canonical(delta["tool_calls"])
            if type(delta.get("content")) is list:  # read by a profile (refused otherwise)
                _content_as_text(delta)
                self.rewritten = True
            if self._profile.indexed_annotations and type(delta.get("annotations")) is list:
                self._indexed(delta)
        reason = choice.get("finish_reason")
        if reason is None:
            return GO
        if reason != self._adapter.finish_reason and self._adapter.finish_reason is not None:
            choice["finish_reason"] = self._adapter.finish_reason  # a profile's `stop`
            self.rewritten = True
        return COMPLETING

    def _canonical(self, pieces: Any) -> None:
        """Drop an `id` or `function.name` a later piece of an open call repeats (the
        adapter made sure it is the same): what the SDK's readers would join."""
        for piece in pieces if type(pieces) is list else []:
            if type(piece) is not dict:
                continue
            index = piece.get("index")
            if index is None:  # read by a profile (the adapter refuses it otherwise)
                index = piece["index"] = self._adapter.index_of(piece.get("id"))
                self.rewritten = True
            if index not in self._opened:
                if type(index) is int:
                    self._opened.add(index)
                continue
            if isinstance(piece.get("id"), str) and piece["id"]:
                del piece["id"]
                self.rewritten = True
            function = piece.get("function")
            if type(function) is dict and _named(function):
                del function["name"]
                self.rewritten = True

    def _same_id(self, event: dict[str, Any], answer: bool) -> None:
        """A profile's chunk ids, each another: every chunk handed on with the first
        answer chunk's (what the frameworks gather one message by)."""
        if self._id is None:
            if answer:
                self._id = event.get("id")
        elif "id" in event and event["id"] != self._id:
            event["id"] = self._id
            self.rewritten = True

    def _indexed(self, delta: dict[str, Any]) -> None:
        """A profile's `annotations` without `index`: each numbered by its place in the
        message's list, an exact repeat of one handed on dropped (the SDK's helper merges
        list entries by `index`, and raises for one without)."""
        kept = []
        for entry in delta["annotations"]:
            if type(entry) is not dict or "index" in entry:
                kept.append(entry)
            elif entry not in self._annotations:
                kept.append({**entry, "index": len(self._annotations)})
                self._annotations.append(entry)
        if kept != delta["annotations"]:
            delta["annotations"] = kept
            self.rewritten = True

    def check_end(self) -> None:
        self._adapter.check_end()

    def finish(self) -> None:
        self._adapter.finish()

    def after_end(self, event: dict[str, Any] | None) -> StreamProtocolError:
        return StreamProtocolError("chunk_after_done", provider=PROVIDER)

    def encode(self, events: list[dict[str, Any]]) -> bytes:
        """Each event as `data: <json>` and a blank line (`json`: what the SDK read as a
        number, `NaN` too, is written back as it was read)."""
        return b"".join(
            b"data: "
            + (b"[DONE]" if is_done(event) else json.dumps(event, separators=(",", ":")).encode())
            + b"\n\n"
            for event in events
        )


def _content_as_text(delta: dict[str, Any]) -> None:
    """A list `content` (a profile's `content_parts`) as OpenAI sends it: its `text`
    parts joined as `content`, its `thinking` parts' text as `reasoning_content`."""
    text, thinking = [], []
    for part in delta["content"]:
        kind = part.get("type") if type(part) is dict else None
        if kind == "text" and type(part.get("text")) is str:
            text.append(part["text"])
        elif kind == "thinking" and type(part.get("thinking")) is list:
            thinking += [
                inner["text"]
                for inner in part["thinking"]
                if type(inner) is dict and type(inner.get("text")) is str
            ]
    delta["content"] = "".join(text) if text else None
    if thinking:
        delta["reasoning_content"] = "".join(thinking)


def _named(function: dict[str, Any]) -> bool:
    name = function.get("name")
    return isinstance(name, str) and bool(name)


def reader_for(
    body: Mapping[str, Any],
    *,
    allowed: Collection[str] = (),
    max_line: int = MAX_LINE_BYTES,
    profile: str | None = None,
) -> ChatReader:
    """The reader of the answer to a request whose JSON body is `body` (its
    `tool_choice`), under the compatible server's `profile` if given."""
    return ChatReader(
        allowed=allowed,
        tool_choice=body.get("tool_choice"),
        max_line=max_line,
        profile=OPENAI if profile is None else named(profile),
    )


def check_completion(
    value: object,
    body: Mapping[str, Any],
    *,
    allowed: Collection[str] = (),
    profile: str | None = None,
) -> None:
    """Raise `StreamProtocolError` if a non-streaming answer that is a `chat.completion`
    breaks the rules a stream of it would; any other value has nothing to check."""
    if type(value) is not dict or value.get("object") != "chat.completion":
        return
    adapter = ChatAdapter(
        finish_reasons=finish_reasons(allowed),
        tool_choice=body.get("tool_choice"),
        text=False,
        profile=OPENAI if profile is None else named(profile),
    )
    choices = value.get("choices")
    for choice in choices if type(choices) is list else [None]:
        adapter.feed(_as_chunk(value, choice if type(choice) is dict else {}))
    adapter.feed(DONE)
    adapter.finish()


def _as_chunk(completion: dict[str, Any], choice: dict[str, Any]) -> dict[str, Any]:
    """One choice of a completion as the chunk a stream of it would end with."""
    message = choice.get("message")
    if type(message) is not dict:
        message = {}
    delta: dict[str, Any] = {
        key: message[key] for key in ("content", "refusal") if message.get(key) is not None
    }
    calls = message.get("tool_calls")
    if calls:
        delta["tool_calls"] = [
            {**(call if type(call) is dict else {}), "index": index}
            for index, call in enumerate(calls if type(calls) is list else [None])
        ]
    return {
        "id": completion.get("id"),
        "object": "chat.completion.chunk",
        "choices": [
            {
                "index": choice.get("index"),
                "delta": delta,
                "finish_reason": choice.get("finish_reason"),
            }
        ],
    }


def claims(method: str, path: str) -> bool:
    """Whether a request is a Chat Completions call: `POST .../chat/completions`."""
    return method.upper() == "POST" and path.endswith("/chat/completions")


def answer_check(
    method: str,
    path: str,
    params: Mapping[str, str],
    content: bytes,
    allowed: Collection[str],
    profile: str | None,
) -> AnswerCheck | None:
    """How the answer to a Chat call is checked (None for another request): as its body's
    `stream` and `tool_choice` say, under the compatible server's `profile`."""
    if not claims(method, path):
        return None
    body = request_json(content)

    def reader() -> ChatReader:
        return reader_for(body, allowed=allowed, profile=profile)

    def check_value(value: object) -> None:
        check_completion(value, body, allowed=allowed, profile=profile)

    return AnswerCheck(PROVIDER, body.get("stream") is True, reader, check_value)
