"""The strict ConverseStream adapter: Bedrock's event dicts in, internal `ModelEvent`s out.

Theory of operation
-------------------
`ConverseAdapter` is a sans-IO state machine, as Anthropic's `StreamAdapter` is.
`feed(item)` takes one event as boto3's `converse_stream()["stream"]` yields it: a dict
of one key, the event's name (`messageStart`, `contentBlockStart`, `contentBlockDelta`,
`contentBlockStop`, `messageStop`, `metadata`, or one of the five exceptions), whose
value is the event. It returns the internal events the item completes; `finish()` is
called once the stream is exhausted and returns the final `DoneEvent` or raises.

State:
- whether `messageStart` came (it must be the first event, and come once);
- the open blocks, keyed by `contentBlockIndex`: a client tool block is opened by a
  `contentBlockStart` whose `start.toolUse` names it (`toolUseId`, `name`; its `type`
  absent, or any but `server_tool_use`: Nova 2 sends `tool_use`, `is_client_tool`), and
  its `toolUse` deltas add `input` text; a text or reasoning block is opened by its first
  delta (Bedrock sends no start for them); a server tool block (`start.toolUse` of
  `type` `server_tool_use`, or a `start.toolResult`) and any other start (`image`) open a
  block whose deltas are passed over, as Anthropic's server tools are;
- the client tool calls completed so far: a tool block's `contentBlockStop` parses its
  joined input once (absent or empty: `{}`, the zero-argument call) and yields the call;
- `messageStop`'s `stopReason`: it completes the answer; after it only one `metadata`
  event may come (and need not).

Read, not refused: an empty text delta (nothing yielded), reasoning deltas (passed
over: the three internal events carry no reasoning), `citation` deltas, Bedrock's `p`
padding field and any field the adapter does not know, an event of a name it does not
know (boto3 drops those), a `contentBlockStop` for a block that is not open.

Policy, as `StreamAdapter(stop_reasons=...)` is for Anthropic: `stop_reasons` are the
stop reasons that complete an answer (by default `end_turn` and `tool_use`: `max_tokens`,
`stop_sequence`, `guardrail_intervened`, `content_filtered`, `malformed_tool_use`,
`malformed_model_output`, `model_context_window_exceeded` cut or replace it).
`end_turn` with client tool calls, and `tool_use` without one, are refused.

Items are dispatched on dict keys, never on classes. Any violation raises
`StreamProtocolError` (provider `"bedrock-converse"`); an exception event raises the
`APIErrorEvent` replay reports as `api_error:<name>` (`throttlingException`, ...). The
machine then stays failed: every later call raises a new error of the same kind,
chained from the first.
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
from types import MappingProxyType
from typing import Any, Final, TypeGuard

from harness._events import (
    DoneEvent,
    ModelEvent,
    TextEvent,
    ToolCall,
    ToolCallEvent,
    block_key,
    new_event,
    set_text,
    tool_input,
)
from harness._exceptions import APIErrorEvent, StreamProtocolError, check_usable
from harness._json import strict_json
from harness._providers.bedrock_converse.errors import PROVIDER

__all__ = [
    "COMPLETE_STOP_REASONS",
    "EXCEPTIONS",
    "ConverseAdapter",
    "api_error",
    "ato_model_events",
    "event_name",
    "is_client_tool",
    "to_model_events",
]

#: The stop reasons that complete an answer by default: anything else cut or replaced it.
COMPLETE_STOP_REASONS: frozenset[str] = frozenset({"end_turn", "tool_use"})

#: The one `toolUse` start `type` that is not the client's tool: the service model's one
#: value. Nova 2 names a client tool `tool_use` (a value the model does not list), and
#: pydantic-ai reads any type but this one as the client's: so does the adapter.
SERVER_TOOL_USE: Final = "server_tool_use"


def is_client_tool(use: object) -> TypeGuard[dict[str, Any]]:
    """Whether a `contentBlockStart`'s `start.toolUse` opens a client tool block."""
    return isinstance(use, dict) and use.get("type") != SERVER_TOOL_USE


#: The exception events a stream may end in -> the HTTP status Bedrock gives each
#: (botocore's bedrock-runtime service model).
EXCEPTIONS: Final[dict[str, int]] = {
    "internalServerException": 500,
    "modelStreamErrorException": 424,
    "validationException": 400,
    "throttlingException": 429,
    "serviceUnavailableException": 503,
}
#: The events of the answer, in the order the adapter looks for them in a line.
EVENTS: Final = (
    "contentBlockDelta",
    "contentBlockStart",
    "contentBlockStop",
    "messageStart",
    "messageStop",
    "metadata",
)

