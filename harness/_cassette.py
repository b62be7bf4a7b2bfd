"""The cassette codec: JSON Lines files of raw stream events, read lazily, written atomically.

A cassette is UTF-8 JSON Lines, one object a line, blank lines ignored:
- line 1 may be a header, `{"cassette": 1, "description": ..., "source": ..., ...}`;
- a line with a `"harness"` key is a replay directive (`{"harness": "abort"}`);
- every other line is one raw stream event as the API's SSE `data:` field carries it.

Each line is checked against `cassette.schema.json` (shipped in this package) as it is
read: strict on the envelope (event `type`, integer `index`, required keys), free on
the payloads (`input`, `partial_json`, block and delta kinds). An unusable cassette
raises `CassetteError` (`PATH:LINE: reason`). Reading never holds more than one line,
so memory does not grow with the file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias

import orjson

from harness._exceptions import CassetteError
from harness._files import atomic_write
from harness._schema_check import Check, compile_check

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

__all__ = [
    "AT_DIRECTIVE",
    "FORMAT_VERSION",
    "MAX_AT_MS",
    "Cassette",
    "CassetteLine",
    "CassetteSource",
    "DirectiveHandler",
    "dump_line",
    "expand_paths",
    "pass_over",
    "read_cassette",
    "write_cassette",
]

FORMAT_VERSION: Final = 1
SOURCES: Final = ("synthetic", "recorded", "imported")

LineKind = Literal["event", "directive"]

#: The directive a recording writes before each event: `{"harness": "at", "ms": N}`.
AT_DIRECTIVE: Final = "at"

#: The largest `at` offset a cassette may hold: a day, far beyond any recording's length.
MAX_AT_MS: Final = 86_400_000

#: Called with each directive line's object as replay reaches it.
DirectiveHandler = Callable[[dict[str, Any]], None]


def pass_over(directive: dict[str, Any]) -> None:
    """The default directive handler: plain replay changes nothing for a directive."""


@dataclass(frozen=True, slots=True)
class CassetteLine:
    """One event or directive line of a cassette, with its 1-based line number."""

    number: int
    kind: LineKind
    data: dict[str, Any]


@cache
def _validators() -> dict[str, Draft202012Validator]:
    # Imported here (~0.1 s): lines the fast pre-check settles never need the validator.
    from jsonschema import Draft202012Validator

    definitions = schema()["$defs"]
    return {
        name: Draft202012Validator({"$ref": f"#/$defs/{name}", "$defs": definitions})
        for name in ("header", "event", "directive")
    }


def schema() -> dict[str, Any]:
    """The cassette line JSON Schema shipped with the package."""
    loaded: dict[str, Any] = json.loads(
        resources.files("harness").joinpath("cassette.schema.json").read_text()
    )
    return loaded


@cache
def _fast_checks() -> dict[str, Check]:
    """Sound pre-checks compiled from the same schema: `True` only for a certain match."""
    definitions = schema()["$defs"]
    return {
        name: compile_check({"$ref": f"#/$defs/{name}"}, definitions)
        for name in ("header", "event", "directive")
    }


def _schema_reason(kind: str, data: dict[str, Any]) -> str | None:
    if _fast_checks()[kind](data) is True:
        return None  # certain match: the full validator would accept it, and costs ~100x more
    validator = _validators()[kind]
    if validator.is_valid(data):
        return None
    error = min(validator.iter_errors(data), key=lambda e: (-len(e.absolute_path), e.message))
    where = "".join(f"[{part!r}]" for part in error.absolute_path)
    location = f"{where}: " if where else ""
    return f"{kind} line does not match the cassette schema: {location}{error.message}"


def _classify(data: dict[str, Any]) -> str:
    if "cassette" in data:
        return "header"
    if "harness" in data:
        return "directive"
    return "event"


class Cassette:
    """A cassette file: its header (read at once) and its lines (read lazily, once per call)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self.header: dict[str, Any] | None = None
        for number, data in self._objects():
            if _classify(data) == "header":
                self._check(number, "header", data)
                self.header = data
            break

    @property
    def description(self) -> str:
        return str((self.header or {}).get("description", ""))

    def lines(self) -> Iterator[CassetteLine]:
        """Event and directive lines in file order; raises `CassetteError` at the first bad one."""
        seen_event = False
        number = 0
        for position, (number, data) in enumerate(self._objects()):
            kind = _classify(data)
            if kind == "header":
                if position:
                    raise CassetteError(
                        self.path, number, "a cassette header may only be on line 1"
                    )
                continue
            self._check(number, kind, data)
            if kind == "directive" and data["harness"] == AT_DIRECTIVE:
                self._check_at(number, data)
            seen_event = seen_event or kind == "event"
            yield CassetteLine(number, "event" if kind == "event" else "directive", data)
        if not seen_event:
            raise CassetteError(self.path, max(number, 1), "cassette holds no stream events")

    def events(self) -> Iterator[dict[str, Any]]:
        """The raw stream events alone, directives passed over."""
        for line in self.lines():
            if line.kind == "event":
                yield line.data

    def validate(self) -> int:
        """Check every line; return the number of event lines."""
        return sum(1 for line in self.lines() if line.kind == "event")

    def _objects(self) -> Iterator[tuple[int, dict[str, Any]]]:
        try:
            handle = open(self.path, "rb")  # noqa: SIM115 - closed in the finally below
        except OSError as error:
            raise CassetteError(self.path, 1, f"cannot read: {error.strerror or error}") from None
        try:
            for number, raw in enumerate(handle, start=1):
                if not raw.strip():
                    continue
                try:
                    data = orjson.loads(raw)
                except orjson.JSONDecodeError as error:
                    raise CassetteError(self.path, number, _json_reason(raw, error)) from None
                if not isinstance(data, dict):
                    kind = type(data).__name__ if data is not None else "null"
                    raise CassetteError(self.path, number, f"expected a JSON object, got {kind}")
                yield number, data
        except OSError as error:
            raise CassetteError(self.path, 1, f"cannot read: {error.strerror or error}") from None
        finally:
            handle.close()

    def _check_at(self, number: int, data: dict[str, Any]) -> None:
        ms = data.get("ms")
        if isinstance(ms, bool) or not isinstance(ms, int | float) or not 0 <= ms <= MAX_AT_MS:
            raise CassetteError(
                self.path,
                number,
                f"an at directive needs ms, a number of milliseconds from 0 to {MAX_AT_MS}",
            )

    def _check(self, number: int, kind: str, data: dict[str, Any]) -> None:
        reason = _schema_reason(kind, data)
        if reason is not None:
            if kind == "header" and data.get("cassette") != FORMAT_VERSION:
                reason = (
                    f"cassette format version {data.get('cassette')!r} is not supported "
                    f"(this harness reads version {FORMAT_VERSION})"
                )
            raise CassetteError(self.path, number, reason)


