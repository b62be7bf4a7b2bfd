"""The adapters' benchmark against orjson.loads runs over bodies the adapters accept and
prints each figure (none is asserted: people read them, docs/openai-adapters.md)."""

from __future__ import annotations

import orjson
import pytest

from bench.openai_adapters import anthropic_body, chat_body, converse_body, main, responses_body
from harness._events import DoneEvent, ToolCallEvent
from harness._providers.anthropic.adapter import to_model_events as anthropic_events
from harness._providers.bedrock_converse.adapter import to_model_events as converse_events
from harness._providers.openai_chat.adapter import DONE, to_model_events as chat_events
from harness._providers.openai_responses.adapter import to_model_events as responses_events
from harness._views import EventView


def test_the_benchmarked_bodies_are_good_answers() -> None:
    chat = list(chat_events([*map(orjson.loads, chat_body(5, 3)), DONE]))
    responses = list(responses_events(map(orjson.loads, responses_body(5, 3))))
    anthropic = list(
        anthropic_events(EventView(orjson.loads(line)) for line in anthropic_body(5, 3))
    )
    converse = list(converse_events(map(orjson.loads, converse_body(5, 3))))
    for events in (chat, responses, anthropic, converse):
        assert len(events) == 7
        assert events[-2:] == [events[-2], DoneEvent()]
        assert isinstance(events[-2], ToolCallEvent)
        assert events[-2].call.input == {"path": "aaa"}


def test_a_quick_run_prints_a_ratio_and_its_spread_for_each_dialect(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--quick"]) == 0
    rows = capsys.readouterr().out.splitlines()[2:]
    assert [row.split()[0] for row in rows] == [
        "anthropic",
        "chat",
        "responses",
        "converse",
        "gemini",
    ]
    for row in rows:
        ratio, spread, met = row.split()[-3:]
        low, high = map(float, spread.removesuffix("x").split("-"))
        assert ratio.endswith("x") and low <= float(ratio[:-1]) <= high, row
        # every dialect's target is 2x (a ratio printed as 2.00x may be either side)
        shown = float(ratio[:-1])
        assert met in ({"yes"} if shown < 2 else {"NO"} if shown > 2 else {"yes", "NO"}), row
