"""The strict Responses adapter: `response.*` event dicts in, internal `ModelEvent`s out.

Theory of operation
-------------------
`ResponsesAdapter` is a sans-IO state machine, as Anthropic's `StreamAdapter` is.
`feed(event)` takes one SSE `data` object of a streamed Responses answer (each carries
its `type` and `sequence_number`) and returns the internal events it completes;
`finish()` is called once the body is exhausted and returns the final `DoneEvent` or
raises. SDK event objects are read as the dicts their lines held (`wire_dict`).

State:
- the next `sequence_number` (0 for a fresh stream, N+1 for a resumed one: every event
  must carry exactly it; a fresh stream whose `response.created` has none, as the API's
  before mid-2025, is unnumbered, and every event must then have none), the response
  id of `response.created` (every lifecycle event must carry it), and the terminal event
  once seen (nothing may follow it);
- the output items added and not yet done, keyed by `output_index`, each with its type
  and id, its content parts (`content_index`: open or done, each with the text the
  stream delivered in it and its `.done` text) and, for a `function_call`, its
  `arguments` deltas; and the items already done, by index, each with its done item (a
  delta there is an orphan, as at one never added);
- for `feed`'s fast path, which reads a text delta at the part the last text delta read
  by the full rules was at, or an arguments delta at that one's item, while no other
  event came between (almost every event, in the fewest steps): those indexes and the
  part's or item's pieces. Any other event, an error and the finish clear them.

A `function_call` is yielded at its `output_item.done`, `call_id` as its id: the done
item's `arguments` must equal the joined deltas, if any came (a call with none was sent
whole, as LM Studio sends it), and the `arguments.done` event's, and parse as a JSON
object (`{}` when empty). Text is yielded at each `output_text.delta`.

The terminal event that completes the answer (`response.completed`, or an accepted
`response.incomplete`) must not contradict the stream, as a call's final `arguments`
must not contradict its deltas: `responses.stream().get_final_response()` takes the
answer from its `response.output`, so an output that says "Rome" after deltas that said
"Paris" is `output_mismatch`. Each output item must be the item done at its index (the
same type and id as added and done, a message's parts of the same types with the text
the stream delivered in each, its deltas and its `.done` text; a call's `call_id`, `name`
and `arguments` as done); an item the stream never delivered, or one it delivered that
the output lacks, is a mismatch too. An absent or empty `output` says nothing to
contradict (the SDK then keeps the items done, as `framing.response_from_events` does).
Reasoning items, hosted-tool items (web and file search, MCP calls and tool lists, code
interpreter, image generation, tool search, compaction) and their events, annotations
and event types the adapter does not know yield nothing, as thinking does for Anthropic.
An item that asks the client to act in a way no `ToolCallEvent` says (`custom_tool_call`,
whose input is free text; `computer_call`, `local_shell_call`, `shell_call`,
`apply_patch_call`, `mcp_approval_request`, any type not known) is refused.

A resumed stream (`GET /v1/responses/{id}?stream=true&starting_after=N`, the
constructor's `starting_after=N`) starts at sequence N+1 without `response.created`; an
output index it has not seen is taken as added before the resume point (open, its
deltas then not compared with the final `arguments`, nor a part's with the output's
text: its `.done` text and done item still are); an output item at an index the stream
never showed was done before the resume point, and is not judged.

Policy, as `StreamAdapter(stop_reasons=...)` is for Anthropic: `incomplete_reasons` are
the `incomplete_details.reason`s whose `response.incomplete` still completes an answer
(none by default: `max_output_tokens` and `content_filter` cut it); `refusal_is_answer`
yields a refusal's text as text instead of raising `refusal`.

Events are dispatched on their `type` strings, never on classes. Any violation raises
`StreamProtocolError` (provider `"openai-responses"`); an `error` event, flat (`code`,
`message`: the documented shape) or nested (`{"error": {...}}`, which the SDK raises
for), raises the `APIErrorEvent` replay reports as `api_error:<code>`. The machine then
stays failed: every later call raises a new error of the same kind, chained from the first.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, TypeGuard

from harness._events import (
    DoneEvent,
    ModelEvent,
    TextEvent,
    ToolCall,
    ToolCallEvent,
    new_event,
    set_text,
    text_event,
)
from harness._exceptions import APIErrorEvent, StreamProtocolError, check_usable
from harness._providers.openai_responses.errors import PROVIDER
from harness._providers.openai_shared import api_error, call_input, shown, wire_dict

__all__ = [
    "PASSED_OVER_ITEMS",
    "ResponsesAdapter",
    "ato_model_events",
    "request_options",
    "to_model_events",
]

#: Output item types that yield nothing: reasoning, and tools the API runs itself.
PASSED_OVER_ITEMS: Final = frozenset(
    {
        "reasoning",
        "web_search_call",
        "file_search_call",
        "mcp_call",
        "mcp_list_tools",
        "code_interpreter_call",
        "image_generation_call",
        "tool_search_call",
        "tool_search_output",
        "compaction",
    }
)

#: the event types that carry the response and must carry its id
_LIFECYCLE: Final = frozenset(
    {
        "response.created",
        "response.queued",
        "response.in_progress",
        "response.completed",
        "response.incomplete",
        "response.failed",
    }
)

_TEXT_DELTA: Final = "response.output_text.delta"
_ARGUMENTS_DELTA: Final = "response.function_call_arguments.delta"

#: where the fast path reads no delta: no event holds this object. It finds an event at
#: the index of the one before by `is`, the same int object, which only an int of that
#: value is (CPython keeps one object for each small int, and JSON parsers return it):
#: a bool or a float of that value, or an index past 256, is read by `_feed`, never wrongly.
_NOWHERE: Final = object()


def _error(code: str, **fields: object) -> StreamProtocolError:
    return StreamProtocolError(code, provider=PROVIDER, **fields)


def _dict(value: Any) -> dict[str, Any]:
    return value if type(value) is dict else {}


def _whole(index: Any) -> TypeGuard[int]:
    """An index the SDK reads as its position: a non-negative integer (it reads -1 as the last)."""
    return type(index) is int and index >= 0


@dataclass(slots=True)
class _Part:
    """One content part of a message as the stream delivered it."""

    type: Any = None
    #: opened before a resume point: its first deltas are unseen
    resumed: bool = False
    #: the text yielded for it (its starting text, its deltas), joined once at the end
    pieces: list[str] = field(default_factory=list)
    #: the text its `output_text.done` (or `refusal.done`) carried, if one came
    done_text: Any = None


@dataclass(slots=True)
class _Item:
    type: Any
    #: added before a resume point: its parts and deltas are partly unseen
    resumed: bool = False
    id: Any = None
    parts: set[int] = field(default_factory=set)
    done_parts: set[int] = field(default_factory=set)
    #: every content part seen, open or done, by `content_index`
    contents: dict[int, _Part] = field(default_factory=dict)
    #: the item its `output_item.done` carried
    final: dict[str, Any] = field(default_factory=dict)
    #: the `arguments` deltas, joined once at the done (`+=` on a str is quadratic here)
    pieces: list[str] = field(default_factory=list)
    non_string: bool = False
    done_arguments: Any = None


class ResponsesAdapter:
    """One streamed Responses answer's events -> internal events. See the module."""

    def __init__(
        self,
        *,
        incomplete_reasons: Collection[str] = (),
        refusal_is_answer: bool = False,
        starting_after: int | None = None,
        text: bool = True,
    ) -> None:
        self._incomplete_reasons = incomplete_reasons
        self._refusal_is_answer = refusal_is_answer
        self._resumed = starting_after is not None
        #: False: the same rules, but no `TextEvent` built (as `StreamAdapter(text=False)`)
        self._text = text
        #: the next `sequence_number`; None in a stream whose first event had none
        self._next: int | None = 0 if starting_after is None else starting_after + 1
        self._started = self._resumed
        self._response_id: Any = None
        self._terminal: str | None = None
        self._items: dict[int, _Item] = {}
        #: the items done, by output index: what the terminal event's output must say
        self._done: dict[int, _Item] = {}
        self._error: StreamProtocolError | APIErrorEvent | None = None
        self._finished = False
        #: where `feed`'s fast path reads deltas: the `output_index` and `content_index`
        #: objects and the part's pieces of the text delta `_feed` read last, and the
        #: `output_index` object and the pieces of the arguments delta it read last, while
        #: no other event came
        self._leave_fast_path()

    @property
    def open_output_items(self) -> tuple[int, ...]:
        """The output indexes added and not yet done, in the order they were added."""
        return tuple(self._items)

    def feed(self, event: Any) -> list[ModelEvent]:
        """Take one event (a dict, or the SDK's object); return the events it completes."""
        if type(event) is dict:
            # Almost every event is a delta of text or of a call's arguments, where the one
            # before it was: read it in the fewest steps, raising nothing (`_feed` reads any
            # other event, and one lacking a key read here).
            try:
                number = event["sequence_number"]
                if number == self._next and type(number) is int and "error" not in event:
                    kind = event["type"]
                    delta = event["delta"]
                    if (
                        kind == _TEXT_DELTA
                        and event["output_index"] is self._text_output
                        and event["content_index"] is self._text_content
                        and type(delta) is str
                    ):
                        self._next = number + 1
                        if delta:
                            self._text_pieces.append(delta)
                            if self._text:
                                text = new_event(TextEvent)
                                set_text(text, delta)
                                return [text]
                        return []
                    if (
                        kind == _ARGUMENTS_DELTA
                        and event["output_index"] is self._arguments_output
                        and type(delta) is str
                    ):
                        self._next = number + 1
                        self._arguments.append(delta)
                        return []
            except KeyError:
                pass
        self._leave_fast_path()
        if self._error is not None or self._finished:
            self._check_usable()
        try:
            if type(event) is not dict:
                event = _dict(wire_dict(event))
            return self._feed(event)
        except (StreamProtocolError, APIErrorEvent) as error:
            self._error = error
            raise

    def _leave_fast_path(self) -> None:
        """Every event the fast path does not read, an error and the finish end its run."""
        self._text_output: object = _NOWHERE
        self._text_content: object = _NOWHERE
        self._text_pieces: list[str] = []
        self._arguments_output: object = _NOWHERE
        self._arguments: list[str] = []

    def finish(self) -> list[ModelEvent]:
        """The body is exhausted: check the end rules and return `[DoneEvent()]`."""
        self.check_end()
        self._finished = True
        self._leave_fast_path()
        return [DoneEvent()]

    def check_end(self) -> None:
        """Raise now what `finish()` would raise if the body ended here; the machine goes on."""
        self._check_usable()
        if self._terminal is None:
            self._error = _error("missing_response_completed")
            self._leave_fast_path()
            raise self._error

    def _check_usable(self) -> None:
        check_usable(self._error, self._finished, "ResponsesAdapter")

    def _feed(self, event: dict[str, Any]) -> list[ModelEvent]:
        kind = event.get("type")
        if type(kind) is not str:  # no type, or what a server should not have sent
            kind = shown(kind)
        if self._terminal is not None:
            raise _error("event_after_response_completed", event_type=kind, terminal=self._terminal)
        nested = event.get("error")
        if nested:  # the SDK raises for any line whose `error` is set
            details = _dict(nested)
            raise api_error(details, details.get("code") or details.get("type"), event)
        if kind == "error":
            details = {key: event.get(key) for key in ("code", "message", "param")}
            raise api_error(details, event.get("code"), event)
        first = not self._started
        if first:
            if kind != "response.created":
                raise _error("missing_response_created", event_type=kind)
            self._started = True
        number = event.get("sequence_number")
        if self._next is None or (first and number is None):
            # unnumbered (the API before mid-2025, some servers): the first event decides,
            # and a number after it is as broken as a number missing in a numbered stream
            if number is not None:
                raise _error("sequence_gap", event_type=kind, got=shown(number), expected="none")
            self._next = None
        elif type(number) is int and number == self._next:
            self._next = number + 1
        else:
            raise _error("sequence_gap", event_type=kind, got=shown(number), expected=self._next)
        if kind == _TEXT_DELTA:  # almost every event: first, in the fewest steps
            pieces = self._part(event, kind).pieces
            self._text_output = event["output_index"]
            self._text_content = event["content_index"]
            self._text_pieces = pieces
            delta = event.get("delta")
            if delta and type(delta) is str:
                pieces.append(delta)
                return [text_event(delta)] if self._text else []
            return []
        if kind in _LIFECYCLE:
            return self._lifecycle(kind, event)
        if kind == "response.output_item.added":
            return self._added(event)
        if kind == "response.output_item.done":
            return self._item_done(event)
        if kind == _ARGUMENTS_DELTA:
            item = self._item(event, kind)
            piece = event.get("delta")
            if type(piece) is str:
                item.pieces.append(piece)
                self._arguments_output = event["output_index"]
                self._arguments = item.pieces
            else:  # a number or an object where text belongs: not parsable
                item.non_string = True
        elif kind == "response.function_call_arguments.done":
            self._item(event, kind).done_arguments = event.get("arguments")
        elif kind == "response.refusal.delta":
            refused = self._part(event, kind)
            refusal = event.get("delta")
            if refusal:
                if not self._refusal_is_answer:
                    raise _error("refusal", index=event.get("output_index"))
                if type(refusal) is str:
                    refused.pieces.append(refusal)
                    if self._text:
                        return [TextEvent(refusal)]
        elif kind == "response.content_part.added":
            item = self._item(event, kind)
            index = event.get("content_index")
            part = _dict(event.get("part"))
            if _whole(index):
                item.parts.add(index)
                opened = item.contents.setdefault(index, _Part(part.get("type")))
                if part.get("type") == "output_text" and part.get("text"):
                    if type(part["text"]) is str:
                        opened.pieces.append(part["text"])
                    if self._text:
                        return [TextEvent(part["text"])]
            elif part.get("type") == "output_text" and part.get("text") and self._text:
                return [TextEvent(part["text"])]
        elif kind == "response.content_part.done":
            self._part(event, kind)
            item, index = self._items[event["output_index"]], event["content_index"]
            item.parts.discard(index)
            item.done_parts.add(index)
        elif kind == "response.output_text.done":
            self._part(event, kind).done_text = event.get("text")
        elif kind == "response.refusal.done":
            self._part(event, kind).done_text = event.get("refusal")
        # reasoning, annotations, hosted tools' progress, kinds added later: nothing.
        return []

    def _item(self, event: dict[str, Any], kind: Any) -> _Item:
        """The open item an event names by `output_index`, or `orphan_delta`."""
        index = event.get("output_index")
        item = self._items.get(index) if _whole(index) else None
        if item is None:
            if not self._resumed or not _whole(index) or index in self._done:
                raise _error("orphan_delta", event_type=kind, part="output item", at=shown(index))
            item = self._items[index] = _Item(None, resumed=True)
        return item

    def _part(self, event: dict[str, Any], kind: Any) -> _Part:
        """The open content part an event names (of an open item), or `orphan_delta`."""
        item = self._item(event, kind)
        index = event.get("content_index")
        if not _whole(index) or index not in item.parts:
            if not item.resumed or not _whole(index) or index in item.done_parts:
                part = f"content part {shown(index)}"
                raise _error("orphan_delta", event_type=kind, part=part, at=event["output_index"])
            item.parts.add(index)
            item.contents[index] = _Part(resumed=True)
        return item.contents[index]

    def _added(self, event: dict[str, Any]) -> list[ModelEvent]:
        index = event.get("output_index")
        if not _whole(index):
            raise _error(
                "orphan_delta", event_type=event["type"], part="output item", at=shown(index)
            )
        if index in self._items or index in self._done:
            raise _error("duplicate_output_item", index=index)
        added = _dict(event.get("item"))
        kind = added.get("type")
        self._check_supported(index, kind)
        self._items[index] = _Item(kind, id=added.get("id"))
        return []

    @staticmethod
    def _check_supported(index: int, kind: Any) -> None:
        # `type(kind) is not str` first: a list or object there is no item type, and no
        # frozenset can look it up
        if (
            kind != "message"
            and kind != "function_call"
            and (type(kind) is not str or kind not in PASSED_OVER_ITEMS)
        ):
            raise _error("unsupported_output_item", index=index, item_type=kind)

    def _item_done(self, event: dict[str, Any]) -> list[ModelEvent]:
        item = self._item(event, event["type"])
        index: int = event["output_index"]
        del self._items[index]
        self._done[index] = item
        final = item.final = _dict(event.get("item"))
        kind = final.get("type")
        self._check_supported(index, kind)
        if kind != "function_call":
            return []
        arguments = final.get("arguments")
        if item.non_string or type(arguments) is not str:
            raise _error("invalid_tool_json", index=index)
        # No delta at all is a call sent whole (LM Studio): its done item's arguments are it.
        streamed = not item.resumed and bool(item.pieces)
        if (streamed and "".join(item.pieces) != arguments) or (
            item.done_arguments is not None and item.done_arguments != arguments
        ):
            raise _error("arguments_mismatch", index=index)
        call_id, name = final.get("call_id"), final.get("name")
        if not call_id or type(call_id) is not str:
            raise _error(
                "unsupported_output_item", index=index, item_type="function_call without a call_id"
            )
        if not name or type(name) is not str:
            raise _error(
                "unsupported_output_item", index=index, item_type="function_call without a name"
            )
        return [ToolCallEvent(ToolCall(call_id, name, call_input(arguments, index, PROVIDER)))]

    def _lifecycle(self, kind: str, event: dict[str, Any]) -> list[ModelEvent]:
        response = _dict(event.get("response"))
        ident = response.get("id")
        if self._response_id is None:
            self._response_id = ident
        elif ident != self._response_id:
            raise _error(
                "inconsistent_response", event_type=kind, got=ident, expected=self._response_id
            )
        if kind == "response.failed":
            details = _dict(response.get("error"))
            raise _error(
                "response_failed",
                error_code=details.get("code"),
                error_message=details.get("message"),
            )
        if kind == "response.incomplete" or (
            kind == "response.completed" and response.get("status") != "completed"
        ):
            reason = _dict(response.get("incomplete_details")).get("reason")
            if (
                kind == "response.completed"
                or not isinstance(reason, str)
                or reason not in self._incomplete_reasons
            ):
                why = "no reason given" if reason is None else reason
                raise _error("response_incomplete", status=response.get("status"), reason=why)
        elif kind != "response.completed":
            return []
        if self._items:
            indexes = ", ".join(str(index) for index in self._items)
            raise _error("unfinished_output_items", event_type=kind, indexes=indexes)
        output = response.get("output")
        if output:  # absent or empty: nothing said to contradict the stream
            what = self._contradiction(output)
            if what is not None:
                raise _error("output_mismatch", terminal=kind, what=what)
        self._terminal = kind
        return []

    def _contradiction(self, output: Any) -> str | None:
        """How a terminal event's `output` contradicts the items the stream delivered, or
        None: each item must be the one done at its index, and every index one of them (in
        a resumed stream, an index it never showed was done before the resume point)."""
        if type(output) is not list:
            return f"it is a {type(output).__name__}, not a list"
        for index in sorted({*range(len(output)), *self._done}):
            item = self._done.get(index)
            if item is None:
                if not self._resumed:
                    return f"item {index} was never streamed"
            elif not 0 <= index < len(output):
                return f"item {index} of the stream is missing"
            else:
                what = _item_contradiction(item, output[index])
                if what is not None:
                    return f"item {index} {what}"
        return None


