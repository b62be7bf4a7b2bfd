"""Shared test configuration: the project's paths, and `pytester` for the plugin's tests."""

import os
from pathlib import Path

# pytester runs in-process and unloads every module first imported during an inner run;
# loading what the plugin imports lazily now keeps one copy of each class across runs
# (and saves re-importing the SDK and hypothesis, ~3 s, in every run).
import anthropic  # noqa: F401
import hypothesis

import harness._fault_check
import harness._replay
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
