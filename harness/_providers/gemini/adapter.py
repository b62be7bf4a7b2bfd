"""The strict Gemini adapter: `GenerateContentResponse` chunk dicts in, internal events out.

Theory of operation
-------------------
`GeminiAdapter` is a sans-IO state machine, as the other providers' adapters are.
`feed(item)` takes one chunk of a `streamGenerateContent` answer, the JSON object the
API sends (camelCase, as on the wire: an SSE event's `data`, or an element of the
streamed JSON array); it returns the internal events the chunk completes. `finish()` is
called once the body is exhausted and returns the final `DoneEvent` or raises.

A chunk holds `candidates` (one, `index` 0: only candidate 0 is read), whose
`content.parts` carry the answer, `finishReason` on the last; `usageMetadata`,
`modelVersion`, `responseId`, and `promptFeedback` (a blocked prompt: no candidates).

State:
- the function calls read so far, in answer order (position N, from 0). A whole call is
  one part, `functionCall {name, args, id?}`; a streamed one (Vertex's
  `streamFunctionCallArguments`) opens with `functionCall {name, willContinue: true}`,
  grows by `partialArgs` pieces, each a value at a JSON path (`$.city`,
  `$.stops[0].name`; a string piece with `willContinue` is followed by the rest of the
  same string), and closes at a `functionCall` without `willContinue` (the API sends
  `{}`). A call without an `id` gets `call_N` (`call_id`): Gemini answers a call by its
  name, so the id is the harness's, stable across replays;
- candidate 0's `finishReason`. It completes the answer: the reason is judged (`STOP`
  alone by default; `finish_reasons` widens it, as `ChatAdapter`'s does), then every
  call is yielded, in order. `STOP` with calls is how Gemini ends a turn that calls
  tools (it has no reason of its own for it). After it, a chunk may only repeat it,
  carry usage, or an empty text part (the API's trailing chunk does).

Passed over: thought parts (`thought: true`) and `thoughtSignature`, code execution
(`executableCode`, `codeExecutionResult`: run by the server, as server tools are),
`inlineData` and `fileData`, grounding and citation metadata, `safetyRatings`, an empty
text part, a chunk with usage alone, and any field the adapter does not know; and a
chunk that is not a JSON object (`data: [1]`), which google-genai reads as an empty
response (no cassette can hold one; the streamed JSON array refuses it,
`harness._providers.jsonarray`).

Refused (`errors`): a second candidate, a blocked
prompt, a finish reason not accepted (`MAX_TOKENS`, `SAFETY`, `RECITATION`,
`MALFORMED_FUNCTION_CALL`, ... even beside a parsed call), content after the finish, a
call without a name or whose `args` are not an object, and the streamed-argument
mistakes (pieces with no call open, a call opened over an open one, a call open at the
finish or the end, a JSON path that cannot be applied). An `{"error": ...}` chunk (the
API's error mid-stream, as the SDK raises it) raises the `APIErrorEvent` replay reports
as `api_error:<status>`. The machine then stays failed: every later call raises a new
error of the same kind, chained from the first.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterable, AsyncIterator, Collection, Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
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
from harness._providers.gemini.errors import PROVIDER

__all__ = [
    "COMPLETE_FINISH_REASONS",
    "GeminiAdapter",
    "ato_model_events",
    "call_id",
    "to_model_events",
]

#: The finish reasons that complete an answer by default.
COMPLETE_FINISH_REASONS: frozenset[str] = frozenset({"STOP"})

#: The parts of a candidate that carry nothing of the answer the adapter reads.
PASSED_OVER: Final = ("executableCode", "codeExecutionResult", "inlineData", "fileData")

#: One step of a JSON path: `.name`, `['name']` / `["name"]`, or `[N]`.
_STEP: Final = re.compile(
    r"\.(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
    r"|\['(?P<single>[^'\\]*)'\]"
    r'|\["(?P<double>[^"\\]*)"\]'
    r"|\[(?P<index>0|[1-9][0-9]*)\]"
)


def call_id(position: int) -> str:
    """The id of the call at `position` in the answer (0 the first) when the API gave none."""
    return f"call_{position}"


def _error(code: str, **fields: object) -> StreamProtocolError:
    return StreamProtocolError(code, provider=PROVIDER, **fields)


def _shape(value: object) -> str:
    if isinstance(value, _Growing):
        return "a string"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    return "null" if value is None else "a number"


def _object(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _steps(path: object) -> tuple[str | int, ...]:
    """A JSON path's steps below `$` (keys, and list indexes), or `ValueError`."""
    if not isinstance(path, str) or not path.startswith("$"):
        raise ValueError("not a JSON path from $")
    return _parsed(path)


