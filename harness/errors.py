"""Error types of the harness, and the adapter's error table as data.

`StreamProtocolError` is the adapter's only error: its `str()` always starts with
`PROTOCOL_ERROR_PREFIX` and it carries a stable `code` from `ERROR_TABLE`.
`CassetteError` (a `ValueError`) says a cassette file is unusable, as `PATH:LINE: reason`.
"""

from __future__ import annotations

from typing import Final

PROTOCOL_ERROR_PREFIX: Final = "Anthropic stream protocol error: "

#: code -> message template (after the prefix). Tests, snapshots and the README follow it.
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


class StreamProtocolError(Exception):
    """The provider's stream broke the protocol; `code` is a key of `ERROR_TABLE`."""

    def __init__(self, code: str, **fields: object) -> None:
        self.code = code
        self.fields = fields
        self.detail = ERROR_TABLE[code].format(**fields)
        super().__init__(PROTOCOL_ERROR_PREFIX + self.detail)

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild_protocol_error, (self.code, self.fields))


def _rebuild_protocol_error(code: str, fields: dict[str, object]) -> StreamProtocolError:
    return StreamProtocolError(code, **fields)


class CassetteError(ValueError):
    """A cassette cannot be used: unreadable, not JSON Lines, or off the schema."""

    def __init__(self, path: str, line: int, reason: str) -> None:
        self.path = path
        self.line = line
        self.reason = reason
        super().__init__(f"{path}:{line}: {reason}")
