"""The strict Chat Completions adapter: chunk dicts in, internal `ModelEvent`s out.

Theory of operation
-------------------
`ChatAdapter` is a sans-IO state machine, as Anthropic's `StreamAdapter` is.
`feed(item)` takes one SSE `data` object of a `stream=True` Chat Completions answer: a
`chat.completion.chunk` dict, an `{"error": ...}` line's dict, or `DONE` (the `[DONE]`
sentinel, the string itself). It returns the internal events the item completes;
`finish()` is called once the body is exhausted and returns the final `DoneEvent` or
raises. SDK chunk objects are read as the dicts their lines held (`wire_dict`).

State:
- the completion id of the first chunk read (every later chunk must carry it), and
  whether `[DONE]` was seen (nothing may follow it);
- the open tool calls, keyed by their `tool_calls[].index`, in opening order: a call is
  opened by a piece with an integer `index`, an `id` and a `function.name`; later pieces
  of that index add `arguments` text (repeating the same `id` or name is tolerated and
  kept once; an empty one, `""`, is none);
- choice 0's `finish_reason`. It completes the answer: at it the finish reason is
  judged, then the calls; each call's joined `arguments` are parsed once, and every call
  is yielded, in opening order. After it, choice 0 may only repeat it with an empty delta.

`feed` reads the two chunks almost every body is made of, choice 0's lone `content` and
a lone piece of an open call's `arguments`, on a fast path of its own, which takes
nothing the full rules (`_feed`) would refuse or read otherwise and leaves them the rest.

Passed over: Azure's filter chunks (`object: ""`) and the usage chunk (`choices: []`),
`reasoning_content` / `reasoning` deltas, `annotations`, `role`, `logprobs`, `audio` and
any field the adapter does not know. SSE comments never reach it: they are not `data`. A
`content` that is not a string (a list of parts, an object) is refused
(`non_string_content`), never passed over: the answer's text would be lost.

Policy, as `StreamAdapter(stop_reasons=...)` is for Anthropic: `finish_reasons` are the
finish reasons that complete an answer (by default `stop` and `tool_calls`: `length`
and `content_filter` cut it, `function_call` is the deprecated API whose calls the
adapter does not assemble); `refusal_is_answer=True` yields a refusal's text as text
instead of raising `refusal`. The request's `tool_choice` is a constructor argument:
when it named a function or was `required`, OpenAI finishes its forced calls with
`stop`, which is then no `stop_with_tool_calls`. `profile` (`profiles`, default
`OPENAI`, which loosens nothing) is a compatible server's knobs: `stop` finishing open
calls read as `tool_calls` (`finish_reason` is the reason as read), pieces without an
`index` read as the index they must have (`index_of`), a list `content` read by its
`text` parts (`PASSED_OVER_PARTS` yield nothing), chunks each with another `id`. None
touches the fast path.

Items are dispatched on dict keys, never on classes. Any violation raises
`StreamProtocolError` (provider `"openai-chat"`); an `{"error": ...}` line raises the
`APIErrorEvent` replay reports as `api_error:<type>`. The machine then stays failed:
every later call raises a new error of the same kind, chained from the first.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from harness._events import (
    DoneEvent,
    ModelEvent,
    TextEvent,
    ToolCall,
    ToolCallEvent,
    new_event,
    set_text,
)
from harness._exceptions import APIErrorEvent, StreamProtocolError, check_usable
from harness._providers.openai_chat.errors import PROVIDER
from harness._providers.openai_chat.profiles import OPENAI, Profile
from harness._providers.openai_shared import (
    api_error,
    call_input,
    carries_error,
    shown,
    wire_dict,
)

__all__ = [
    "COMPLETE_FINISH_REASONS",
    "DONE",
    "PASSED_OVER_PARTS",
    "ChatAdapter",
    "ato_model_events",
    "forces_tool_call",
    "request_options",
    "to_model_events",
]

#: the `[DONE]` sentinel that ends a Chat Completions body, as `feed` takes it
DONE: Final = "[DONE]"

#: The finish reasons that complete an answer by default: anything else left it unfinished.
COMPLETE_FINISH_REASONS: frozenset[str] = frozenset({"stop", "tool_calls"})

#: choice 0's `index`, as the fast path finds it: `is`, the same int object, which only
#: an int 0 is (CPython keeps one object for each small int, and JSON parsers return it);
#: a `False` or `0.0` is read by `_feed`, which refuses it
_CHOICE_0: Final = 0

#: no chunk read yet (a chunk's id may itself be None)
_UNSET: Final = object()


#: the parts of a list `content` a profile that reads them passes over: the model's
#: reasoning (`thinking`) and its sources (`reference`, `tool_reference`), as Mistral sends them
PASSED_OVER_PARTS: Final = frozenset({"thinking", "reference", "tool_reference"})


def _shape(content: object) -> str:
    """What a `content` that is not text is, as `non_string_content` names it."""
    if type(content) is list:
        return "a list"
    if type(content) is dict:
        return "an object"
    return "a boolean" if type(content) is bool else "a number"


def forces_tool_call(tool_choice: object) -> bool:
    """Whether a request's `tool_choice` forces a call (`required`, or a named function):
    OpenAI then finishes with `stop`, not `tool_calls`."""
    return tool_choice == "required" or (
        isinstance(tool_choice, dict) and tool_choice.get("type") in ("function", "custom")
    )


def _error(code: str, **fields: object) -> StreamProtocolError:
    return StreamProtocolError(code, provider=PROVIDER, **fields)


@dataclass(slots=True)
class _Call:
    id: str
    name: str
    #: the `arguments` pieces, joined once at the finish (`+=` on a str is quadratic here)
    pieces: list[str] = field(default_factory=list)
    non_string: bool = False


class ChatAdapter:
    """One Chat Completions body's `data` objects -> internal events. See the module."""

    def __init__(
        self,
        *,
        finish_reasons: Collection[str] = COMPLETE_FINISH_REASONS,
        refusal_is_answer: bool = False,
        tool_choice: object = None,
        text: bool = True,
        profile: Profile = OPENAI,
    ) -> None:
        self._finish_reasons = finish_reasons
        self._refusal_is_answer = refusal_is_answer
        self._forced = forces_tool_call(tool_choice)
        #: the profile's knobs (`profiles`): `stop` read as `tool_calls` when calls are
        #: open; a piece without an integer `index` read as the index it must have
        self._stop_finishes_calls = profile.stop_finishes_calls
        self._unindexed = profile.unindexed_pieces
        #: a list `content` read by its parts; chunks' ids not compared with the first's
        self._content_parts = profile.content_parts
        self._varying_ids = profile.varying_chunk_ids
        #: the finish reason as read: `tool_calls` where the profile read a `stop` so
        self.finish_reason: object = None
        #: False: the same rules, but no `TextEvent` built (as `StreamAdapter(text=False)`)
        self._text = text
        self._id: object = _UNSET
        self._done = False
        self._calls: dict[int, _Call] = {}
        self._finish_reason: object = None
        self._error: StreamProtocolError | APIErrorEvent | None = None
        self._finished = False
        #: no error, no finish reason, no `[DONE]`, not finished: the text fast path's state
        self._reading = True

    @property
    def open_tool_calls(self) -> tuple[int, ...]:
        """The indexes of the calls opened and not yet yielded, in opening order."""
        return () if self._finish_reason is not None else tuple(self._calls)

    def feed(self, item: Any) -> list[ModelEvent]:
        """Take one `data` object (a chunk dict, an error line, `DONE`); return the events
        it completes."""
        if self._reading and type(item) is dict:
            # Almost every chunk is choice 0's text (`{"content": ...}` alone) or a piece of
            # an open call's arguments: read them in the fewest steps, raising nothing
            # (`_feed` applies every rule to the rest, and to a chunk lacking a key read here).
            try:
                choices = item["choices"]
                if type(choices) is list:
                    [choice] = choices
                    if (
                        type(choice) is dict
                        and choice["index"] is _CHOICE_0
                        and choice.get("finish_reason") is None
                        and item["id"] == self._id
                        and "error" not in item
                        and item.get("object") != ""
                    ):
                        delta = choice["delta"]
                        if type(delta) is dict and len(delta) == 1:
                            content = delta.get("content")
                            if type(content) is str:
                                if content and self._text:
                                    text = new_event(TextEvent)
                                    set_text(text, content)
                                    return [text]
                                return []
                            if self._took_piece(delta.get("tool_calls")):
                                return []
            except (KeyError, ValueError):  # a key missing, not one choice
                pass
        if self._error is not None or self._finished:
            self._check_usable()
        try:
            return self._feed(item)
        except (StreamProtocolError, APIErrorEvent) as error:
            self._error = error
            self._reading = False
            raise

    def _took_piece(self, pieces: object) -> bool:
        """Whether `pieces` is one piece of an open call's `arguments`, and nothing else
        (no `id`, no name): then taken, as `_pieces` would."""
        if type(pieces) is list and len(pieces) == 1:
            piece = pieces[0]
            if type(piece) is dict and len(piece) == 2:
                function = piece.get("function")
                index = piece.get("index")
                if type(function) is dict and len(function) == 1 and type(index) is int:
                    arguments = function.get("arguments")
                    call = self._calls.get(index)
                    if call is not None and type(arguments) is str:
                        call.pieces.append(arguments)
                        return True
        return False

    def finish(self) -> list[ModelEvent]:
        """The body is exhausted: check the end rules and return `[DoneEvent()]`."""
        self.check_end()
        self._finished = True
        self._reading = False
        return [DoneEvent()]

    def check_end(self) -> None:
        """Raise now what `finish()` would raise if the body ended here; the machine goes on."""
        self._check_usable()
        try:
            if self._finish_reason is None and self._calls:
                raise self._unfinished()
            if not self._done:
                raise _error("missing_done")
            if self._finish_reason is None:
                raise _error("missing_finish_reason")
        except StreamProtocolError as error:
            self._error = error
            self._reading = False
            raise

    def _check_usable(self) -> None:
        check_usable(self._error, self._finished, "ChatAdapter")

    def _unfinished(self) -> StreamProtocolError:
        indexes = ", ".join(str(index) for index in self._calls)
        return _error("unfinished_tool_calls", indexes=indexes)

    def _feed(self, item: Any) -> list[ModelEvent]:
        if self._done:
            raise _error("chunk_after_done")
        if type(item) is not dict:
            if item == DONE:
                if self._finish_reason is None and self._calls:
                    raise self._unfinished()
                self._done = True
                self._reading = False
                return []
            item = wire_dict(item)
            if type(item) is not dict:
                item = {}
        chunk: dict[str, Any] = item
        if carries_error(chunk):
            details = chunk["error"]
            name = (details.get("type") or details.get("code")) if type(details) is dict else None
            raise api_error(details, name, chunk)
        choices = chunk.get("choices")
        if not choices or chunk.get("object") == "":
            return []  # the usage chunk, Azure's filter chunks: nothing of the answer
        ident = chunk.get("id")
        if ident != self._id:
            if self._id is _UNSET:
                self._id = ident
            elif not self._varying_ids:
                raise _error("inconsistent_chunk", got=ident, expected=self._id)
        events: list[ModelEvent] = []
        for choice in choices if type(choices) is list else [None]:
            if type(choice) is not dict:
                choice = {}
            index = choice.get("index")
            if index != 0 or type(index) is not int:
                raise _error("multiple_choices", choice=shown(index))
            delta = choice.get("delta")
            if type(delta) is not dict:
                delta = {}
            reason = choice.get("finish_reason")
            if self._finish_reason is not None:
                self._after_finish(delta, reason)
                continue
            content = delta.get("content")
            if type(content) is str:
                if content and self._text:
                    events.append(TextEvent(content))
            elif content is not None:
                events += self._parts(content)
            refusal = delta.get("refusal")
            if refusal:
                if not self._refusal_is_answer:
                    raise _error("refusal")
                if type(refusal) is str and self._text:
                    events.append(TextEvent(refusal))
            pieces = delta.get("tool_calls")
            if pieces:
                self._pieces(pieces)
            if reason is not None:
                events += self._at_finish(reason)
        return events

    def _parts(self, content: object) -> list[ModelEvent]:
        """A `content` that is not text: refused, unless the profile reads a list of parts
        (`content_parts`): its `text` parts are the answer's text, in order."""
        if not self._content_parts or type(content) is not list:
            raise _error("non_string_content", shape=_shape(content))
        events: list[ModelEvent] = []
        for part in content:
            kind = part.get("type") if type(part) is dict else None
            text = part.get("text") if kind == "text" else None
            if type(text) is str:
                if text and self._text:
                    events.append(TextEvent(text))
            elif kind not in PASSED_OVER_PARTS:
                raise _error(
                    "non_string_content", shape=f"a list with a part of type {shown(kind)}"
                )
        return events

    def _pieces(self, pieces: Any) -> None:
        for piece in pieces if type(pieces) is list else [None]:
            if type(piece) is not dict:
                piece = {}
            index = piece.get("index")
            function = piece.get("function")
            if type(function) is not dict:
                function = {}
            ident = piece.get("id")
            name = function.get("name")
            if index is None and self._unindexed:
                index = self.index_of(ident)
            # A negative index is refused: the SDK reads -1 as "the last call" and merges.
            call = self._calls.get(index) if type(index) is int and index >= 0 else None
            if call is None:
                if type(index) is not int or index < 0:
                    raise _error(
                        "incomplete_tool_call_start",
                        at=shown(index),
                        part="non-negative integer index",
                    )
                if ident is None and name is None:
                    raise _error("orphan_arguments_delta", index=index)
                if not ident or type(ident) is not str:
                    raise _error("incomplete_tool_call_start", at=index, part="id")
                if not name or type(name) is not str:
                    raise _error("incomplete_tool_call_start", at=index, part="function name")
                call = self._calls[index] = _Call(ident, name)
            else:  # an empty `id` or name on a later piece is none (LM Studio sends `""`)
                if ident and ident != call.id:
                    raise _error("duplicate_tool_call", index=index, part="id")
                if name and name != call.name:
                    raise _error("duplicate_tool_call", index=index, part="function name")
            arguments = function.get("arguments")
            if arguments is not None:
                if type(arguments) is str:
                    call.pieces.append(arguments)
                else:  # a number or an object where text belongs: not parsable
                    call.non_string = True

    def index_of(self, ident: object) -> int | None:
        """The `index` an unindexed piece carrying `ident` (None: no `id`) is read as,
        under a profile that reads them: the open call of that id, else the next index
        for a new id; the one open call for none; None (refused) when ambiguous."""
        if isinstance(ident, str) and ident:
            for index, call in self._calls.items():
                if call.id == ident:
                    return index
            return max(self._calls, default=-1) + 1
        if len(self._calls) == 1:
            return next(iter(self._calls))
        return None

    def _at_finish(self, reason: object) -> list[ModelEvent]:
        """Choice 0 finished: judge the reason, then the calls; yield the calls."""
        self._finish_reason = reason
        self._reading = False
        if not isinstance(reason, str) or reason not in self._finish_reasons:
            shown_reason = reason if isinstance(reason, str) and reason else shown(reason)
            raise _error("unsupported_finish_reason", finish_reason=shown_reason)
        count = len(self._calls)
        self.finish_reason = reason
        if reason == "stop" and count and not self._forced:
            if not self._stop_finishes_calls:
                raise _error("stop_with_tool_calls", count=count)
            self.finish_reason = "tool_calls"
        if reason == "tool_calls" and not count:
            raise _error("tool_calls_without_tool_calls")
        events: list[ModelEvent] = []
        for index, call in self._calls.items():
            if call.non_string:
                raise _error("invalid_tool_json", index=index)
            arguments = call_input("".join(call.pieces), index, PROVIDER)
            events.append(ToolCallEvent(ToolCall(call.id, call.name, arguments)))
        return events

    def _after_finish(self, delta: dict[str, Any], reason: object) -> None:
        """Choice 0 after its finish: an empty delta, repeating the reason or not, only."""
        if delta.get("content"):
            what = "content"
        elif delta.get("refusal"):
            what = "a refusal"
        elif delta.get("tool_calls"):
            what = "a tool call piece"
        elif delta.get("function_call"):
            what = "a function_call"
        elif reason is not None and reason != self._finish_reason:
            what = f"finish_reason {reason}"
        else:
            return
        raise _error("chunk_after_finish", what=what)


