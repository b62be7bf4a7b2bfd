"""Shared test configuration: `pytester` runs pytest inside pytest for the plugin's tests."""

# pytester runs in-process and unloads every module first imported during an inner run;
# loading what the plugin imports lazily now keeps one copy of each class across runs
# (and saves re-importing the SDK and hypothesis, ~3 s, in every run).
import anthropic  # noqa: F401
import hypothesis  # noqa: F401

import harness.fault_check
import harness.faults
import harness.replay
import harness.snapshot  # noqa: F401

pytest_plugins = ["pytester"]