def _item_contradiction(item: _Item, given: Any) -> str | None:
    """How an output item contradicts the item the stream added and did at its index."""
    if type(given) is not dict:
        return f"is {shown(given)}, not an item"
    final = item.final
    kind = final.get("type")
    for streamed in (kind,) if item.resumed else (item.type, kind):
        if given.get("type") != streamed:
            return f"is of type {shown(given.get('type'))}, streamed as {shown(streamed)}"
    for streamed in (final.get("id"),) if item.resumed else (item.id, final.get("id")):
        if streamed is not None and given.get("id") != streamed:
            return f"has id {shown(given.get('id'))}, streamed as {shown(streamed)}"
    if kind == "function_call":
        for key in ("call_id", "name"):
            if given.get(key) != final.get(key):
                return f"has {key} {shown(given.get(key))}, streamed as {shown(final.get(key))}"
        if given.get("arguments") != final.get("arguments"):
            return "has other arguments than were streamed"
    elif kind == "message":
        return _content_contradiction(item, given.get("content"))
    return None


def _content_contradiction(item: _Item, content: Any) -> str | None:
    """How an output message's `content` contradicts the parts the stream delivered."""
    if content is None:
        content = []
    if type(content) is not list:
        return "has content that is not a list"
    for number in sorted({*range(len(content)), *item.contents}):
        part = item.contents.get(number)
        if part is None:
            if not item.resumed:
                return f"has content part {number}, which was never streamed"
            continue
        if not 0 <= number < len(content):
            return f"lacks content part {number} of the stream"
        given = _dict(content[number])
        kind = given.get("type")
        if part.type is not None and kind != part.type:
            streamed = shown(part.type)
            return f"has content part {number} of type {shown(kind)}, streamed as {streamed}"
        if kind == "output_text" or kind == "refusal":
            text = given.get("refusal" if kind == "refusal" else "text")
            if (not part.resumed and text != "".join(part.pieces)) or (
                part.done_text is not None and text != part.done_text
            ):
                return f"has content part {number} with other text than was streamed"
    return None


