"""The OpenAI adapters' fast paths (a text delta, a piece of a call's arguments, read in
`feed` itself) give what the full rules give, event for event and error for error.

The oracle is the same stream fed as objects with `to_dict()` (as the SDK's are): `feed`
reads those through `_feed` alone. Each case changes one delta that the fast path would
read in a way that one of its checks must see (a bool or a float where an int belongs,
an `error` key, a key missing or added, a second choice or piece, a large index...).
"""

from __future__ import annotations

import copy
import dataclasses
import pickle
from collections.abc import Callable, Iterable
from typing import Any, Protocol

import orjson
import pytest

from bench.openai_adapters import chat_body, responses_body
from harness._events import ModelEvent, TextEvent, new_event, set_text, text_event
from harness._exceptions import APIErrorEvent, StreamProtocolError
from harness._providers.openai_chat.adapter import DONE, ChatAdapter
from harness._providers.openai_responses.adapter import ResponsesAdapter

Adapter = ChatAdapter | ResponsesAdapter
Change = Callable[[dict[str, Any]], Any]


class Line:
    """An object read as its line (`to_dict()`), which `feed` reads through `_feed`."""

    def __init__(self, data: Any) -> None:
        self.data = data

    def to_dict(self, **options: Any) -> Any:  # the SDK's takes `warnings=False`
        return self.data


class SubDict(dict[str, Any]):
    """A dict of a class of its own: the adapters read it as an empty object."""


class Feeding(Protocol):
    """An adapter as `outcome` drives it (every provider's)."""

    def feed(self, item: Any) -> list[ModelEvent]: ...

    def finish(self) -> list[ModelEvent]: ...


def outcome(adapter: Feeding, items: Iterable[Any]) -> list[object]:
    """What each `feed` and the `finish` returned or raised."""
    seen: list[object] = []
    for step in [*(lambda item=item: adapter.feed(item) for item in items), adapter.finish]:
        try:
            events: list[ModelEvent] = step()
        except (StreamProtocolError, APIErrorEvent, RuntimeError) as error:
            seen.append((type(error).__name__, str(error)))
        else:
            seen.append(events)
    return seen


def both(make: Callable[[], Adapter], items: list[Any]) -> tuple[list[object], list[object]]:
    wrapped = [item if isinstance(item, str) else Line(item) for item in items]
    return outcome(make(), items), outcome(make(), wrapped)


def setting(*path: Any, value: Any = None, delete: bool = False) -> Change:
    def change(data: dict[str, Any]) -> Any:
        target = data
        for key in path[:-1]:
            target = target[key]
        if delete:
            target.pop(path[-1], None)
        else:
            target[path[-1]] = value
        return data

    return change


def test_the_event_the_fast_paths_build_is_a_text_event_as_any_other() -> None:
    built = new_event(TextEvent)
    set_text(built, "Hello")
    for event in (built, text_event("Hello")):
        assert type(event) is TextEvent and event == TextEvent("Hello")
        assert hash(event) == hash(TextEvent("Hello"))
        assert repr(event) == "TextEvent(text='Hello')"
        assert pickle.loads(pickle.dumps(event)) == event
        with pytest.raises(dataclasses.FrozenInstanceError):
            event.text = "changed"  # type: ignore[misc]


# -- Responses ----------------------------------------------------------------------------

RESPONSES = [orjson.loads(line) for line in responses_body(4, 3)]
#: the third text delta and the third arguments delta: both read by the fast path
TEXT_AT = [n for n, e in enumerate(RESPONSES) if e["type"] == "response.output_text.delta"][2]
PIECE_AT = [
    n for n, e in enumerate(RESPONSES) if e["type"] == "response.function_call_arguments.delta"
][2]

RESPONSES_CHANGES: dict[str, Change] = {
    "nothing": lambda data: data,
    "output_index true": setting("output_index", value=True),
    "output_index 0.0": setting("output_index", value=0.0),
    "output_index 1.0": setting("output_index", value=1.0),
    "output_index none": setting("output_index", value=None),
    "output_index missing": setting("output_index", delete=True),
    "content_index false": setting("content_index", value=False),
    "content_index 0.0": setting("content_index", value=0.0),
    "content_index 1": setting("content_index", value=1),
    "content_index missing": setting("content_index", delete=True),
    "sequence_number float": lambda data: {
        **data,
        "sequence_number": data["sequence_number"] * 1.0,
    },
    "sequence_number ahead": lambda data: {**data, "sequence_number": data["sequence_number"] + 1},
    "sequence_number text": lambda data: {**data, "sequence_number": str(data["sequence_number"])},
    "sequence_number missing": setting("sequence_number", delete=True),
    "delta empty": setting("delta", value=""),
    "delta none": setting("delta", value=None),
    "delta number": setting("delta", value=5),
    "delta list": setting("delta", value=["x"]),
    "delta missing": setting("delta", delete=True),
    "error set": setting("error", value={"code": "server_error", "message": "boom"}),
    "error null": setting("error", value=None),
    "error empty": setting("error", value=""),
    "type refusal": setting("type", value="response.refusal.delta"),
    "type missing": setting("type", delete=True),
    "a key more": setting("obfuscation", value="Fz3k"),
    "a dict of another class": SubDict,
}


def _responses_stream(at: int, change: Change) -> list[Any]:
    events = copy.deepcopy(RESPONSES)
    events[at] = change(events[at])
    return events


@pytest.mark.parametrize("text", [True, False])
@pytest.mark.parametrize("at", [TEXT_AT, PIECE_AT], ids=["text delta", "arguments delta"])
@pytest.mark.parametrize("change", RESPONSES_CHANGES.values(), ids=RESPONSES_CHANGES.keys())
def test_responses_fast_path_gives_what_the_rules_give(change: Change, at: int, text: bool) -> None:
    fast, full = both(lambda: ResponsesAdapter(text=text), _responses_stream(at, change))
    assert fast == full


