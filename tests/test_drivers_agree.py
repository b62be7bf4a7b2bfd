"""The sync and the async driver run one machine: on every cassette they give the same outcome."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from anthropic import APIStatusError
from conftest import LIBRARY

from harness import StreamProtocolError, expand_paths
from harness._replay.direct import Outcome, areplay, replay_outcome

CASSETTES = [Path(path) for path in expand_paths([str(LIBRARY)])]


async def async_outcome(path: Path) -> Outcome:
    """`replay_outcome`, driven through `ato_model_events` instead."""
    outcome = Outcome()
    try:
        async for event in areplay(path):
            outcome.events.append(event)
    except (StreamProtocolError, APIStatusError) as error:
        outcome.error = error
    return outcome


@pytest.mark.parametrize(
    "cassette", CASSETTES, ids=[path.relative_to(LIBRARY).as_posix() for path in CASSETTES]
)
def test_sync_and_async_drivers_give_the_same_outcome(cassette: Path) -> None:
    sync = replay_outcome(cassette)
    asynchronous = asyncio.run(async_outcome(cassette))
    assert asynchronous.events == sync.events
    assert asynchronous.to_json_lines() == sync.to_json_lines()
    assert type(asynchronous.error) is type(sync.error)
