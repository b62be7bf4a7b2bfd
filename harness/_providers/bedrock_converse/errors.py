"""The ConverseStream adapter's error table as data (docs/bedrock-converse.md).

Registered with `harness._exceptions` as provider `"bedrock-converse"` when imported, so
that `StreamProtocolError(code, provider=PROVIDER, **fields)` reads it. N is a block's
`contentBlockIndex`; every message starts with `PREFIX`.
"""

from __future__ import annotations

from typing import Any, Final

from harness._exceptions import ErrorTable, StreamProtocolError, register_error_table

__all__ = ["ERROR_FIELDS", "ERROR_TABLE", "PREFIX", "PROVIDER", "TABLE"]

PROVIDER: Final = "bedrock-converse"
PREFIX: Final = "bedrock converse stream protocol error: "

#: code -> message template (after the prefix)
ERROR_TABLE: Final[dict[str, str]] = {
    "missing_message_start": "the first event is {event}, not messageStart",
    "duplicate_message_start": "messageStart arrived again",
    "orphan_tool_delta": "toolUse delta for block {index}, which no toolUse start opened",
    "duplicate_block_start": "contentBlockStart for block {index}, which is open already",
    "delta_kind_mismatch": "a {kind} delta for tool block {index}",
    "invalid_tool_json": "tool block {index} had an input that is not JSON",
    "non_object_tool_input": "tool block {index} had an input that is not a JSON object",
    "unfinished_tool_blocks": "messageStop arrived with tool block(s) {indexes} open",
    "missing_message_stop": "stream ended before messageStop",
    "unsupported_stop_reason": "stopReason {stop_reason} is not supported",
    "end_turn_with_tool_calls": "stopReason end_turn arrived with {count} tool call(s)",
    "tool_use_without_tool_calls": "stopReason tool_use arrived without a tool call",
    "event_after_stop": "{event} arrived after messageStop",
}

#: field of a template -> what it holds, as a regular expression (as `ERROR_FIELDS` of
#: `harness._exceptions`)
ERROR_FIELDS: Final[dict[str, str]] = {
    "event": r".+",
    "index": r".+",
    "indexes": r"\d+(, \d+)*",
    "kind": r".+",
    "count": r"[1-9]\d*",
    "stop_reason": r".+",
}


def _rebuild(code: str, fields: dict[str, Any]) -> StreamProtocolError:
    """One of this table's errors again, from `(code, fields)`: what unpickling calls."""
    return StreamProtocolError(code, provider=PROVIDER, **fields)


TABLE: Final = ErrorTable(PREFIX, ERROR_TABLE, ERROR_FIELDS, _rebuild)
register_error_table(PROVIDER, TABLE)
