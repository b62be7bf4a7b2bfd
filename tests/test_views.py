"""The adapter reads light views (`harness._views`) as it reads the SDK's event objects.

Replay without the SDK (`harness replay`, `coverage`, `faults`, `diff`) must give the
outcome replay through the SDK's objects gives, line for line: on every library
cassette, every fault variant of every good one, and lines the SDK builds leniently.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import LIBRARY, library_cassettes

from harness._cassette.codec import Cassette, write_cassette
from harness._providers.anthropic.construct import event_builder
from harness._replay.direct import failure_code, replay_outcome
from harness._views import EventView
from harness.faults import derive_variants

LIBRARY_FILES = [str(path) for path in library_cassettes()]

#: every attribute the adapter reads, by the part it reads it from
EVENT_FIELDS = ("type", "index")
PART_FIELDS = ("type", "text", "partial_json", "stop_reason", "id", "name", "input")


def _outcomes_agree(path: str | Path) -> None:
    ours = replay_outcome(path, sdk_objects=False)
    theirs = replay_outcome(path)
    assert ours.to_json_lines() == theirs.to_json_lines()
    if theirs.error is not None:
        assert ours.error is not None
        assert failure_code(ours.error) == failure_code(theirs.error)


@pytest.mark.parametrize("path", LIBRARY_FILES, ids=lambda p: str(Path(p).relative_to(LIBRARY)))
def test_every_library_cassette_replays_alike_through_views_and_sdk_objects(path: str) -> None:
    _outcomes_agree(path)


def _good() -> list[tuple[str, list[dict[str, Any]]]]:
    return [
        (str(Path(path).relative_to(LIBRARY)), list(Cassette(path).events()))
        for path in LIBRARY_FILES
        if replay_outcome(path).completed
    ]


VARIANTS = [
    pytest.param(variant.events, id=f"{name}:{variant.fault.name}")
    for name, events in _good()
    for variant in derive_variants(events)
]


@pytest.mark.parametrize("events", VARIANTS)
def test_every_fault_variant_replays_alike_through_views_and_sdk_objects(
    events: list[dict[str, Any]], tmp_path: Path
) -> None:
    path = tmp_path / "variant.jsonl"
    write_cassette(path, events)
    _outcomes_agree(path)


START = {"type": "message_start", "message": {"id": "m", "type": "message", "content": []}}
ODD_EVENTS = [
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta"}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": 5}},
    {"type": "content_block_delta", "index": 1.0, "delta": {"type": "text_delta", "text": "a"}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "weird", "text": "a"}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta"}},
    {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "input_json_delta", "partial_json": None},
    },
    {"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use"}},
    {
        "type": "content_block_start",
        "index": 2,
        "content_block": {"type": "tool_use", "id": None, "name": 3, "input": [1]},
    },
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": 7}},
    {"type": "content_block_start", "index": 0, "content_block": {"type": "foo", "text": "hi"}},
    {"type": "message_delta", "delta": {}},
    {"type": "message_delta", "delta": {"stop_reason": 5}},
    {"type": "message_delta", "delta": {"stop_reason": "weird", "extra": True}},
    {"type": "message_stop"},
    {"type": "content_block_stop", "index": 0},
]


@pytest.mark.parametrize("data", ODD_EVENTS, ids=lambda data: str(data)[:60])
def test_a_view_reads_what_the_sdk_object_holds(data: dict[str, Any]) -> None:
    built, view = event_builder()(data), EventView(data)
    for name in EVENT_FIELDS:
        assert getattr(view, name, None) == getattr(built, name, None), name
        assert type(getattr(view, name, None)) is type(getattr(built, name, None)), name
    for part in ("delta", "content_block"):
        if part not in data:
            continue
        for name in PART_FIELDS:
            theirs = getattr(getattr(built, part), name, None)
            assert getattr(getattr(view, part), name) == theirs, f"{part}.{name}"


@pytest.mark.parametrize("data", ODD_EVENTS, ids=lambda data: str(data)[:60])
def test_odd_lines_replay_alike_through_views_and_sdk_objects(
    data: dict[str, Any], tmp_path: Path
) -> None:
    path = tmp_path / "odd.jsonl"
    stop = [{"type": "message_delta", "delta": {"stop_reason": "end_turn"}}]
    write_cassette(path, [START, data, *stop, {"type": "message_stop"}])
    _outcomes_agree(path)


def test_http_error_without_an_error_type_is_named_as_the_sdk_names_it(tmp_path: Path) -> None:
    path = tmp_path / "http_error.jsonl"
    write_cassette(path, [{"harness": "http_error", "status": 529, "body": {"detail": "busy"}}])
    _outcomes_agree(path)
    line = replay_outcome(path, sdk_objects=False).to_json_lines()[-1]
    assert line["error_type"] == "OverloadedError"  # the SDK's class for a 529


NO_SDK = """\
import sys
from click.testing import CliRunner
from harness_cli.main import cli
for arguments in {commands!r}:
    CliRunner().invoke(cli, arguments)
print(sorted(name for name in ("anthropic", "pydantic", "httpx2") if name in sys.modules))
"""


@pytest.mark.slow
def test_commands_that_hand_no_sdk_object_on_never_import_the_sdk(tmp_path: Path) -> None:
    library = str(LIBRARY)
    good, broken = str(LIBRARY / "interleaved.jsonl"), str(LIBRARY / "errors")
    commands = [
        ["replay", good],
        ["replay", "--format", "json", broken],
        ["replay", "--trace", good],
        ["coverage", library],
        ["diff", good, str(LIBRARY / "two_tools.jsonl")],
        ["diff", "--trace", good, str(LIBRARY / "two_tools.jsonl")],
        ["replay", "--trace", "--format", "json", broken],
        ["faults", good, "--out", str(tmp_path / "broken")],
        ["view", good, "--out", str(tmp_path / "page.html")],
        ["view", good, str(LIBRARY / "two_tools.jsonl"), "--out", str(tmp_path / "diff.html")],
        ["view", str(LIBRARY / "sessions" / "read-notes"), "--out", str(tmp_path / "s.html")],
        ["view", broken, "--out", str(tmp_path / "run.html")],
    ]
    code = NO_SDK.format(commands=commands)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
