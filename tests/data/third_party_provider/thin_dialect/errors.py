"""The thin dialect's error table, registered as provider `"thin"` when imported."""

from __future__ import annotations

from typing import Any, Final

from harness._exceptions import ErrorTable, StreamProtocolError, register_error_table

PROVIDER: Final = "thin"
PREFIX: Final = "Thin stream protocol error: "
ERROR_TABLE: Final = {
    "missing_end": "stream ended without its end line",
    "invalid_tool_json": "call {index} had arguments that are not JSON",
    "non_object_tool_input": "call {index} had arguments that are not a JSON object",
    "wrong_reason": "the stream ended with reason {reason} after {count} call(s)",
    "line_after_end": "a {kind} line came after the end",
}
ERROR_FIELDS: Final = {"index": r"\d+", "reason": r".*", "count": r"\d+", "kind": r".*"}


def _rebuild(code: str, fields: dict[str, Any]) -> StreamProtocolError:
    return StreamProtocolError(code, provider=PROVIDER, **fields)


TABLE: Final = ErrorTable(PREFIX, ERROR_TABLE, ERROR_FIELDS, _rebuild)
register_error_table(PROVIDER, TABLE)
