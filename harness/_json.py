"""JSON as the harness reads and writes it: strict, with one nesting limit, always encodable.

- `strict_json` parses as RFC 8259 defines JSON: no `NaN`/`Infinity`, no number that
  overflows a double, and (as §9 lets a parser) no nesting deeper than `MAX_NESTING`.
- `MAX_NESTING` (254 levels, `[]` being one) is orjson's encoding limit (from 3.12, the
  lowest release allowed: before it, a list nests 255), and the cassette reader's: a
  value the harness accepted can always be written again, sent through `--via sdk` and
  printed, without a recursion error anywhere.
- `dump_line` encodes one line, falling back to the standard library for what orjson
  refuses (integers past 64 bits, lone surrogates), ASCII-escaped, still valid UTF-8.
- `MAX_VALUES` bounds what a server of the harness parses of one body, counted on the
  bytes before any parsing (`values_at_most`): a body of millions of `{}` costs seconds
  and a gigabyte once parsed, whatever its size in bytes; `held_bytes` estimates what a
  body holds once parsed, for the bounds on what is kept. The readers of a peer's
  stream bound each event by it the same way (`too_many_values`), before parsing it;
  one that takes an event in pieces counts each piece as it comes (`value_marks`).
- `sdk_json` reads JSON as the SDKs read an answer (`json.loads`: `NaN` is a number),
  for the guard, which must judge what the SDK hands the code, not refuse its reading.
"""

from __future__ import annotations

import json
import math
from typing import Any, Final

import orjson

__all__ = [
    "MAX_LINE_BYTES",
    "MAX_NESTING",
    "MAX_VALUES",
    "VALUE_BYTES",
    "crowded",
    "deeper_than_limit",
    "dump_line",
    "held_bytes",
    "may_be_too_deep",
    "sdk_json",
    "strict_json",
    "too_many_values",
    "value_marks",
    "values_at_most",
]

MAX_NESTING: Final = 254
#: The longest JSON line read anywhere, newline not counted: 8 MiB (a cassette line, an
#: SSE line or event the guard and the proxy hold).
MAX_LINE_BYTES: Final = 8 * 1024 * 1024
#: The most values a body a server of the harness parses may hold (`values_at_most`): a
#: request's or an answer's, read whole. A million is far past what a model's context
#: holds, and parsed it is at most about a hundred megabytes and a tenth of a second.
MAX_VALUES: Final = 1 << 20
#: What one JSON value parsed is taken to hold, in bytes, besides its text (`held_bytes`):
#: an object of one member, the largest per value counted, holds about 120.
VALUE_BYTES: Final = 128
#: How orjson's encoder says a value nests past its limit, `MAX_NESTING`.
_TOO_DEEP_TO_ENCODE: Final = "Recursion limit"


def sdk_json(data: bytes | bytearray | memoryview) -> Any:
    """`data` read as the SDKs read it (orjson first, then `json.loads`, which takes `NaN`
    and lone surrogates); `ValueError` if it is not JSON to them. An integer past 64 bits
    is orjson's nearest double, where `json.loads` keeps it exact (docs/reliability.md)."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        try:
            return json.loads(bytes(data))
        except RecursionError:
            raise ValueError("nested too deep") from None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"{text} is out of range for a double")
    return value


def deeper_than_limit(value: Any) -> bool:
    """Whether a parsed value nests arrays and objects more than `MAX_NESTING` levels.

    orjson's encoder, whose limit `MAX_NESTING` is, tells at C speed (what it writes is
    dropped): a walk in Python takes seconds over a body of millions of values. A value
    it refuses for another reason (an integer past 64 bits, a lone surrogate) is walked.
    """
    try:
        orjson.dumps(value)
    except orjson.JSONEncodeError as error:
        return _TOO_DEEP_TO_ENCODE in str(error) or _walked_deeper(value)
    return False


def _walked_deeper(value: Any) -> bool:
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > MAX_NESTING:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def values_at_most(data: bytes | bytearray) -> int:
    """The most JSON values `data` can hold, counted on its bytes at C speed, before any
    parsing: one, and one more for each comma and each opening bracket (those inside
    strings counted too: an upper bound)."""
    return 1 + value_marks(data)


def value_marks(data: bytes | bytearray, start: int = 0, end: int | None = None) -> int:
    """The commas and opening brackets of `data[start:end]`, counted at C speed, uncopied:
    each may begin one more JSON value (`values_at_most`)."""
    return (
        data.count(b",", start, end) + data.count(b"[", start, end) + data.count(b"{", start, end)
    )


def too_many_values(data: bytes | bytearray | memoryview) -> bool:
    """Whether `data` may hold more than `MAX_VALUES` JSON values (`values_at_most`): what
    a reader of a peer's bytes asks of one event before parsing it. Data shorter than
    the limit cannot, and is not counted."""
    if len(data) < MAX_VALUES:
        return False
    counted = bytes(data) if isinstance(data, memoryview) else data
    return values_at_most(counted) > MAX_VALUES


def crowded(what: str) -> str:
    """How a refusal says that `what` (`"event 3"`, `"a line"`) may hold more than
    `MAX_VALUES` values (`too_many_values`): the one wording of every reader and writer."""
    return f"{what} may hold more than {MAX_VALUES} JSON values, the limit"


def held_bytes(data: bytes | bytearray) -> int:
    """About the bytes `data`'s JSON holds once parsed: its text, and `VALUE_BYTES` for
    each value it can hold (`values_at_most`)."""
    return len(data) + VALUE_BYTES * values_at_most(data)


def may_be_too_deep(text: str | bytes) -> bool:
    """A cheap pre-check: a text with at most `MAX_NESTING` brackets cannot nest deeper."""
    if isinstance(text, str):
        return text.count("[") + text.count("{") > MAX_NESTING
    return text.count(b"[") + text.count(b"{") > MAX_NESTING


def strict_json(text: str) -> Any:
    """Parse JSON strictly (see the module); `ValueError` for anything else."""
    value = json.loads(text, parse_constant=_no_constant, parse_float=_finite)
    if may_be_too_deep(text) and deeper_than_limit(value):
        raise ValueError(f"nested deeper than {MAX_NESTING} levels")
    return value


def dump_line(value: dict[str, Any]) -> bytes:
    """One line's JSON, UTF-8, without the newline (see the module for the fallback).

    A value nested deeper than `MAX_NESTING` raises `ValueError`: what the harness
    writes, it must be able to read back.
    """
    try:
        return orjson.dumps(value)
    except TypeError:
        if deeper_than_limit(value):
            raise ValueError(f"nested deeper than {MAX_NESTING} levels") from None
        return json.dumps(value, separators=(",", ":"), allow_nan=False).encode("ascii")
