"""Shared test configuration: the project's paths, and `pytester` for the plugin's tests."""

import os
from pathlib import Path
from typing import Any

# pytester runs in-process and unloads every module first imported during an inner run;
# loading what the plugin imports lazily now keeps one copy of each class across runs
# (and saves re-importing the SDK and hypothesis, ~3 s, in every run).
import anthropic  # noqa: F401
import hypothesis

import harness._replay.direct
import harness._strict.client
import harness._strict.report
import harness._testing.fault_runs
import harness._testing.trace
import harness.faults
import harness.snapshot  # noqa: F401

pytest_plugins = ["pytester"]

# CI (`CI=true`, as .ci/run is called) replays the same generated examples every run, so
# a landing never hangs on a new draw; a developer's run draws new ones each time.
hypothesis.settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI"):
    hypothesis.settings.load_profile("ci")

ROOT = Path(__file__).resolve().parent.parent
#: the cassette library: happy paths at the top, one cassette per error code in errors/
LIBRARY = ROOT / "cassettes"
#: the recorded agent sessions
SESSIONS = LIBRARY / "sessions"
EXAMPLES = ROOT / "examples"
LENIENT_EXAMPLE = EXAMPLES / "lenient_adapter"


def sdk_message(events: list[dict[str, Any]]) -> dict[str, Any]:
    """What the SDK's own `messages.stream()` accumulator makes of a stream's events: the
    reference a cassette's fold, an import or a client is checked against."""
    from anthropic._models import construct_type
    from anthropic.lib.streaming._messages import accumulate_event
    from anthropic.types import RawMessageStreamEvent

    snapshot = None
    buffers: dict[int, bytes] = {}
    for event in events:
        if event["type"] == "ping":
            continue
        built = construct_type(type_=RawMessageStreamEvent, value=event)
        snapshot = accumulate_event(
            event=built,  # type: ignore[arg-type]
            current_snapshot=snapshot,
            json_bufs=buffers,
        )
    assert snapshot is not None
    dumped: dict[str, Any] = snapshot.model_dump(mode="json")
    return dumped
