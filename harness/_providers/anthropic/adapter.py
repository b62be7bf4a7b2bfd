"""The strict adapter: Anthropic raw stream events in, internal `ModelEvent`s out.

Theory of operation
-------------------
`StreamAdapter` is a sans-IO state machine. `feed(event)` takes one raw SDK stream
event and returns the internal events it completes; `finish()` is called once the
input is exhausted and returns the final `DoneEvent` or raises. No I/O happens inside,
so one machine serves both drivers: `to_model_events` (sync) and `ato_model_events`
(async) only pull events and hand them over.

State:
- whether `message_start` was seen (it must come first, `ping` aside) and whether
  `message_stop` was seen (after it only `ping` may arrive); Vertex's `vertex_event`
  (its usage report, which `AnthropicVertex` hands on and its stream helper passes
  over) is passed over as `ping` is, wherever it comes (`PASSED_OVER`);
- the kind of every open content block, keyed by index: `input_json_delta` is only
  legal at an open `tool_use` block, and passed over at a server-side tool block;
- the open `tool_use` blocks, keyed by index, in opening order. Several may be open
  and interleaved; each accumulates its own `partial_json` and is parsed once, at its
  own `content_block_stop` (a delta is only ever a fragment);
- the last `stop_reason` from `message_delta`, and how many tool calls were yielded.

The stop reasons that complete a message are `end_turn` and `tool_use`; a caller that
handles truncation widens them (`StreamAdapter(stop_reasons=...)`, `harness.strict`'s
`allow_stop_reasons=`). `check_end()` applies the end rules early, at `message_stop`,
for a guard that must refuse the event completing a broken answer before passing it on.

Events are dispatched on their `type` strings, never on `isinstance`: the SDK builds an
event of a type it does not know leniently, as an object of some other class.

`feed` also takes an event line's parsed object, a `dict`, as replay and the guard feed
it where nothing of the SDK reaches user code: read as its view (`harness._views`) reads
it, which is what the SDK's object would hold for the same line. The two events almost
every stream is made of, a text delta and a JSON piece of an open tool block, are read
from the dict on a path of their own while a message is under way (`_reading`), with no
view built; it takes nothing the rules would refuse or read otherwise (a key missing, a
`delta` that is not a dict, a piece that is not a string, a block not open), and leaves
the rest to the rules, over the line's view.

Any violation raises `StreamProtocolError`; the machine then stays failed, as h11's
does: every later call raises a new `StreamProtocolError` of the same code, chained
from the first (`__cause__`).
"""

from __future__ import annotations

from collections.abc import (
    AsyncIterable,
    AsyncIterator,
    Collection,
    Iterable,
    Iterator,
    Mapping,
)
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from harness._events import (
    DoneEvent,
    ModelEvent,
    TextEvent,
    ToolCall,
    ToolCallEvent,
    block_key,
    new_event,
    set_text,
    text_event,
    tool_input,
)
from harness._exceptions import StreamProtocolError, check_usable
from harness._json import strict_json
from harness._views import EventView

__all__ = [
    "COMPLETE_STOP_REASONS",
    "PASSED_OVER",
    "StreamAdapter",
    "ato_model_events",
    "to_model_events",
]

#: The stop reasons that complete a message by default: anything else left it unfinished.
COMPLETE_STOP_REASONS: frozenset[str] = frozenset({"end_turn", "tool_use"})
#: The events that carry no part of the message, passed over wherever they come: `ping`,
#: and the `vertex_event` Google Vertex adds to a stream (its usage report).
PASSED_OVER: frozenset[str] = frozenset({"ping", "vertex_event"})


def _is_server_tool(kind: str) -> bool:
    """Blocks the API runs itself (`server_tool_use`, `mcp_tool_use`, ...): never ours to call."""
    return kind != "tool_use" and kind.endswith("_tool_use")


@dataclass(slots=True)
class _ToolBlock:
    id: str
    name: str
    start_input: object
    #: the `partial_json` pieces, joined once at the stop (`+=` on a str is quadratic here)
    json: list[str] = field(default_factory=list)
    received_json_delta: bool = False
    non_string_delta: bool = False


