"""The sync and the async driver run one machine: on every cassette they give the same
outcome; and every path a cassette is replayed by reads its header's request alike."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from conftest import LIBRARY, OPENAI_LIBRARY, library_cassettes

from harness import Cassette, write_cassette
from harness._replay.direct import (
    Outcome,
    acollect,
    areplay,
    collect,
    failure_code,
    replay_outcome,
)

#: every provider's: each adapter has one machine, driven both ways
CASSETTES = library_cassettes(provider=None)


async def async_outcome(path: Path) -> Outcome:
    """`replay_outcome`, driven through the adapter's `ato_model_events` instead."""
    return await acollect(areplay(path))


@pytest.mark.parametrize(
    "cassette", CASSETTES, ids=[path.relative_to(LIBRARY).as_posix() for path in CASSETTES]
)
def test_sync_and_async_drivers_give_the_same_outcome(cassette: Path) -> None:
    sync = replay_outcome(cassette)
    asynchronous = asyncio.run(async_outcome(cassette))
    assert asynchronous.events == sync.events
    assert asynchronous.to_json_lines() == sync.to_json_lines()
    assert type(asynchronous.error) is type(sync.error)


#: The request fields a Chat cassette's header may hold, and the code each gives a call
#: finished with `stop`: OpenAI finishes a forced call so (docs/openai-adapters.md).
TOOL_CHOICES = [
    ({}, "stop_with_tool_calls"),
    ({"tool_choice": "auto"}, "stop_with_tool_calls"),
    ({"tool_choice": "required"}, "done"),
    ({"tool_choice": {"type": "function", "function": {"name": "get_weather"}}}, "done"),
]


def _every_path(path: Path) -> dict[str, str]:
    """The code of each way a cassette is replayed: directly (both drivers), the trace,
    and through each of the SDK's readers, sync and async."""
    from harness._replay.sdk import areplay_events, replay_events
    from harness._testing.coverage import outcome_code as code
    from harness._testing.trace import trace

    last = list(trace(path))[-1]
    codes = {
        "direct": code(replay_outcome(path)),
        "async": code(asyncio.run(async_outcome(path))),
        "trace": "done" if last.error is None else str(failure_code(last.error)),
    }
    for reader in ("create", "stream"):
        codes[f"sdk {reader}"] = code(collect(replay_events(path, via="sdk", reader=reader)))
        events = areplay_events(path, via="sdk", reader=reader)
        codes[f"async sdk {reader}"] = code(asyncio.run(acollect(events)))
    return codes


@pytest.mark.parametrize(
    ("request_fields", "code"),
    TOOL_CHOICES,
    ids=["none", "auto", "required", "named"],
)
def test_every_path_reads_the_headers_tool_choice(
    tmp_path: Path, request_fields: dict[str, Any], code: str
) -> None:
    source = Cassette(OPENAI_LIBRARY / "chat" / "errors" / "stop_with_tool_calls.jsonl")
    path = tmp_path / "forced.jsonl"
    header = {**(source.header or {}), "request": {"model": "gpt-4.1-mini", **request_fields}}
    write_cassette(path, [line.data for line in source.lines()], header=header)
    codes = _every_path(path)
    assert codes == dict.fromkeys(codes, code)