@lru_cache(maxsize=256)
def _parsed(path: str) -> tuple[str | int, ...]:
    """`_steps` of a path (one read a path: a streamed call names the same few again)."""
    steps: list[str | int] = []
    at = 1
    while at < len(path):
        match = _STEP.match(path, at)
        if match is None:
            raise ValueError(f"cannot read it from character {at}")
        index = match["index"]
        key = match["name"] or match["single"] or match["double"]
        steps.append(int(index) if index is not None else key or "")
        at = match.end()
    if not steps:
        raise ValueError("it names the arguments themselves")
    return tuple(steps)


class _Growing:
    """A string argument still streaming: its pieces, joined once, when its call closes
    (joining at each piece would copy the string so far each time: quadratic)."""

    __slots__ = ("pieces",)

    def __init__(self, first: str) -> None:
        self.pieces = [first]

    def __str__(self) -> str:
        return "".join(self.pieces)


@dataclass(slots=True)
class _Call:
    position: int
    name: str
    id: str
    args: dict[str, Any]
    #: the paths whose string goes on in the next piece (a piece with `willContinue`)
    continuing: set[str] = field(default_factory=set)
    #: the path the last piece left going on, and its string (the fast path's)
    last_path: str | None = None
    last: _Growing | None = None

    def closed(self) -> _Call:
        """The call whole: its streamed strings joined."""
        self.args = _joined(self.args)
        self.last_path = self.last = None
        return self