class StreamAdapter:
    """One message's worth of raw stream events -> internal events. See the module docstring."""

    def __init__(
        self, *, stop_reasons: Collection[str] = COMPLETE_STOP_REASONS, text: bool = True
    ) -> None:
        self._complete_stop_reasons = stop_reasons
        #: False: the same rules, but no `TextEvent` built (a guard passing bytes on has no
        #: use for them, and a text delta is almost every event)
        self._text = text
        self._started = False
        self._stopped = False
        self._block_kinds: dict[int, str] = {}
        self._tools: dict[int, _ToolBlock] = {}
        self._tool_indexes_seen: set[int] = set()
        self._stop_reason: str | None = None
        self._tool_calls = 0
        self._error: StreamProtocolError | None = None
        self._finished = False
        #: started, not stopped, no error (so not finished either): a line's fast path's state
        self._reading = False

    @property
    def open_tool_blocks(self) -> tuple[int, ...]:
        """The indexes of the `tool_use` blocks open now, in opening order: a snapshot, which
        the machine never changes (what `harness replay --trace` shows after each event)."""
        return tuple(self._tools)

    @property
    def open_tool_count(self) -> int:
        """How many `tool_use` blocks are open now (`open_tool_blocks`' length, not built)."""
        return len(self._tools)

    def first_open_tool_blocks(self, limit: int) -> tuple[int, ...]:
        """The first `limit` of `open_tool_blocks`, at a cost that does not grow with how
        many are open (the trace's rows, which a stream of open blocks would make quadratic)."""
        return tuple(islice(self._tools, limit))

    def feed(self, event: Any) -> list[ModelEvent]:
        """Take one raw stream event (the SDK's object, or its line's parsed `dict`); return
        the internal events it completes."""
        if type(event) is dict:
            if self._reading:
                # Almost every line is a text delta or a piece of an open tool block's JSON:
                # read them in the fewest steps, raising nothing (the rules read the rest,
                # and a line lacking a key read here, over its view).
                try:
                    delta = event["delta"]
                    if event["type"] == "content_block_delta" and type(delta) is dict:
                        delta_type = delta["type"]
                        if delta_type == "text_delta":
                            if self._text:
                                made = new_event(TextEvent)
                                set_text(made, delta["text"])
                                return [made]
                            return []
                        if delta_type == "input_json_delta":
                            # the look-up finds a block as the rules' does: by equality, so a
                            # `1.0` or a `True` finds block 1, which the view reads as 1, True
                            tool = self._tools.get(event["index"])
                            piece = delta["partial_json"]
                            if tool is not None and type(piece) is str:
                                tool.json.append(piece)
                                tool.received_json_delta = True
                                return []
                except (KeyError, TypeError):  # TypeError: an index no dict can key
                    pass
            event = EventView(event)
        if self._error is not None or self._finished:
            self._check_usable()
        try:
            try:
                kind: str = event.type
            except AttributeError:  # neither a line's dict nor the SDK's event: one of no type
                event = EventView({})
                kind = event.type
            if kind == "content_block_delta" and self._started and not self._stopped:
                delta = event.delta  # almost every event: first, in the fewest steps
                if delta.type == "text_delta":
                    return [text_event(delta.text)] if self._text else []
                return self._block_delta(event, delta)
            return self._feed(kind, event)
        except StreamProtocolError as error:
            self._error = error
            self._reading = False
            raise

    def finish(self) -> list[ModelEvent]:
        """The input is exhausted: check the end-of-stream rules and return `[DoneEvent()]`."""
        self.check_end()
        self._finished = True
        return [DoneEvent()]

    def check_end(self) -> None:
        """Raise now what `finish()` would raise if the input ended here; the machine goes on."""
        self._check_usable()
        try:
            self._check_end()
        except StreamProtocolError as error:
            self._error = error
            self._reading = False
            raise

    def _check_usable(self) -> None:
        check_usable(self._error, self._finished, "StreamAdapter")

    def _feed(self, kind: str, event: Any) -> list[ModelEvent]:
        """`feed` for any event but a content block's delta in a message under way."""
        if kind in PASSED_OVER:
            return []
        if self._stopped:
            raise StreamProtocolError("event_after_message_stop", event_type=kind)
        if not self._started:
            if kind != "message_start":
                raise StreamProtocolError("missing_message_start", event_type=kind)
            self._started = self._reading = True
            return []
        if kind == "content_block_start":
            return self._block_start(block_key(event.index), event.content_block)
        if kind == "content_block_stop":
            return self._block_stop(block_key(event.index))
        if kind == "message_delta":
            self._stop_reason = event.delta.stop_reason
        elif kind == "message_stop":
            self._check_no_open_tools()
            self._stopped = True
            self._reading = False
        # A repeated message_start, and event types the API may add later, yield nothing.
        return []

    def _block_start(self, index: int, block: Any) -> list[ModelEvent]:
        kind: str = block.type
        if index in self._tools or (kind == "tool_use" and index in self._tool_indexes_seen):
            raise StreamProtocolError("duplicate_tool_start", index=index)
        self._block_kinds[index] = kind
        if kind == "tool_use":
            self._tools[index] = _ToolBlock(id=block.id, name=block.name, start_input=block.input)
            self._tool_indexes_seen.add(index)
        elif kind == "text" and self._text and block.text:
            return [TextEvent(block.text)]
        return []

    def _block_delta(self, event: Any, delta: Any) -> list[ModelEvent]:
        """`feed` for a delta of any kind but text (`delta`: the event's)."""
        if delta.type == "input_json_delta":
            index = block_key(event.index)
            tool = self._tools.get(index)
            if tool is not None:
                piece = delta.partial_json
                if isinstance(piece, str):
                    tool.json.append(piece)
                else:  # a broken provider's `null` or number: the input cannot be parsed
                    tool.non_string_delta = True
                tool.received_json_delta = True
            elif not _is_server_tool(self._block_kinds.get(index, "")):
                raise StreamProtocolError("orphan_json_delta", index=index)
        # thinking_delta, signature_delta, citations_delta and kinds added later: nothing.
        return []

    def _block_stop(self, index: int) -> list[ModelEvent]:
        self._block_kinds.pop(index, None)
        tool = self._tools.pop(index, None)
        if tool is None:
            return []
        value = tool.start_input
        if tool.non_string_delta:
            raise StreamProtocolError("invalid_tool_json", index=index)
        text = "".join(tool.json)
        if tool.received_json_delta and text:
            try:
                value = strict_json(text)
            except (ValueError, RecursionError):
                raise StreamProtocolError("invalid_tool_json", index=index) from None
        call = ToolCall(tool.id, tool.name, tool_input(value, index))
        self._tool_calls += 1
        return [ToolCallEvent(call)]

    def _check_no_open_tools(self) -> None:
        if self._tools:
            indexes = ", ".join(str(index) for index in self._tools)
            raise StreamProtocolError("unclosed_tool_blocks", indexes=indexes)

    def _check_end(self) -> None:
        self._check_no_open_tools()
        if not self._stopped:
            raise StreamProtocolError("missing_message_stop")
        reason = self._stop_reason
        if reason is None:
            raise StreamProtocolError("missing_stop_reason")
        if not isinstance(reason, str) or reason not in self._complete_stop_reasons:
            raise StreamProtocolError("unsupported_stop_reason", stop_reason=reason)
        if reason == "end_turn" and self._tool_calls:
            raise StreamProtocolError("end_turn_with_tool_calls", count=self._tool_calls)
        if reason == "tool_use" and not self._tool_calls:
            raise StreamProtocolError("tool_use_without_tool_calls")