#: what a block is, as the adapter reads its deltas
_TOOL: Final = "tool"
_SERVER: Final = "server"
_TEXT: Final = "text"
#: the fast path's blocks when it must find none
_NOT_READING: Final[Mapping[Any, Any]] = MappingProxyType({})


def _error(code: str, **fields: object) -> StreamProtocolError:
    return StreamProtocolError(code, provider=PROVIDER, **fields)


def event_name(item: dict[str, Any]) -> str:
    """The name of the event a line holds: its first known key, else its first key."""
    for name in item:
        if name in EVENTS or name in EXCEPTIONS:
            return name
    return next(iter(item), "")


def api_error(name: str, details: object) -> APIErrorEvent:
    """An exception event as the error replay reports as `api_error:<name>`: an
    `APIErrorEvent` on a 200 answer whose body's `error.type` is `name`."""
    message = details.get("message") if isinstance(details, dict) else None
    if not isinstance(message, str):
        message = ""
    return APIErrorEvent({"error": {"type": name, "message": message}, "line": {name: details}})


def _shown(value: object) -> str:
    return "null" if value is None else repr(value) if not isinstance(value, str) else value


class _Block:
    """One open block: its kind, and for a client tool block its id, name, input pieces."""

    __slots__ = ("id", "kind", "name", "pieces")

    def __init__(self, kind: str, ident: str = "", name: str = "") -> None:
        self.kind = kind
        self.id = ident
        self.name = name
        self.pieces: list[str] = []


