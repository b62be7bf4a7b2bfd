"""The Converse and Gemini adapters' fast paths (a text delta, a piece of a call's input,
read in `feed` itself) give what the full rules give, event for event and error for
error.

The oracle is the same adapter with its fast path shut (`RulesOnly...`: the state the
path reads always empty), fed the same items. Each case changes one item that the fast
path would read in a way that one of its checks must see: a key missing or one more, a
value of another type, an index of another type, a delta where no block is open.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import orjson
import pytest
from test_openai_fast_paths import outcome, setting

from bench.openai_adapters import converse_body, gemini_body
from harness._events import DoneEvent, ModelEvent
from harness._providers.bedrock_converse.adapter import ConverseAdapter
from harness._providers.gemini.adapter import GeminiAdapter

Change = Callable[[Any], Any]


class SubDict(dict[str, Any]):
    """A dict of a class of its own: the rules and the fast paths read it as a dict."""


class RulesOnlyConverse(ConverseAdapter):
    """Its fast path finds no block: every item goes to the rules."""

    @property
    def _fast(self) -> dict[Any, Any]:
        return {}

    @_fast.setter
    def _fast(self, value: object) -> None:
        pass


class RulesOnlyGemini(GeminiAdapter):
    """Never reading on its fast path: every chunk goes to the rules."""

    @property
    def _reading(self) -> bool:
        return False

    @_reading.setter
    def _reading(self, value: object) -> None:
        pass


# -- Converse ------------------------------------------------------------------------------

CONVERSE = [orjson.loads(line) for line in converse_body(4, 3)]
#: the third text delta and the third piece of the call's input: both on the fast path
TEXT_AT = [
    n for n, e in enumerate(CONVERSE) if "text" in e.get("contentBlockDelta", {}).get("delta", {})
][2]
PIECE_AT = [
    n
    for n, e in enumerate(CONVERSE)
    if "toolUse" in e.get("contentBlockDelta", {}).get("delta", {})
][2]
DELTA = ("contentBlockDelta", "delta")
INDEX = ("contentBlockDelta", "contentBlockIndex")

CONVERSE_CHANGES: dict[str, Change] = {
    "nothing": lambda item: item,
    "index true": setting(*INDEX, value=True),
    "index 0.0": setting(*INDEX, value=0.0),
    "index 1.0": setting(*INDEX, value=1.0),
    "index text": setting(*INDEX, value="0"),
    "index 7": setting(*INDEX, value=7),
    "index none": setting(*INDEX, value=None),
    "index missing": setting(*INDEX, delete=True),
    "index a list": setting(*INDEX, value=[0]),
    "index an object": setting(*INDEX, value={"index": 0}),
    "delta a key more": lambda item: setting(*DELTA, "p", value="abcdef")(item),
    "delta empty": setting(*DELTA, value={}),
    "delta a string of one": setting(*DELTA, value="x"),
    "delta a list of one": setting(*DELTA, value=["x"]),
    "delta none": setting(*DELTA, value=None),
    "delta missing": setting(*DELTA, delete=True),
    "text empty": setting(*DELTA, value={"text": ""}),
    "text a number": setting(*DELTA, value={"text": 5}),
    "text where a piece goes": setting(*DELTA, value={"text": "x"}),
    "a piece where text goes": setting(*DELTA, value={"toolUse": {"input": "x"}}),
    "piece a number": setting(*DELTA, value={"toolUse": {"input": 5}}),
    "piece missing": setting(*DELTA, value={"toolUse": {}}),
    "piece a key more": setting(*DELTA, value={"toolUse": {"input": "x", "p": "ab"}}),
    "text and a piece": setting(*DELTA, value={"text": "x", "toolUse": {"input": "x"}}),
    "toolUse a string": setting(*DELTA, value={"toolUse": "x"}),
    "reasoning": setting(*DELTA, value={"reasoningContent": {"text": "hm"}}),
    "the event a list": lambda item: {"contentBlockDelta": [item["contentBlockDelta"]]},
    "a second event in the item": lambda item: {**item, "messageStop": {"stopReason": "x"}},
    "an exception in the item": lambda item: {**item, "throttlingException": {"message": "x"}},
    "not a dict": lambda item: [item],
    "a dict of a class of its own": SubDict,
    "its event of a class of its own": lambda item: {
        "contentBlockDelta": SubDict(item["contentBlockDelta"])
    },
    "its delta of a class of its own": lambda item: setting(
        *DELTA, value=SubDict(item["contentBlockDelta"]["delta"])
    )(item),
}


@pytest.mark.parametrize("text", [True, False])
@pytest.mark.parametrize("at", [TEXT_AT, PIECE_AT], ids=["text delta", "input piece"])
@pytest.mark.parametrize("change", CONVERSE_CHANGES.values(), ids=CONVERSE_CHANGES.keys())
def test_converse_fast_path_gives_what_the_rules_give(change: Change, at: int, text: bool) -> None:
    items = copy.deepcopy(CONVERSE)
    items[at] = change(items[at])
    fast = outcome(ConverseAdapter(text=text), items)
    assert fast == outcome(RulesOnlyConverse(text=text), items)


def test_converse_fast_path_reads_nothing_after_the_stop() -> None:
    stop = next(n for n, item in enumerate(CONVERSE) if "messageStop" in item)
    items = [*CONVERSE[: stop + 1], CONVERSE[TEXT_AT]]
    seen = outcome(ConverseAdapter(), items)
    assert seen == outcome(RulesOnlyConverse(), items)
    assert seen[-2] == (
        "StreamProtocolError",
        "bedrock converse stream protocol error: contentBlockDelta arrived after messageStop",
    )


def _count_ruled(adapter: ConverseAdapter | GeminiAdapter) -> list[Any]:
    """The items `adapter`'s rules will read, as they read them."""
    ruled: list[Any] = []
    rules = adapter._feed

    def counted(item: Any) -> list[ModelEvent]:
        ruled.append(item)
        return rules(item)

    adapter._feed = counted  # type: ignore[method-assign]
    return ruled