def test_responses_indexes_past_the_small_ints_are_read_all_the_same() -> None:
    """Past 256 an index is not one shared object: every delta takes the full rules."""

    def moved(event: dict[str, Any]) -> dict[str, Any]:
        if "output_index" in event:
            event["output_index"] += 300
        if "content_index" in event:
            event["content_index"] += 300
        return event

    events = [moved(event) for event in copy.deepcopy(RESPONSES)]
    fast, full = both(ResponsesAdapter, events)
    assert fast == full
    assert [type(step) for step in fast] == [list] * len(fast)  # no error


# -- Chat Completions ---------------------------------------------------------------------

CHAT = [orjson.loads(line) for line in chat_body(4, 3)]
CHAT_TEXT_AT = 3  # the role chunk, then the text
CHAT_PIECE_AT = [n for n, c in enumerate(CHAT) if "tool_calls" in c["choices"][0]["delta"]][3]
CHOICE = ("choices", 0)
PIECE = (*CHOICE, "delta", "tool_calls", 0)

CHAT_CHANGES: dict[str, Change] = {
    "nothing": lambda data: data,
    "index false": setting(*CHOICE, "index", value=False),
    "index 0.0": setting(*CHOICE, "index", value=0.0),
    "index 1": setting(*CHOICE, "index", value=1),
    "index missing": setting(*CHOICE, "index", delete=True),
    "finish_reason stop": setting(*CHOICE, "finish_reason", value="stop"),
    "finish_reason missing": setting(*CHOICE, "finish_reason", delete=True),
    "id other": setting("id", value="chatcmpl-other"),
    "id missing": setting("id", delete=True),
    "object empty": setting("object", value=""),
    "object missing": setting("object", delete=True),
    "error set": setting("error", value={"type": "server_error", "message": "boom"}),
    "error null": setting("error", value=None),
    "no choice": setting("choices", value=[]),
    "two choices": lambda data: {**data, "choices": data["choices"] * 2},
    "choices not a list": setting("choices", value="x"),
    "choice not an object": setting(*CHOICE, value="x"),
    "delta not an object": setting(*CHOICE, "delta", value="x"),
    "delta missing": setting(*CHOICE, "delta", delete=True),
    "content none": setting(*CHOICE, "delta", value={"content": None}),
    "content number": setting(*CHOICE, "delta", value={"content": 5}),
    "content empty": setting(*CHOICE, "delta", value={"content": ""}),
    "content and role": setting(*CHOICE, "delta", value={"content": "x", "role": "assistant"}),
    "content and a refusal": setting(*CHOICE, "delta", value={"content": "x", "refusal": "no"}),
    "a refusal": setting(*CHOICE, "delta", value={"refusal": "no"}),
    "a key more": setting("usage", value=None),
    "a dict of another class": SubDict,
}

PIECE_CHANGES: dict[str, Change] = {
    "piece id same": setting(*PIECE, "id", value="call_1"),
    "piece id other": setting(*PIECE, "id", value="call_2"),
    "piece type": setting(*PIECE, "type", value="function"),
    "piece name same": setting(*PIECE, "function", "name", value="read"),
    "piece name other": setting(*PIECE, "function", "name", value="write"),
    "piece index false": setting(*PIECE, "index", value=False),
    "piece index 0.0": setting(*PIECE, "index", value=0.0),
    "piece index unknown": setting(*PIECE, "index", value=5),
    "piece index missing": setting(*PIECE, "index", delete=True),
    "arguments none": setting(*PIECE, "function", "arguments", value=None),
    "arguments number": setting(*PIECE, "function", "arguments", value=5),
    "arguments missing": setting(*PIECE, "function", "arguments", delete=True),
    "function not an object": setting(*PIECE, "function", value="x"),
    "two pieces": lambda data: setting(
        *PIECE[:-1], value=data[PIECE[0]][0]["delta"]["tool_calls"] * 2
    )(data),
    "piece not an object": setting(*PIECE, value=None),
    "tool_calls not a list": setting(*PIECE[:-1], value="x"),
    "pieces and content": setting(*CHOICE, "delta", "content", value="x"),
}


def _chat_stream(at: int, change: Change) -> list[Any]:
    chunks: list[Any] = copy.deepcopy(CHAT)
    chunks[at] = change(chunks[at])
    return [*chunks, DONE]


@pytest.mark.parametrize("text", [True, False])
@pytest.mark.parametrize("at", [CHAT_TEXT_AT, CHAT_PIECE_AT], ids=["text", "arguments"])
@pytest.mark.parametrize("change", CHAT_CHANGES.values(), ids=CHAT_CHANGES.keys())
def test_chat_fast_path_gives_what_the_rules_give(change: Change, at: int, text: bool) -> None:
    fast, full = both(lambda: ChatAdapter(text=text), _chat_stream(at, change))
    assert fast == full


@pytest.mark.parametrize("change", PIECE_CHANGES.values(), ids=PIECE_CHANGES.keys())
def test_chat_arguments_fast_path_gives_what_the_rules_give(change: Change) -> None:
    fast, full = both(ChatAdapter, _chat_stream(CHAT_PIECE_AT, change))
    assert fast == full


def test_the_unchanged_streams_are_good_answers() -> None:
    """The cases change a stream that passes: what differs is each change's doing."""
    for fast in (
        both(ChatAdapter, _chat_stream(0, lambda data: data))[0],
        both(ResponsesAdapter, _responses_stream(0, lambda data: data))[0],
    ):
        assert all(type(step) is list for step in fast)
        assert sum(len(step) for step in fast if isinstance(step, list)) == 6