def _not_a_stream(function: str, events: object, kind: str, client: str) -> TypeError:
    """The `TypeError` of a `function` given `events` that are no stream (`kind`): told at
    the call, not at the first event read (each event is the rules' to judge)."""
    return TypeError(
        f"{function} takes {kind} of the SDK's raw stream events (what"
        f" {client}.messages.create(..., stream=True) gives), not {type(events).__name__}"
    )


def to_model_events(events: Iterable[Any]) -> Iterator[ModelEvent]:
    """Adapt a sync stream of raw SDK events (e.g. `client.messages.create(..., stream=True)`).

    Strict mode for app code: `for event in to_model_events(stream)` over what
    `client.messages.stream()` yields raises `StreamProtocolError` where the SDK's helper
    accepts a broken stream; its derived events (`text`, `input_json`, ...) pass over.
    `TypeError` at the call for what is no iterable of events (one event, a dict, alone).
    """
    if not isinstance(events, Iterable) or isinstance(events, str | bytes | Mapping):
        raise _not_a_stream("to_model_events", events, "an iterable", "Anthropic()")
    return _adapted(events)


def _adapted(events: Iterable[Any]) -> Iterator[ModelEvent]:
    adapter = StreamAdapter()
    for event in events:
        yield from adapter.feed(event)
    yield from adapter.finish()


def ato_model_events(events: AsyncIterable[Any]) -> AsyncIterator[ModelEvent]:
    """Adapt an async stream of raw SDK events; the same machine as `to_model_events`
    (`TypeError` at the call for a sync one)."""
    if not isinstance(events, AsyncIterable):
        raise _not_a_stream("ato_model_events", events, "an async iterable", "AsyncAnthropic()")
    return _aadapted(events)


async def _aadapted(events: AsyncIterable[Any]) -> AsyncIterator[ModelEvent]:
    adapter = StreamAdapter()
    async for event in events:
        for model_event in adapter.feed(event):
            yield model_event
    for model_event in adapter.finish():
        yield model_event