def _joined(value: Any) -> Any:
    """A copy of `value` with each `_Growing` in it joined into its string."""
    if isinstance(value, _Growing):
        return str(value)
    if isinstance(value, dict):
        return {key: _joined(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_joined(item) for item in value]
    return value


class GeminiAdapter:
    """One Gemini stream's chunks -> internal events. See the module."""

    def __init__(self, *, finish_reasons: Collection[str] = COMPLETE_FINISH_REASONS) -> None:
        self._finish_reasons = finish_reasons
        self._calls: list[_Call] = []
        self._open: _Call | None = None
        #: candidate 0's finish reason, once read
        self.finish_reason: str | None = None
        self._error: StreamProtocolError | APIErrorEvent | None = None
        self._finished = False
        #: no error, not finished: the fast path's state
        self._reading = True

    @property
    def open_function_calls(self) -> tuple[int, ...]:
        """The positions of the calls read and not yet yielded (the finish yields them)."""
        return () if self.finish_reason is not None else tuple(c.position for c in self._calls)

    def feed(self, item: Any) -> list[ModelEvent]:
        """Take one chunk; return the events it completes."""
        if self._reading:
            # Almost every chunk is one candidate's one text part, not finished: read it
            # in the fewest steps, raising nothing (`_feed` applies every rule to the rest,
            # and to a chunk lacking a key here).
            # A streamed call's pieces are as many: the next piece of the string the last
            # one left going on, read here too.
            try:
                [candidate] = item["candidates"]
                [part] = candidate["content"]["parts"]
                if (
                    len(part) == 1
                    and "finishReason" not in candidate
                    and candidate.get("index", 0) == 0
                    and "error" not in item
                ):
                    text = part.get("text")
                    if type(text) is str:
                        if not text:
                            return []
                        made = new_event(TextEvent)
                        set_text(made, text)
                        return [made]
                    call = part["functionCall"]
                    growing = self._open.last  # type: ignore[union-attr]
                    if growing is not None and len(call) == 2 and call["willContinue"] is True:
                        [piece] = call["partialArgs"]
                        value = piece["stringValue"]
                        if (
                            piece["willContinue"] is True
                            and type(value) is str
                            and piece["jsonPath"] == self._open.last_path  # type: ignore[union-attr]
                        ):
                            growing.pieces.append(value)
                            return []
            except (KeyError, TypeError, ValueError, AttributeError):
                pass
        self._check_usable()
        try:
            return self._feed(item)
        except (StreamProtocolError, APIErrorEvent) as error:
            self._error = error
            self._reading = False
            raise

    def finish(self) -> list[ModelEvent]:
        """The body is exhausted: check the end rules and return `[DoneEvent()]`."""
        self._reading = False
        self.check_end()
        self._finished = True
        return [DoneEvent()]

    def check_end(self) -> None:
        """Raise now what `finish()` would raise if the body ended here; the machine goes on."""
        self._check_usable()
        if self.finish_reason is not None:
            return
        if self._open is not None:
            error = _error(
                "unfinished_function_call", index=self._open.position, where="end of the stream"
            )
        else:
            error = _error("missing_finish_reason")
        self._error = error
        self._reading = False
        raise error

    def _check_usable(self) -> None:
        check_usable(self._error, self._finished, "GeminiAdapter")

    def _feed(self, item: Any) -> list[ModelEvent]:
        if not isinstance(item, dict):
            return []  # an empty response, as google-genai reads one (the module)
        if item.get("error"):
            raise _api_error(item)
        candidates = item.get("candidates")
        if not isinstance(candidates, list) or not candidates:
            blocked = _object(item.get("promptFeedback")).get("blockReason")
            if blocked:
                raise _error("prompt_blocked", reason=blocked)
            return []  # usage alone: nothing of the answer
        if len(candidates) > 1:
            raise _error("multiple_candidates", candidate=_object(candidates[1]).get("index", 1))
        candidate = _object(candidates[0])
        if candidate.get("index", 0) != 0:
            raise _error("multiple_candidates", candidate=candidate.get("index"))
        parts = _object(candidate.get("content")).get("parts")
        parts = parts if isinstance(parts, list) else []
        reason = candidate.get("finishReason")
        if self.finish_reason is not None:
            self._after_finish(parts, reason)
            return []
        events: list[ModelEvent] = []
        for part in parts:
            part = _object(part)
            if "functionCall" in part:
                self._function_call(_object(part["functionCall"]))
                continue
            text = part.get("text")
            if isinstance(text, str) and text and not part.get("thought"):
                events.append(TextEvent(text))
        if reason is not None:
            events += self._at_finish(reason)
        return events

    def _function_call(self, call: dict[str, Any]) -> None:
        name = call.get("name")
        pieces = call.get("partialArgs")
        goes_on = call.get("willContinue") is True
        position = len(self._calls) + (self._open is not None)
        if name is not None:
            if self._open is not None:
                raise _error("overlapping_function_call", index=position, open=self._open.position)
            if not isinstance(name, str) or not name:
                raise _error("unnamed_function_call", index=position)
            args = call.get("args")
            if args is not None and not isinstance(args, dict):
                raise _error("non_object_tool_input", index=position)
            ident = call.get("id")
            ident = ident if isinstance(ident, str) and ident else call_id(position)
            opened = _Call(position, name, ident, dict(args or {}))
            self._apply(opened, pieces)
            if goes_on:
                self._open = opened
            else:
                self._calls.append(opened.closed())
            return
        if self._open is None:
            if pieces is not None or goes_on:
                raise _error("orphan_partial_args")
            raise _error("unnamed_function_call", index=position)
        self._apply(self._open, pieces)
        if not goes_on:
            self._calls.append(self._open.closed())
            self._open = None

    def _apply(self, call: _Call, pieces: object) -> None:
        """Each `partialArgs` piece, its value set at its JSON path in the call's args."""
        for piece in pieces if isinstance(pieces, list) else []:
            piece = _object(piece)
            path = piece.get("jsonPath")
            try:
                _set(call, path, piece)
            except ValueError as why:
                raise _error(
                    "bad_json_path", index=call.position, path=str(path), why=str(why)
                ) from None

    def _at_finish(self, reason: object) -> list[ModelEvent]:
        """Candidate 0 finished: open calls refused, the reason judged, the calls yielded."""
        self._reading = False  # what follows is held to the rules after the finish
        self.finish_reason = str(reason)
        if self._open is not None:
            raise _error(
                "unfinished_function_call", index=self._open.position, where="finishReason"
            )
        if not isinstance(reason, str) or reason not in self._finish_reasons:
            raise _error("unsupported_finish_reason", finish_reason=str(reason) or '""')
        return [ToolCallEvent(ToolCall(c.id, c.name, c.args)) for c in self._calls]

    def _after_finish(self, parts: list[Any], reason: object) -> None:
        """A chunk after the finish: usage, the same reason, an empty text part only."""
        for part in parts:
            part = _object(part)
            if "functionCall" in part:
                raise _error("chunk_after_finish", what="a function call")
            if part.get("text"):
                raise _error("chunk_after_finish", what="text")
            kinds = [key for key in part if key not in ("text", "thoughtSignature")]
            if kinds:
                raise _error("chunk_after_finish", what=f"a part of kind {kinds[0]}")
        if reason is not None and reason != self.finish_reason:
            raise _error("chunk_after_finish", what=f"finishReason {reason}")


def _api_error(chunk: dict[str, Any]) -> APIErrorEvent:
    """The API's error in a stream (`{"error": {"code", "message", "status"}}`): an
    `APIErrorEvent` on a 200 answer whose `error.type` is its `status`, so that replay
    reports `api_error:<status>`, the chunk kept under `line`."""
    error = dict(_object(chunk["error"]))
    status = error.get("status")
    error["type"] = status if isinstance(status, str) and status else "error"
    if not isinstance(error.get("message"), str):
        error["message"] = "An error occurred during streaming"
    return APIErrorEvent({"error": error, "line": chunk}, 200)


def _set(call: _Call, path: object, piece: dict[str, Any]) -> None:
    """Set one `partialArgs` piece's value at its path in `call.args` (`ValueError`: why not)."""
    steps = _steps(path)
    if "stringValue" in piece:
        value: object = piece["stringValue"]
    elif "numberValue" in piece:
        value = _number(piece["numberValue"])
    elif "boolValue" in piece:
        value = piece["boolValue"]
    elif "nullValue" in piece:
        value = None
    else:
        raise ValueError("the piece holds no value")
    holder: Any = call.args
    for step, below in zip(steps, [*steps[1:], None], strict=True):
        if below is None:
            break
        holder = _into(holder, step, {} if isinstance(below, str) else [])
    last = steps[-1]
    key = str(path)
    if isinstance(value, str) and key in call.continuing:
        current = holder[last] if _has(holder, last) else None
        if isinstance(current, str):
            current = _Growing(current)
        if not isinstance(current, _Growing):
            raise ValueError("it goes on with a string where no string was begun")
        current.pieces.append(value)
        value = current
    goes_on = piece.get("willContinue") is True
    if goes_on and isinstance(value, str):
        value = _Growing(value)
    _put(holder, last, value)
    call.last_path = call.last = None
    if goes_on:
        if not isinstance(value, _Growing):
            raise ValueError("only a string goes on in the next piece")
        call.continuing.add(key)
        call.last_path, call.last = key, value
    else:
        call.continuing.discard(key)


def _number(value: object) -> object:
    """A `numberValue` as the protocol types it, a double (`3` is `3.0`, as google-genai
    reads it), so that every path gives the same arguments; anything else as it is."""
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def _has(holder: Any, step: str | int) -> bool:
    if isinstance(step, int):
        return isinstance(holder, list) and step < len(holder)
    return isinstance(holder, dict) and step in holder


def _into(holder: Any, step: str | int, empty: dict[str, Any] | list[Any]) -> Any:
    """The value at `step` of `holder`, made `empty` if it is not there yet."""
    if not _has(holder, step):
        _put(holder, step, empty)
    return holder[step]


def _put(holder: Any, step: str | int, value: object) -> None:
    if isinstance(step, int):
        if not isinstance(holder, list):
            raise ValueError(f"index [{step}] into {_shape(holder)}")
        if step > len(holder):
            raise ValueError(f"index [{step}] past the end of a list of {len(holder)}")
        if step == len(holder):
            holder.append(value)
        else:
            holder[step] = value
        return
    if not isinstance(holder, dict):
        raise ValueError(f"key {step!r} into {_shape(holder)}")
    holder[step] = value


def to_model_events(items: Iterable[Any], **options: Any) -> Iterator[ModelEvent]:
    """Adapt a sync stream of chunks (dicts as the API sends them); `options` are
    `GeminiAdapter`'s."""
    adapter = GeminiAdapter(**options)
    for item in items:
        yield from adapter.feed(item)
    yield from adapter.finish()


async def ato_model_events(items: AsyncIterable[Any], **options: Any) -> AsyncIterator[ModelEvent]:
    """Adapt an async stream of chunks; the same machine as `to_model_events`."""
    adapter = GeminiAdapter(**options)
    async for item in items:
        for event in adapter.feed(item):
            yield event
    for event in adapter.finish():
        yield event
