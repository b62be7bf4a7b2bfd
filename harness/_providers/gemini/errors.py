"""The Gemini adapter's error table as data (docs/gemini.md).

Registered with `harness._exceptions` as provider `"gemini"` when imported, so that
`StreamProtocolError(code, provider=PROVIDER, **fields)` reads it. N is a function
call's position in the answer (0 the first), the one its id is derived from when the
API gives none; every message starts with `PREFIX`.
"""

from __future__ import annotations

from typing import Any, Final

from harness._exceptions import ErrorTable, StreamProtocolError, register_error_table

__all__ = ["ERROR_FIELDS", "ERROR_TABLE", "PREFIX", "PROVIDER", "TABLE"]

PROVIDER: Final = "gemini"
PREFIX: Final = "Gemini stream protocol error: "

#: code -> message template (after the prefix)
ERROR_TABLE: Final[dict[str, str]] = {
    "multiple_candidates": "a chunk carried candidate {candidate}; only candidate 0 is read",
    "missing_finish_reason": "stream ended without a finishReason",
    "unsupported_finish_reason": "finishReason {finish_reason} is not supported",
    "chunk_after_finish": "{what} arrived after the finishReason",
    "prompt_blocked": "the prompt was blocked (promptFeedback.blockReason {reason})",
    "unnamed_function_call": "function call {index} has no name",
    "non_object_tool_input": "function call {index} had args that are not a JSON object",
    "orphan_partial_args": "partialArgs arrived with no function call open",
    "overlapping_function_call": "function call {index} opened while call {open} was still open",
    "unfinished_function_call": "function call {index} was still open at the {where}",
    "bad_json_path": "function call {index}: jsonPath {path} cannot be applied ({why})",
}

#: field of a template -> what it holds, as a regular expression (as `ERROR_FIELDS` of
#: `harness._exceptions`)
ERROR_FIELDS: Final[dict[str, str]] = {
    "candidate": r".+",
    "finish_reason": r".+",
    "what": r"(text|a function call|a part of kind .+|finishReason .+|a candidate .+)",
    "reason": r".+",
    "index": r"\d+",
    "open": r"\d+",
    "where": r"(finishReason|end of the stream)",
    "path": r".*",
    "why": r".+",
}


def _rebuild(code: str, fields: dict[str, Any]) -> StreamProtocolError:
    """One of this table's errors again, from `(code, fields)`: what unpickling calls."""
    return StreamProtocolError(code, provider=PROVIDER, **fields)


TABLE: Final = ErrorTable(PREFIX, ERROR_TABLE, ERROR_FIELDS, _rebuild)
register_error_table(PROVIDER, TABLE)