def _json_reason(raw: bytes, error: ValueError) -> str:
    """Why a line did not parse, binary content told apart from broken JSON."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as undecodable:
        at = undecodable.start
        return f"not UTF-8 text (byte 0x{raw[at]:02x} at column {at + 1})"
    return f"not valid JSON: {error}"


#: What every function taking a cassette accepts: a path, or a `Cassette` already open.
CassetteSource: TypeAlias = "str | os.PathLike[str] | Cassette"


def read_cassette(source: CassetteSource) -> Cassette:
    """Open a cassette (a `Cassette` is returned as it is): the header is read and checked
    now, the lines when iterated."""
    return source if isinstance(source, Cassette) else Cassette(source)


def expand_paths(paths: Sequence[str]) -> list[str]:
    """Files as given; a folder means every `*.jsonl` below it, recursively, sorted."""
    expanded: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            expanded.extend(sorted(str(found) for found in Path(path).rglob("*.jsonl")))
        else:
            expanded.append(path)
    return expanded


def make_header(description: str, source: str = "synthetic", **metadata: Any) -> dict[str, Any]:
    """A version-1 header line."""
    if source not in SOURCES:
        raise ValueError(f"source must be one of {', '.join(SOURCES)}, not {source!r}")
    return {"cassette": FORMAT_VERSION, "description": description, "source": source, **metadata}


def dump_line(value: dict[str, Any]) -> bytes:
    """One cassette line's JSON, UTF-8, without the newline.

    orjson is fast but stops at 255 levels of nesting and at lone surrogates; a value it
    refuses (one read back from a cassette may nest up to the reader's limit) is written
    by the standard library instead, every non-ASCII character escaped, so the line is
    still valid UTF-8 JSON that reads back as the same value.
    """
    try:
        return orjson.dumps(value)
    except TypeError:
        return json.dumps(value, separators=(",", ":"), allow_nan=False).encode("ascii")


def write_cassette(
    path: str | os.PathLike[str],
    lines: Iterable[dict[str, Any]],
    *,
    header: dict[str, Any] | None = None,
    overwrite: bool = True,
) -> None:
    """Write a cassette atomically: a temporary file in the same folder, then a rename.

    If writing fails or is interrupted (the `lines` iterable may be a live stream), the
    temporary file is removed and whatever was at `path` stays as it was. With
    `overwrite=False` an existing `path` raises `FileExistsError`, checked at the rename.
    """
    with atomic_write(path, overwrite=overwrite) as handle:
        if header is not None:
            handle.write(dump_line(header) + b"\n")
        for line in lines:
            handle.write(dump_line(line) + b"\n")
