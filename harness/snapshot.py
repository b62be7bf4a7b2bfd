"""syrupy extensions that store a replay `Outcome`, or any JSON value, as a readable file.

An `Outcome` is one snapshot file per test (so one per cassette in a parametrised
suite), one JSON object a line: the internal events in their JSON form (docs/adapter.md),
then, for a failed stream, the failure line (`protocol_error` with its code and full
message, or `api_error` with the error type and message). Anything else the code under
test returned (a summary string, a dict, a list, and dataclasses, pydantic models and
attrs classes as the objects of their fields) is stored as indented JSON in
`<test name>.json`. Reviewers read these files like code, so they are never a blob.

    def test_replay(snapshot):
        assert replay_outcome(path) == snapshot(extension_class=OutcomeSnapshotExtension)

`OutcomeOrValueSnapshot` (the plugin's `snapshot_outcome` fixture) picks the extension
by the value compared: an `Outcome` goes to the `.jsonl` file, anything else to `.json`.
"""

from __future__ import annotations

import dataclasses
import json
import unicodedata
from pathlib import Path
from typing import TYPE_CHECKING

from syrupy.extensions.base import AbstractSyrupyExtension
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from harness._replay.direct import Outcome

if TYPE_CHECKING:
    from syrupy.assertion import SnapshotAssertion
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

__all__ = [
    "JSONValueSnapshotExtension",
    "NoJSONForm",
    "OutcomeOrValueSnapshot",
    "OutcomeSnapshotExtension",
    "outcome_to_jsonl",
    "trace_line",
    "value_to_json",
]


def outcome_to_jsonl(outcome: Outcome) -> str:
    """The snapshot text of an outcome: one JSON object a line, failure last, newline-ended."""
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in outcome.to_json_lines())


def trace_line(value: object) -> str | None:
    """For a snapshot failure's report: the command that prints the trace of the cassette
    `value` was replayed from, or None when it is no `Outcome` of a cassette file."""
    if not isinstance(value, Outcome) or value.source is None:
        return None
    from harness._testing.trace import trace_hint

    return f"trace: {trace_hint(value.source)}"


class NoJSONForm(TypeError):
    """A value `value_to_json` cannot store; the message is one line saying how to give it one."""


def _json_form(value: object) -> object:
    """The JSON form of a dataclass, a pydantic model or an attrs class (its fields, by
    name, in their order; nested ones converted in turn); `NoJSONForm` for anything else."""
    kind = type(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: getattr(value, field.name) for field in dataclasses.fields(value)}
    model_dump = getattr(value, "model_dump", None)
    if callable(model_dump) and hasattr(kind, "model_fields"):  # pydantic 2
        return model_dump(mode="json")
    attributes = getattr(kind, "__attrs_attrs__", None)
    if attributes is not None:  # attrs
        return {attribute.name: getattr(value, attribute.name) for attribute in attributes}
    raise NoJSONForm(f"{kind.__name__} has no JSON form: {_how_to_give_one(value)}")


def _how_to_give_one(value: object) -> str:
    if isinstance(value, set | frozenset):
        return "compare sorted(value) (a list) with snapshot_outcome"
    if isinstance(value, bytes | bytearray):
        return "compare value.decode() (a string) with snapshot_outcome"
    return (
        "make it a dataclass, a pydantic model or an attrs class, or compare a dict or list "
        "made from it with snapshot_outcome"
    )


def value_to_json(value: object) -> str:
    """The snapshot text of a JSON value: indented, keys in their order, newline-ended.
    Dataclasses, pydantic models and attrs classes are stored as the objects of their fields.

    Raises `NoJSONForm` (a `TypeError`), one line naming the type and how to give it a JSON
    form, when `value` holds something else.
    """
    try:
        return json.dumps(value, ensure_ascii=False, indent=2, default=_json_form) + "\n"
    except NoJSONForm:
        raise
    except (TypeError, ValueError) as error:  # a dict key that is no string, a cycle
        raise NoJSONForm(f"{type(value).__name__} has no JSON form: {error}") from None


class _ReadableFileExtension(SingleFileSnapshotExtension):
    """One text file a test, named after the test id kept readable."""

    _write_mode = WriteMode.TEXT

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
        if not location.name.endswith(f".{cls.file_extension}"):
            return False  # `.json` and `.jsonl` files of one test belong to two extensions
        stem = location.name.removesuffix(f".{cls.file_extension}")
        name = cls.get_snapshot_name(test_location=test_location)
        # A second assertion in one test is stored as `<name>.1` (or `<name>[index]`).
        return stem == name or stem.startswith((f"{name}.", f"{name}["))


class OutcomeSnapshotExtension(_ReadableFileExtension):
    """Stores an `Outcome` (from `replay_outcome`) as `<test name>.jsonl`, one line an event."""

    file_extension = "jsonl"

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


class JSONValueSnapshotExtension(_ReadableFileExtension):
    """Stores any JSON-serialisable value as `<test name>.json`, indented."""

    file_extension = "json"

    def serialize(
        self,
        data: SerializableData,
        *,
        exclude: PropertyFilter | None = None,
        include: PropertyFilter | None = None,
        matcher: PropertyMatcher | None = None,
    ) -> SerializedData:
        return value_to_json(data)


class OutcomeOrValueSnapshot:
    """`assert value == snapshot_outcome`: an `Outcome` as `.jsonl`, anything else as `.json`.

    Holds one syrupy assertion per extension, so each keeps its own index when a test
    compares several values.
    """

    def __init__(self, snapshot: SnapshotAssertion) -> None:
        self._outcome = snapshot.use_extension(OutcomeSnapshotExtension)
        self._value = snapshot.use_extension(JSONValueSnapshotExtension)
        #: the assertion of the last comparison, whose diff pytest's report shows
        self.last: SnapshotAssertion | None = None

    def __eq__(self, other: object) -> bool:
        __tracebackhide__ = True
        self.last = self._outcome if isinstance(other, Outcome) else self._value
        if self.last is self._value:
            try:
                value_to_json(other)
            except NoJSONForm as error:
                problem = f"snapshot_outcome: {error}"
            else:
                return self.last == other
            import pytest

            pytest.fail(problem, pytrace=False)
        return self.last == other

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self.last) if self.last is not None else "<snapshot_outcome>"
