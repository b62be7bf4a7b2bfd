"""docs/reliability.md states limits and test budgets as figures: each is the code's own."""

from __future__ import annotations

import pytest
import test_fuzz_cli
from conftest import ROOT
from fake_api import BEHAVIOURS

from harness._cassette.codec import MAX_LINE_BYTES, SPOOL_MEMORY
from harness._cassette.directives import MAX_AT_MS
from harness._json import MAX_NESTING
from harness._record.live import DEFAULT_MAX_DURATION, DEFAULT_TIMEOUT

DOC = (ROOT / "docs" / "reliability.md").read_text()
FUZZ = test_fuzz_cli.EXAMPLES
FUZZ_COMMANDS = len(test_fuzz_cli.COMMANDS)


@pytest.mark.parametrize(
    "figure",
    [
        f"at most {MAX_LINE_BYTES} bytes ({MAX_LINE_BYTES // 2**20} MiB)",
        f"line longer than {MAX_LINE_BYTES} bytes, the limit",
        f"nest at most {MAX_NESTING} levels",
        f"0..{MAX_AT_MS} (a day)",
        f"in memory up to {SPOOL_MEMORY // 2**20} MiB",
        f"`--timeout` (default {DEFAULT_TIMEOUT:g} s)",
        f"`--max-duration` (default {DEFAULT_MAX_DURATION:g} s)",
        f"{FUZZ} generated cassettes, {FUZZ_COMMANDS} command lines each: "
        f"{FUZZ * FUZZ_COMMANDS} runs",
        f"{len(BEHAVIOURS) - 1} behaviours",
    ],
)
def test_the_reliability_page_states_the_codes_figures(figure: str) -> None:
    assert figure in DOC


def test_every_hostile_server_behaviour_is_listed() -> None:
    listed = [name for name in BEHAVIOURS if name != "stream"]
    assert ", ".join(f"`{name}`" for name in listed) in DOC