class ConverseAdapter:
    """One ConverseStream's events -> internal events. See the module."""

    def __init__(
        self, *, stop_reasons: Collection[str] = COMPLETE_STOP_REASONS, text: bool = True
    ) -> None:
        self._stop_reasons = stop_reasons
        #: False: the same rules, but no `TextEvent` built (as `StreamAdapter(text=False)`)
        self._text = text
        self._started = False
        self._blocks: dict[int, _Block] = {}
        self._calls = 0
        self.stop_reason: object = None
        self._metadata = False
        self._error: StreamProtocolError | APIErrorEvent | None = None
        self._finished = False
        #: the fast path's blocks: `_blocks` while reading (started, not stopped, no
        #: error), else an empty mapping, so that the path needs no flag of its own
        self._fast: Mapping[Any, _Block] = _NOT_READING

    @property
    def open_tool_blocks(self) -> tuple[int, ...]:
        """The indexes of the client tool blocks open, in opening order."""
        return tuple(index for index, block in self._blocks.items() if block.kind == _TOOL)

    def feed(self, item: Any) -> list[ModelEvent]:
        """Take one event (a dict of one key); return the events it completes."""
        # Almost every event is a text delta of an open text block, or a piece of an open
        # tool block's input: read them in the fewest steps, raising nothing (`_feed`
        # applies every rule to the rest, and to an item lacking a key or of another shape
        # here: a delta of one key, and that key the block's own).
        try:
            event = item["contentBlockDelta"]
            block = self._fast[event["contentBlockIndex"]]
            delta = event["delta"]
            if len(delta) == 1:
                kind = block.kind
                if kind is _TEXT:
                    text = delta["text"]
                    if type(text) is str:
                        if text and self._text:
                            made = new_event(TextEvent)
                            set_text(made, text)
                            return [made]
                        return []
                elif kind is _TOOL:
                    piece = delta["toolUse"]["input"]
                    if type(piece) is str:
                        block.pieces.append(piece)
                        return []
        except (KeyError, TypeError):
            pass
        if self._error is not None or self._finished:
            self._check_usable()
        try:
            return self._feed(item)
        except (StreamProtocolError, APIErrorEvent) as error:
            self._error = error
            self._fast = _NOT_READING
            raise

    def finish(self) -> list[ModelEvent]:
        """The stream is exhausted: check the end rules and return `[DoneEvent()]`."""
        self.check_end()
        self._finished = True
        self._fast = _NOT_READING
        return [DoneEvent()]

    def check_end(self) -> None:
        """Raise now what `finish()` would raise if the stream ended here."""
        self._check_usable()
        if self.stop_reason is None:
            self._error = _error("missing_message_stop")
            self._fast = _NOT_READING
            raise self._error

    def _check_usable(self) -> None:
        check_usable(self._error, self._finished, "ConverseAdapter")

    def _feed(self, item: Any) -> list[ModelEvent]:
        if not isinstance(item, dict):
            item = {}
        name = event_name(item)
        event = item.get(name)
        if name in EXCEPTIONS:
            raise api_error(name, event)
        if not isinstance(event, dict):
            event = {}
        if not self._started:
            if name != "messageStart":
                raise _error("missing_message_start", event=_shown(name or None))
            self._started = True
            self._fast = self._blocks
            return []
        if self.stop_reason is not None:
            if name != "metadata" or self._metadata:
                raise _error(
                    "event_after_stop", event=f"another {name}" if name == "metadata" else name
                )
            self._metadata = True
            return []
        if name == "contentBlockDelta":
            return self._delta(event)
        if name == "contentBlockStart":
            self._start(event)
            return []
        if name == "contentBlockStop":
            return self._stop(event)
        if name == "messageStop":
            self._message_stop(event)
            return []
        if name == "messageStart":
            raise _error("duplicate_message_start")
        return []  # metadata before the stop, or an event boto3 does not know: passed over

    def _start(self, event: dict[str, Any]) -> None:
        index = block_key(event.get("contentBlockIndex"))
        if index in self._blocks:
            raise _error("duplicate_block_start", index=_shown(index))
        start = event.get("start")
        start = start if isinstance(start, dict) else {}
        use = start.get("toolUse")
        if is_client_tool(use):
            ident, name = use.get("toolUseId"), use.get("name")
            block = _Block(
                _TOOL, ident if type(ident) is str else "", name if type(name) is str else ""
            )
        else:  # a server tool's use or result, an image: passed over
            block = _Block(_SERVER)
        self._blocks[index] = block

    def _delta(self, event: dict[str, Any]) -> list[ModelEvent]:
        index = block_key(event.get("contentBlockIndex"))
        delta = event.get("delta")
        delta = delta if isinstance(delta, dict) else {}
        block = self._blocks.get(index)
        use = delta.get("toolUse")
        if block is None:
            if use is not None:
                raise _error("orphan_tool_delta", index=_shown(index))
            block = self._blocks[index] = _Block(_TEXT)
        if block.kind == _TOOL:
            other = next((kind for kind in delta if kind != "toolUse"), None)
            if other is not None:
                raise _error("delta_kind_mismatch", kind=other, index=_shown(index))
            piece = use.get("input") if isinstance(use, dict) else None
            if type(piece) is str:
                block.pieces.append(piece)
            elif piece is not None:
                block.pieces.append("\x00")  # a number or an object where text belongs
            return []
        if block.kind == _TEXT and use is not None:
            raise _error("orphan_tool_delta", index=_shown(index))
        text = delta.get("text")
        if block.kind == _TEXT and type(text) is str and text and self._text:
            return [TextEvent(text)]
        return []

    def _stop(self, event: dict[str, Any]) -> list[ModelEvent]:
        index = block_key(event.get("contentBlockIndex"))
        block = self._blocks.pop(index, None)
        if block is None or block.kind != _TOOL:
            return []
        joined = "".join(block.pieces)
        if joined.strip():
            try:
                value = strict_json(joined)
            except (ValueError, RecursionError):
                raise _error("invalid_tool_json", index=_shown(index)) from None
        else:
            value = {}
        arguments = tool_input(value, index if type(index) is int else 0, provider=PROVIDER)
        self._calls += 1
        return [ToolCallEvent(ToolCall(block.id, block.name, arguments))]

    def _message_stop(self, event: dict[str, Any]) -> None:
        self._fast = _NOT_READING
        reason = event.get("stopReason")
        self.stop_reason = reason if reason is not None else ""
        open_tools = self.open_tool_blocks
        if open_tools:
            raise _error("unfinished_tool_blocks", indexes=", ".join(map(str, open_tools)))
        if not isinstance(reason, str) or reason not in self._stop_reasons:
            raise _error("unsupported_stop_reason", stop_reason=_shown(reason) or "''")
        if reason == "end_turn" and self._calls:
            raise _error("end_turn_with_tool_calls", count=self._calls)
        if reason == "tool_use" and not self._calls:
            raise _error("tool_use_without_tool_calls")


def to_model_events(items: Iterable[Any], **options: Any) -> Iterator[ModelEvent]:
    """Adapt a sync stream of events (dicts, as boto3 yields them). `options` are
    `ConverseAdapter`'s."""
    adapter = ConverseAdapter(**options)
    for item in items:
        yield from adapter.feed(item)
    yield from adapter.finish()


async def ato_model_events(items: AsyncIterable[Any], **options: Any) -> AsyncIterator[ModelEvent]:
    """Adapt an async stream of events; the same machine as `to_model_events`."""
    adapter = ConverseAdapter(**options)
    async for item in items:
        for event in adapter.feed(item):
            yield event
    for event in adapter.finish():
        yield event
