"""The OpenAI adapters' benchmark runs over bodies the adapters accept and prints each
figure (none is asserted: people read them, docs/openai-adapters.md)."""

from __future__ import annotations

import orjson
import pytest

from bench.openai_adapters import chat_body, main, responses_body
from harness._events import DoneEvent, ToolCallEvent
from harness._providers.openai_chat.adapter import DONE, to_model_events as chat_events
from harness._providers.openai_responses.adapter import to_model_events as responses_events


def test_the_benchmarked_bodies_are_good_answers() -> None:
    chat = list(chat_events([*map(orjson.loads, chat_body(5, 3)), DONE]))
    responses = list(responses_events(map(orjson.loads, responses_body(5, 3))))
    for events in (chat, responses):
        assert len(events) == 7
        assert events[-2:] == [events[-2], DoneEvent()]
        assert isinstance(events[-2], ToolCallEvent)
        assert events[-2].call.input == {"path": "aaa"}


def test_a_quick_run_prints_a_ratio_for_each_dialect(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--quick"]) == 0
    rows = capsys.readouterr().out.splitlines()[2:]
    assert [row.split()[0] for row in rows] == ["chat", "responses"]
    for row in rows:
        ratio, met = row.split()[-2:]
        assert ratio.endswith("x") and float(ratio[:-1]) > 0, row
        assert met in ("yes", "NO"), row
