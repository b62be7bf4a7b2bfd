"""The public API called as a user may miscall it: one clear error at the call, naming
what was given and what is taken, never Python's own error from deep inside (or a wrong
answer taken quietly)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from conftest import LIBRARY

from harness import (
    Cassette,
    DoneEvent,
    InputError,
    TextEvent,
    UnknownFaultError,
    acollect,
    ato_model_events,
    cassette_client,
    collect,
    failure_code,
    failure_to_json,
    replay_outcome,
    to_model_events,
)
from harness.faults import PROVIDERS, catalogue, fault_named, stream_lines

TEXT_ONLY = LIBRARY / "text_only.jsonl"


def _of(path: Path) -> object:
    """The provider a cassette's header names (Anthropic's when it names none)."""
    return (Cassette(path).header or {}).get("provider", "anthropic")


@pytest.mark.parametrize(
    ("given", "says"),
    [
        (3, "to_model_events takes an iterable of the SDK's raw stream events"),
        ({"type": "message_start"}, "(what Anthropic().messages.create(..., stream=True)"),
    ],
    ids=["int", "one-event"],
)
def test_to_model_events_refuses_what_is_no_stream_at_the_call(given: Any, says: str) -> None:
    with pytest.raises(TypeError) as raised:
        to_model_events(given)  # not iterated: told at the call
    assert says in str(raised.value)
    assert str(raised.value).endswith(f"not {type(given).__name__}")


def test_ato_model_events_refuses_a_sync_stream_at_the_call() -> None:
    with pytest.raises(TypeError, match=r"takes an async iterable .* not list$"):
        ato_model_events([{"type": "message_start"}])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("given", "says"),
    [
        (None, "collect takes an iterable of internal events (to_model_events' or "
               "replay_events'), not NoneType"),
        ([None], "collect takes internal events (TextEvent, ToolCallEvent, DoneEvent), "
                 "and event 1 is NoneType"),
        ([TextEvent("Hi"), {"type": "text"}], "and event 2 is dict"),
    ],
    ids=["none", "none-in-list", "dict-after-an-event"],
)  # fmt: skip
def test_collect_refuses_what_is_no_internal_event(given: Any, says: str) -> None:
    with pytest.raises(TypeError) as raised:
        collect(given)
    assert str(raised.value).endswith(says)


def test_acollect_refuses_a_sync_stream_and_what_is_no_internal_event() -> None:
    async def stream(*events: Any) -> Any:
        for event in events:
            yield event

    with pytest.raises(TypeError, match=r"acollect takes an async iterable .* not list$"):
        asyncio.run(acollect([DoneEvent()]))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"and event 2 is int$"):
        asyncio.run(acollect(stream(TextEvent("Hi"), 3)))


def test_collect_takes_internal_events_as_before() -> None:
    outcome = replay_outcome(TEXT_ONLY, sdk_objects=False)
    assert collect(iter(outcome.events)).events == outcome.events


@pytest.mark.parametrize("function", [failure_code, failure_to_json])
def test_the_failure_names_refuse_what_is_no_exception(function: Any) -> None:
    with pytest.raises(TypeError) as raised:
        function(3)
    assert str(raised.value) == (
        f"{function.__name__} takes the exception a stream ended with (an Outcome's error), not int"
    )


def test_failure_code_of_no_error_is_none_and_failure_to_json_refuses_it() -> None:
    assert failure_code(None) is None  # an outcome's error, when the stream completed
    with pytest.raises(TypeError, match=r"not NoneType$"):
        failure_to_json(None)  # type: ignore[arg-type]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_fault_derives_from_a_tuple_or_a_generator_as_from_a_list(provider: str) -> None:
    good = next(path for path in sorted(LIBRARY.rglob("*.jsonl")) if _of(path) == provider)
    lines = stream_lines(good)
    for fault in catalogue(provider):
        expected = fault.derive(lines)
        assert fault.derive(tuple(lines)) == expected, fault.name
        assert fault.derive(line for line in lines) == expected, fault.name


def test_a_fault_refuses_what_is_no_iterable_of_dicts_as_derive_variants_does() -> None:
    with pytest.raises(ValueError, match=r"^events must be an iterable of dicts, not int$"):
        fault_named("drop_message_stop").derive(3)
    with pytest.raises(ValueError, match=r"^event 1 is not a dict but NoneType$"):
        fault_named("drop_message_stop").derive((None,))


@pytest.mark.parametrize(
    ("options", "where", "row"),
    [
        ({}, "anthropic's catalogue", "drop_message_stop"),
        ({"provider": "gemini"}, "gemini's catalogue", "drop_finish_reason"),
        ({"host": "bedrock"}, "anthropic's catalogue on bedrock", "frame_prelude_crc"),
    ],
    ids=["anthropic", "gemini", "on-bedrock"],
)
def test_fault_named_of_no_row_names_the_rows(options: Any, where: str, row: str) -> None:
    with pytest.raises(UnknownFaultError) as raised:
        fault_named("nope", **options)
    said = str(raised.value)
    assert said.startswith(f"no fault 'nope' in {where}; its rows: drop_")
    assert row in said.split("; its rows: ")[1].split(", ")
    assert isinstance(raised.value, InputError) and isinstance(raised.value, KeyError)


def test_a_keyword_no_client_takes_is_the_sdks_own_type_error_naming_it() -> None:
    """Decided: passed through, not rewrapped, since the SDK's message names the keyword
    and the class it went to (docs/clients.md)."""
    with pytest.raises(TypeError, match=r"^Anthropic\.__init__\(\) got an unexpected .*'bogus'"):
        cassette_client(TEXT_ONLY, bogus=3)