def request_options(request: Mapping[str, Any]) -> dict[str, Any]:
    """The adapter keywords the request an answer was asked with implies: its
    `tool_choice` (a forced call finishes with `stop`), for replay from a cassette's header."""
    choice = request.get("tool_choice")
    return {} if choice is None else {"tool_choice": choice}


def to_model_events(
    items: Iterable[Any], *, done_at_end: bool = False, **options: Any
) -> Iterator[ModelEvent]:
    """Adapt a sync stream of `data` objects (chunk dicts, or the SDK's chunk objects).

    The SDK's own iteration (`client.chat.completions.create(..., stream=True)`) consumes
    `[DONE]` and ends the same way without it: pass `done_at_end=True` to feed `DONE`
    after its last chunk (`missing_done` is then the wire's rule, not checked here).
    `options` are `ChatAdapter`'s.
    """
    adapter = ChatAdapter(**options)
    for item in items:
        yield from adapter.feed(item)
    if done_at_end:
        yield from adapter.feed(DONE)
    yield from adapter.finish()


async def ato_model_events(
    items: AsyncIterable[Any], *, done_at_end: bool = False, **options: Any
) -> AsyncIterator[ModelEvent]:
    """Adapt an async stream of `data` objects; the same machine as `to_model_events`."""
    adapter = ChatAdapter(**options)
    async for item in items:
        for event in adapter.feed(item):
            yield event
    for event in adapter.feed(DONE) if done_at_end else []:
        yield event
    for event in adapter.finish():
        yield event