def test_the_fast_paths_take_the_deltas_of_the_unchanged_bodies() -> None:
    """What the cases above compare is a fast path's reading: on the bodies as they are,
    the rules see the events around the deltas and, of the deltas, only the one that
    opens what the others add to (Converse's first text delta opens its block, the tool
    block has a start of its own; Gemini's first piece leaves its string going on)."""
    converse_rest = ["messageStart", "contentBlockStop", "contentBlockStart"]
    converse_rest += ["contentBlockStop", "messageStop", "metadata"]
    gemini_rest = ["the call's opening", "its closing", "the finish"]
    for adapter, items, rest in (
        (ConverseAdapter(), CONVERSE, converse_rest),
        (GeminiAdapter(), GEMINI, gemini_rest),
    ):
        ruled = _count_ruled(adapter)
        assert outcome(adapter, items)[-1] == [DoneEvent()]
        assert len(items) - len(rest) > 5
        assert len(ruled) == len(rest) + 1, type(adapter).__name__


# -- Gemini --------------------------------------------------------------------------------

GEMINI = [orjson.loads(line) for line in gemini_body(4, 3)]
#: the third text chunk and the third piece of the streamed call: both on the fast path
CHUNK_TEXT_AT = 2
CHUNK_PIECE_AT = (
    next(
        n
        for n, chunk in enumerate(GEMINI)
        if "partialArgs" in chunk["candidates"][0]["content"]["parts"][0].get("functionCall", {})
    )
    + 2
)
CANDIDATE = ("candidates", 0)
PART = ("candidates", 0, "content", "parts", 0)
CALL = (*PART, "functionCall")
PIECE = (*CALL, "partialArgs", 0)

GEMINI_CHANGES: dict[str, Change] = {
    "nothing": lambda chunk: chunk,
    "error set": setting("error", value={"code": 500, "status": "INTERNAL"}),
    "finishReason": setting(*CANDIDATE, "finishReason", value="STOP"),
    "index 1": setting(*CANDIDATE, "index", value=1),
    "index 0.0": setting(*CANDIDATE, "index", value=0.0),
    "two candidates": lambda chunk: {
        **chunk,
        "candidates": [*chunk["candidates"], {**chunk["candidates"][0], "index": 1}],
    },
    "no candidates": setting("candidates", value=[]),
    "two parts": lambda chunk: setting(
        "candidates", 0, "content", "parts", value=[*chunk["candidates"][0]["content"]["parts"]] * 2
    )(chunk),
    "parts none": setting("candidates", 0, "content", "parts", value=None),
    "part a key more": setting(*PART, "thoughtSignature", value="c2ln"),
    "part text a number": setting(*PART, value={"text": 5}),
    "part text empty": setting(*PART, value={"text": ""}),
    "part thought": setting(*PART, value={"text": "hm", "thought": True}),
    "not a dict": lambda chunk: [chunk],
    "a dict of a class of its own": SubDict,
    "its part of a class of its own": lambda chunk: setting(
        *PART, value=SubDict(chunk["candidates"][0]["content"]["parts"][0])
    )(chunk),
}
#: what a streamed piece's chunk may hold besides
GEMINI_PIECE_CHANGES: dict[str, Change] = {
    "call a key more": setting(*CALL, "id", value="c1"),
    "call names a call": setting(*CALL, "name", value="another"),
    "call holds args": setting(*CALL, "args", value={"path": "b"}),
    "call goes no further": setting(*CALL, "willContinue", value=False),
    "call willContinue 1": setting(*CALL, "willContinue", value=1),
    "two pieces": lambda chunk: setting(
        *CALL,
        "partialArgs",
        value=[*chunk["candidates"][0]["content"]["parts"][0]["functionCall"]["partialArgs"]] * 2,
    )(chunk),
    "pieces none": setting(*CALL, "partialArgs", value=None),
    "piece of another path": setting(*PIECE, "jsonPath", value="$.other"),
    "piece into the string": setting(*PIECE, "jsonPath", value="$.path.deeper"),
    "piece a number": setting(*PIECE, value={"jsonPath": "$.path", "numberValue": 3}),
    "piece's string a number": setting(*PIECE, "stringValue", value=5),
    "piece goes no further": setting(*PIECE, "willContinue", delete=True),
    "piece a key more": setting(*PIECE, "note", value="x"),
}


GEMINI_CASES = [
    *(
        pytest.param(CHUNK_TEXT_AT, change, id=f"text-{name}")
        for name, change in GEMINI_CHANGES.items()
    ),
    *(
        pytest.param(CHUNK_PIECE_AT, change, id=f"piece-{name}")
        for name, change in {**GEMINI_CHANGES, **GEMINI_PIECE_CHANGES}.items()
    ),
]


@pytest.mark.parametrize(("at", "change"), GEMINI_CASES)
def test_gemini_fast_path_gives_what_the_rules_give(at: int, change: Change) -> None:
    chunks = copy.deepcopy(GEMINI)
    chunks[at] = change(chunks[at])
    assert outcome(GeminiAdapter(), chunks) == outcome(RulesOnlyGemini(), chunks)
