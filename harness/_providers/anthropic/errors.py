"""Anthropic's error table as data (docs/adapter.md): the default `StreamProtocolError`'s.

`harness._exceptions` reads it as the table of provider `"anthropic"`, the one an error
names when it names none; the public names `harness.ERROR_TABLE`, `ERROR_FIELDS` and
`PROTOCOL_ERROR_PREFIX` are these. Pure data: this module imports nothing of the harness,
so the core can load it first.
"""

from __future__ import annotations

from typing import Final

__all__ = ["ERROR_FIELDS", "ERROR_TABLE", "PROTOCOL_ERROR_PREFIX", "PROVIDER"]

#: The provider's name: a cassette header's `provider`, and the default one (a header
#: naming none, a `StreamProtocolError` naming none).
PROVIDER: Final = "anthropic"

PROTOCOL_ERROR_PREFIX: Final = "Anthropic stream protocol error: "

#: code -> message template (after the prefix). Tests, snapshots and the docs follow it.
ERROR_TABLE: Final[dict[str, str]] = {
    "orphan_json_delta": "input_json_delta arrived without an open tool_use block at index {index}",
    "duplicate_tool_start": "duplicate tool_use start for block {index}",
    "invalid_tool_json": "tool_use block {index} had invalid input_json_delta JSON",
    "non_object_tool_input": "tool_use block {index} returned non-object input",
    "unclosed_tool_blocks": "stream ended with unclosed tool_use block(s): {indexes}",
    "missing_message_stop": "stream ended before message_stop",
    "missing_stop_reason": "message_delta did not provide a stop_reason",
    "unsupported_stop_reason": "stop_reason {stop_reason} is not supported",
    "end_turn_with_tool_calls": "stop_reason end_turn arrived with {count} tool call(s)",
    "tool_use_without_tool_calls": "stop_reason tool_use arrived without a tool call",
    "missing_message_start": "stream began with {event_type} instead of message_start",
    "event_after_message_stop": "{event_type} arrived after message_stop",
}

#: field of a template -> what it holds, as a regular expression (RE2, JavaScript, Rust and
#: Python read it alike), so that a message from any language's adapter maps to its code.
ERROR_FIELDS: Final[dict[str, str]] = {
    "index": r"\d+",
    "indexes": r"\d+(, \d+)*",
    "count": r"[1-9]\d*",
    "stop_reason": r".+",
    "event_type": r"\S+",
}
