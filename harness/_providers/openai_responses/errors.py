"""The Responses adapter's error table as data (docs/openai-adapters.md).

Registered with `harness._exceptions` as provider `"openai-responses"` when imported, so
that `StreamProtocolError(code, provider=PROVIDER, **fields)` reads it. N is an output
index; every message starts with `OPENAI_PROTOCOL_ERROR_PREFIX`.
"""

from __future__ import annotations

from typing import Any, Final

from harness._exceptions import ErrorTable, StreamProtocolError, register_error_table
from harness._providers.openai_shared import OPENAI_PROTOCOL_ERROR_PREFIX

__all__ = ["ERROR_FIELDS", "ERROR_TABLE", "PROVIDER", "TABLE"]

PROVIDER: Final = "openai-responses"

#: code -> message template (after the prefix)
ERROR_TABLE: Final[dict[str, str]] = {
    "missing_response_created": "stream began with {event_type} instead of response.created",
    "orphan_delta": "{event_type} arrived without an open {part} at output index {at}",
    "duplicate_output_item": "duplicate response.output_item.added for output index {index}",
    "invalid_tool_json": "function_call item {index} had arguments that are not JSON",
    "non_object_tool_input": "function_call item {index} had arguments that are not a JSON object",
    "arguments_mismatch": "function_call item {index} has final arguments other than its deltas",
    "output_mismatch": "{terminal}'s output disagrees with the stream: {what}",
    "unfinished_output_items": "{event_type} arrived with output item(s) {indexes} not done",
    "missing_response_completed": "stream ended before response.completed",
    "response_incomplete": "response ended with status {status} ({reason})",
    "response_failed": "response failed: {error_code}: {error_message}",
    "event_after_response_completed": "{event_type} arrived after {terminal}",
    "sequence_gap": "{event_type} has sequence_number {got}, expected {expected}",
    "inconsistent_response": "{event_type} is of response {got}, not {expected}",
    "refusal": "output item {index} is a refusal (response.refusal.delta)",
    "unsupported_output_item": "output item {index} is a {item_type}, which is not supported",
}

#: field of a template -> what it holds, as a regular expression (as `ERROR_FIELDS` of
#: `harness._exceptions`)
ERROR_FIELDS: Final[dict[str, str]] = {
    "event_type": r".+",
    "part": r"(output item|content part .+)",
    "at": r".+",
    "index": r"\d+",
    "indexes": r"\d+(, \d+)*",
    "status": r".*",
    "reason": r".*",
    "error_code": r".*",
    "error_message": r".*",
    "terminal": r"response\.(completed|incomplete)",
    "got": r".*",
    "expected": r".*",
    "item_type": r".*",
    "what": r".+",
}


def _rebuild(code: str, fields: dict[str, Any]) -> StreamProtocolError:
    """One of this table's errors again, from `(code, fields)`: what unpickling calls."""
    return StreamProtocolError(code, provider=PROVIDER, **fields)


TABLE: Final = ErrorTable(OPENAI_PROTOCOL_ERROR_PREFIX, ERROR_TABLE, ERROR_FIELDS, _rebuild)
register_error_table(PROVIDER, TABLE)
