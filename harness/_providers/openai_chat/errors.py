"""The Chat Completions adapter's error table as data (docs/openai-adapters.md).

Registered with `harness._exceptions` as provider `"openai-chat"` when imported, so that
`StreamProtocolError(code, provider=PROVIDER, **fields)` reads it. N is a tool call's
`index`; every message starts with `OPENAI_PROTOCOL_ERROR_PREFIX`.
"""

from __future__ import annotations

from typing import Any, Final

from harness._exceptions import ErrorTable, StreamProtocolError, register_error_table
from harness._providers.openai_shared import OPENAI_PROTOCOL_ERROR_PREFIX

__all__ = ["ERROR_FIELDS", "ERROR_TABLE", "PROVIDER", "TABLE"]

PROVIDER: Final = "openai-chat"

#: code -> message template (after the prefix)
ERROR_TABLE: Final[dict[str, str]] = {
    "orphan_arguments_delta": (
        "tool call piece for index {index}, which no piece opened with an id and a name"
    ),
    "duplicate_tool_call": "tool call {index} was opened again with another {part}",
    "incomplete_tool_call_start": "first piece of a tool call (index {at}) has no {part}",
    "invalid_tool_json": "tool call {index} had arguments that are not JSON",
    "non_object_tool_input": "tool call {index} had arguments that are not a JSON object",
    "unfinished_tool_calls": "stream ended with tool call(s) {indexes} and no finish_reason",
    "missing_done": "stream ended before data: [DONE]",
    "missing_finish_reason": "choice 0 did not provide a finish_reason",
    "unsupported_finish_reason": "finish_reason {finish_reason} is not supported",
    "stop_with_tool_calls": "finish_reason stop arrived with {count} tool call(s)",
    "tool_calls_without_tool_calls": "finish_reason tool_calls arrived without a tool call",
    "inconsistent_chunk": "a chunk of completion {got} arrived in completion {expected}",
    "chunk_after_finish": "{what} arrived for choice 0 after its finish_reason",
    "chunk_after_done": "a chunk arrived after data: [DONE]",
    "multiple_choices": "a chunk carried choice {choice}; only choice 0 is read (n=1)",
    "refusal": "choice 0 refused to answer (delta.refusal)",
    "non_string_content": "choice 0's delta.content is {shape}, not text",
}

#: field of a template -> what it holds, as a regular expression (as `ERROR_FIELDS` of
#: `harness._exceptions`)
ERROR_FIELDS: Final[dict[str, str]] = {
    "index": r"\d+",
    "indexes": r"\d+(, \d+)*",
    "at": r".+",
    "part": r"(non-negative integer index|id|function name)",
    "count": r"[1-9]\d*",
    "finish_reason": r".+",
    "got": r".*",
    "expected": r".*",
    "what": r"(content|a refusal|a tool call piece|a function_call|finish_reason .+)",
    "choice": r".+",
    "shape": r"(a list|an object|a number|a boolean|a list with a part of type .+)",
}


def _rebuild(code: str, fields: dict[str, Any]) -> StreamProtocolError:
    """One of this table's errors again, from `(code, fields)`: what unpickling calls."""
    return StreamProtocolError(code, provider=PROVIDER, **fields)


TABLE: Final = ErrorTable(OPENAI_PROTOCOL_ERROR_PREFIX, ERROR_TABLE, ERROR_FIELDS, _rebuild)
register_error_table(PROVIDER, TABLE)
