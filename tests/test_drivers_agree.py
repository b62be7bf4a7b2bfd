"""The sync and the async driver run one machine: on every cassette they give the same outcome."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from conftest import LIBRARY, library_cassettes

from harness._replay.direct import Outcome, acollect, areplay, replay_outcome

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
