"""JSON as the harness reads and writes it: strict, with one nesting limit, always encodable.

- `strict_json` parses as RFC 8259 defines JSON: no `NaN`/`Infinity`, no number that
  overflows a double, and (as §9 lets a parser) no nesting deeper than `MAX_NESTING`.
- `MAX_NESTING` (254 levels, `[]` being one) is orjson's encoding limit, and the
  cassette reader's: a value the harness accepted can always be written again, sent
  through `--via sdk` and printed, without a recursion error anywhere.
- `dump_line` encodes one line, falling back to the standard library for what orjson
  refuses (integers past 64 bits, lone surrogates), ASCII-escaped, still valid UTF-8.
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
    "deeper_than_limit",
    "dump_line",
    "may_be_too_deep",
    "sdk_json",
    "strict_json",
]

MAX_NESTING: Final = 254
#: The longest JSON line read anywhere, newline not counted: 8 MiB (a cassette line, an
#: SSE line or event the guard and the proxy hold).
MAX_LINE_BYTES: Final = 8 * 1024 * 1024


def sdk_json(data: bytes | bytearray | memoryview) -> Any:
    """`data` read as the SDKs read it (orjson first, then `json.loads`, which takes `NaN`,
    integers past 64 bits and lone surrogates); `ValueError` if it is not JSON to them."""
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
    """Whether a parsed value nests arrays and objects more than `MAX_NESTING` levels."""
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