def request_options(request: Mapping[str, Any]) -> dict[str, Any]:
    """The adapter keywords the request an answer was asked with implies: a resume's
    `starting_after` (the stream starts at sequence N+1, without `response.created`), for
    replay from a cassette's header (`harness import` keeps the resume `GET` as
    `{"response_id": ..., "starting_after": N}`); a cursor that is no sequence number
    starts the stream afresh, as the guard reads one."""
    after = request.get("starting_after")
    if isinstance(after, int) and not isinstance(after, bool) and after >= 0:
        return {"starting_after": after}
    return {}


def to_model_events(events: Iterable[Any], **options: Any) -> Iterator[ModelEvent]:
    """Adapt a sync stream of Responses events (dicts, or the SDK's event objects of
    `client.responses.create(..., stream=True)`); `options` are `ResponsesAdapter`'s."""
    adapter = ResponsesAdapter(**options)
    for event in events:
        yield from adapter.feed(event)
    yield from adapter.finish()


async def ato_model_events(events: AsyncIterable[Any], **options: Any) -> AsyncIterator[ModelEvent]:
    """Adapt an async stream of Responses events; the same machine as `to_model_events`."""
    adapter = ResponsesAdapter(**options)
    async for event in events:
        for model_event in adapter.feed(event):
            yield model_event
    for model_event in adapter.finish():
        yield model_event
