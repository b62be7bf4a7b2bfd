"""One `StreamProtocolError` for every provider: Anthropic's errors exactly as before, a
provider's own table, prefix and pickling (harness/_exceptions.py's docstring)."""

from __future__ import annotations

import pickle
import re

import pytest

from harness._exceptions import (
    ERROR_TABLES,
    PROTOCOL_ERROR_PREFIX,
    ErrorTable,
    StreamProtocolError,
    _rebuild_protocol_error,
    error_pattern,
    register_error_table,
)


def test_an_anthropic_error_is_what_it_was() -> None:
    error = StreamProtocolError("orphan_json_delta", index=3)
    assert (error.code, error.fields, error.provider) == (
        "orphan_json_delta",
        {"index": 3},
        "anthropic",
    )
    assert error.detail == "input_json_delta arrived without an open tool_use block at index 3"
    assert str(error) == PROTOCOL_ERROR_PREFIX + error.detail
    assert error.__reduce__() == (_rebuild_protocol_error, ("orphan_json_delta", {"index": 3}))
    assert str(pickle.loads(pickle.dumps(error))) == str(error)
    assert error_pattern("orphan_json_delta") == error_pattern(
        "orphan_json_delta", provider="anthropic"
    )


@pytest.mark.parametrize(
    ("provider", "code", "fields"),
    [
        ("openai-chat", "missing_done", {}),
        ("openai-chat", "orphan_arguments_delta", {"index": 2}),
        (
            "openai-responses",
            "sequence_gap",
            {"event_type": "response.created", "got": "3", "expected": 0},
        ),
    ],
)
def test_a_provider_error_reads_its_own_table_and_pickles_with_it(
    provider: str, code: str, fields: dict[str, object]
) -> None:
    import harness._providers.openai_chat.errors
    import harness._providers.openai_responses.errors  # noqa: F401

    error = StreamProtocolError(code, provider=provider, **fields)
    assert str(error).startswith("OpenAI stream protocol error: ")
    assert re.match(error_pattern(code, provider=provider), str(error))
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.provider, copy.code, copy.fields, str(copy)) == (
        provider,
        code,
        fields,
        str(error),
    )


def test_unpickling_a_provider_error_imports_its_table() -> None:
    """The rebuild function lives in the provider's module: a process that never imported
    it still rebuilds the error."""
    import subprocess
    import sys

    import harness._providers.openai_chat.errors  # noqa: F401

    data = pickle.dumps(StreamProtocolError("missing_done", provider="openai-chat"))
    script = "import pickle, sys; print(pickle.loads(sys.stdin.buffer.read()))"
    shown = subprocess.run(
        [sys.executable, "-c", script], input=data, capture_output=True, check=True
    ).stdout.decode()
    assert shown == "OpenAI stream protocol error: stream ended before data: [DONE]\n"


def test_a_table_must_give_every_field_a_pattern() -> None:
    table = ErrorTable(
        "X: ", {"c": "at {index}"}, {}, lambda code, fields: StreamProtocolError(code)
    )
    with pytest.raises(ValueError, match="no pattern for field"):
        register_error_table("broken", table)
    assert "broken" not in ERROR_TABLES
