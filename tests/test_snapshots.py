"""Every cassette under `cassettes/` replays to its reviewed snapshot: adding one adds a test."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import LIBRARY
from syrupy.assertion import SnapshotAssertion

from harness import expand_paths, replay_outcome
from harness.snapshot import OutcomeSnapshotExtension

CASSETTES = [Path(path) for path in expand_paths([str(LIBRARY)])]


@pytest.mark.parametrize(
    "cassette", CASSETTES, ids=[path.relative_to(LIBRARY).as_posix() for path in CASSETTES]
)
def test_cassette_replays_as_snapshotted(cassette: Path, snapshot: SnapshotAssertion) -> None:
    assert replay_outcome(cassette) == snapshot(extension_class=OutcomeSnapshotExtension)
