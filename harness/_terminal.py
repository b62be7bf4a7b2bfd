"""What the harness prints: text and JSON that a terminal shows as they are, never obeys.

Cassettes, model text and tool results are data from outside. Printed raw, an `ESC [`
sequence moves the cursor, recolours or retitles the terminal, a bidi override reorders
what the reader sees, and a lone surrogate (legal in a JSON string's escapes, not in
UTF-8) makes the write itself fail. Every printed line goes through here: such
characters become their JSON escape (`\\u001b`), so text output stays readable and JSON
output stays valid JSON, UTF-8, and what `json.loads` reads back unchanged.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

__all__ = ["UNPRINTABLE", "json_text", "printable"]

#: C0 and C1 controls, DEL, the line and paragraph separators (a reader splitting on
#: Unicode line ends would cut a JSON line in two), bidi embeddings/overrides/isolates,
#: lone surrogates.
UNPRINTABLE: Final = re.compile(
    "[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
#: The same, outside JSON strings' own escaping (json.dumps already escapes C0).
_UNESCAPED_BY_JSON: Final = re.compile(
    "[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
_ENCODER: Final = json.JSONEncoder(ensure_ascii=False, allow_nan=False)


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def printable(text: str, *, keep: str = "") -> str:
    """`text` with every control, bidi and surrogate character escaped, except those in `keep`."""
    if text.isascii() and text.isprintable():
        return text  # the common case, settled by two flags CPython keeps on the string
    if keep:
        return UNPRINTABLE.sub(lambda m: m.group() if m.group() in keep else _escape(m), text)
    return UNPRINTABLE.sub(_escape, text)


def json_text(value: Any, *, indent: int | None = None) -> str:
    """`value` as JSON (one line, unless `indent`), non-ASCII kept readable, safe to print.

    The escapes added stand only inside JSON strings (the only place such characters can
    be), so the result is valid JSON that decodes to `value`. Raises `ValueError` for a
    value JSON cannot hold (NaN) and `RecursionError` past the interpreter's depth.
    """
    encoder = _ENCODER if indent is None else json.JSONEncoder(ensure_ascii=False, indent=indent)
    text = encoder.encode(value)
    if text.isascii():
        return text  # JSON already escaped every ASCII control: nothing left to escape
    return _UNESCAPED_BY_JSON.sub(_escape, text)
