"""A syrupy extension that stores a replay `Outcome` as a readable JSONL snapshot.

One snapshot file per test (so one per cassette in a parametrised suite), one JSON
object a line: the internal events in their JSON form (docs/adapter.md), then, for a
failed stream, the failure line (`protocol_error` with its code and full message, or
`api_error` with the error type and message). Reviewers read these files like code, so
they are never a blob.

    def test_replay(snapshot):
        assert replay_outcome(path) == snapshot(extension_class=OutcomeSnapshotExtension)
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path
from typing import TYPE_CHECKING

from syrupy.extensions.base import AbstractSyrupyExtension
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from harness._replay import Outcome

if TYPE_CHECKING:
    from syrupy.location import PyTestLocation
    from syrupy.types import (
        PropertyFilter,
        PropertyMatcher,
        SerializableData,
        SerializedData,
        SnapshotIndex,
    )

#: Characters no file name may hold; `/` (a cassette's folder in a test id) becomes `__`.
_FORBIDDEN = frozenset('\\?*:|"<>')

__all__ = ["OutcomeSnapshotExtension", "outcome_to_jsonl"]


def outcome_to_jsonl(outcome: Outcome) -> str:
    """The snapshot text of an outcome: one JSON object a line, failure last, newline-ended."""
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in outcome.to_json_lines())


class OutcomeSnapshotExtension(SingleFileSnapshotExtension):
    """Stores an `Outcome` (from `replay_outcome`) as `<test name>.jsonl`, one line an event."""

    file_extension = "jsonl"
    _write_mode = WriteMode.TEXT

    def serialize(
        self,
        data: SerializableData,
        *,
        exclude: PropertyFilter | None = None,
        include: PropertyFilter | None = None,
        matcher: PropertyMatcher | None = None,
    ) -> SerializedData:
        if not isinstance(data, Outcome):
            raise TypeError(
                f"OutcomeSnapshotExtension stores a harness Outcome, not {type(data).__name__}"
            )
        return outcome_to_jsonl(data)

    @classmethod
    def get_snapshot_name(cls, *, test_location: PyTestLocation, index: SnapshotIndex = 0) -> str:
        """The file name stem: the test id, `errors/x.jsonl` kept readable as `errors__x.jsonl`."""
        name = AbstractSyrupyExtension.get_snapshot_name(test_location=test_location, index=index)
        kept = (
            char
            for char in name.replace("/", "__")
            if char not in _FORBIDDEN and not unicodedata.category(char).startswith("C")
        )
        return "".join(kept)[: 255 - len(cls.file_extension) - 1]

    @classmethod
    def matches_test_location(
        cls, *, test_location: PyTestLocation, snapshot_location: str
    ) -> bool:
        """Own the file this extension named for the test, whatever its id held."""
        location = Path(snapshot_location)
        if location.parent != Path(cls.dirname(test_location=test_location)):
            return False
        stem = location.name.removesuffix(f".{cls.file_extension}")
        name = cls.get_snapshot_name(test_location=test_location)
        # A second assertion in one test is stored as `<name>.1` (or `<name>[index]`).
        return stem == name or stem.startswith((f"{name}.", f"{name}["))
