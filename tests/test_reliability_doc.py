"""docs/reliability.md states limits and test budgets as figures: each is the code's own."""

from __future__ import annotations

import pytest
import test_fuzz_cli
import test_record_memory
import test_serve_burst
import test_trace
from conftest import ROOT
from fake_api import BEHAVIOURS
from test_proxy_bounds import BOMB_BYTES, COMPRESS
from test_serve_hardening import ANSWERS_WITH_STDOUT_FULL, BAD_REQUESTS
from test_strict_bounds import FLOOD, PINGS

from harness._cassette.codec import MAX_BODY_BYTES, MAX_LINE_BYTES, SPOOL_MEMORY
from harness._directives import MAX_AT_MS
from harness._http.bounds import DESCRIPTORS, LOG_BACKLOG, LOOP_ERROR_EVERY
from harness._http.hosting import (
    MAX_BODY,
    MAX_FIELD_BYTES,
    MAX_HEADERS,
)
from harness._http.proxy import DEFAULT_UPSTREAM_TIMEOUT
from harness._http.server import KEPT_REQUEST_BYTES, KEPT_REQUESTS
from harness._inflate import CHUNK
from harness._json import MAX_NESTING, MAX_VALUES, VALUE_BYTES
from harness._providers.jsonarray import MAX_ELEMENT, STEP
from harness._record.live import DEFAULT_MAX_DURATION, DEFAULT_TIMEOUT
from harness._redact import MIN_SECRET_LENGTH
from harness._replay.plan import DEFAULT_READ_TIMEOUT
from harness._strict.guard import WITHHELD_LINES
from harness._testing.bounded import MAX_OUTPUT_BYTES, MAX_OUTPUT_LINE_BYTES, MAX_STDERR_BYTES
from harness._testing.conform import DEFAULT_TIMEOUT_S as CONFORM_TIMEOUT
from harness._testing.trace import OPEN_LISTED, OPEN_WIDTH, WIDTH
from harness.faults import STALL_MS
from harness_cli.replay import DEFAULT_TIMEOUT as REPLAY_TIMEOUT

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
        # serve and proxy (promise 10)
        f"request line over {MAX_FIELD_BYTES} bytes",
        f"431 for a header line over {MAX_FIELD_BYTES} bytes or more than\n"
        f"      {MAX_HEADERS} headers",
        f"A body over {MAX_BODY} bytes ({MAX_BODY // 2**20} MiB, the API's own limit)",
        f"a body nested deeper than {MAX_NESTING} levels a 400",
        f"holds at most {LOG_BACKLOG} lines waiting",
        f"at most\n      {MAX_BODY_BYTES} bytes ({MAX_BODY_BYTES // 2**20} MiB, import's cap)",
        f"a line over {MAX_LINE_BYTES} bytes,",
        f"declaring more than\n      {MAX_LINE_BYTES} bytes is refused",
        f"Gemini's streamed JSON array longer than {MAX_ELEMENT} bytes at the byte past that",
        f"number more than {MAX_VALUES} is never\n      parsed",
        f"(default {DEFAULT_UPSTREAM_TIMEOUT:g} s) bounds upstream's connect and silence",
        # record and serve (issue 37)
        f"Values shorter than {MIN_SECRET_LENGTH} characters are not masked",
        "requires a peak below a quarter of that",
        f"records {test_record_memory.MIB} MiB in-process",
        f"keeps {KEPT_REQUESTS} requests, {KEPT_REQUEST_BYTES} bytes of their bodies",
        f"the latest {KEPT_REQUESTS}, the oldest dropped first",
        f"hold more than {KEPT_REQUEST_BYTES} bytes ({KEPT_REQUEST_BYTES // 2**20} MiB)",
        f"Each body is at most {MAX_BODY} bytes",
        f"up to {DESCRIPTORS}",
        f"one log line at most every {LOOP_ERROR_EVERY:g} s",
        f"opens {test_serve_burst.BURST} connections against a limit\n"
        f"  of {test_serve_burst.LIMIT}",
        # fault rows (promise 11)
        f"the `stall` row is {STALL_MS} ms of silence",
        f"read timeout ({DEFAULT_READ_TIMEOUT:g} s) and than `harness replay --timeout` "
        f"(default {REPLAY_TIMEOUT:g} s)",
        f"{len(BAD_REQUESTS)} bad requests against each of `serve` and `proxy`; "
        f"{ANSWERS_WITH_STDOUT_FULL} streamed answers",
        f"{len(COMPRESS)} codecs, bombs of {BOMB_BYTES // 2**20} MiB",
        # the guard
        f"at most {MAX_LINE_BYTES} bytes (8 MiB, the cassette line\n  limit)",
        f"`after event 1: a line\n  longer than {MAX_LINE_BYTES} bytes`",
        f"a\n  frame whose prelude declares more than {MAX_LINE_BYTES} bytes",
        f"may hold more than {MAX_VALUES} JSON values, its commas",
        f"refused at the byte past {MAX_ELEMENT}",
        f"(`element 1 is longer than {MAX_ELEMENT} bytes`)",
        f"{STEP} at most between two counts",
        f"(`element 2 may hold more than {MAX_VALUES} JSON values, the limit`)",
        f"about {VALUE_BYTES} bytes for each of at most\n{MAX_VALUES} values",
        f"a chunk at a time (about {CHUNK} bytes, {CHUNK // 2**20} MiB;",
        f"held up to {WITHHELD_LINES * MAX_LINE_BYTES} bytes "
        f"({WITHHELD_LINES * MAX_LINE_BYTES // 2**20} MiB, twice the line limit)",
        f"a gzip bomb of {FLOOD // 2**20} MiB",
        f"expanding to {FLOOD // 2**20} MiB",
        f"{PINGS} pings",
        # conform
        f"within `--timeout` (default {CONFORM_TIMEOUT:g} s)",
        f"at most {MAX_OUTPUT_BYTES} bytes ({MAX_OUTPUT_BYTES // 2**20} MiB) a\n  case",
        f"a line at most {MAX_OUTPUT_LINE_BYTES} bytes ({MAX_OUTPUT_LINE_BYTES // 2**20} MiB,",
        f"at most {MAX_STDERR_BYTES} bytes ({MAX_STDERR_BYTES // 2**20} MiB) a case",
        f"`got the output went past {MAX_OUTPUT_BYTES} bytes, the\n  limit`",
        f"`timed out after {CONFORM_TIMEOUT:g} s: the command exited",
        # the trace
        f"open tool\n  blocks in at most {OPEN_WIDTH} characters",
        f"stays within {WIDTH} columns",
        f"A JSON row lists at most {OPEN_LISTED} open blocks",
        f"A stream that\n  opens {test_trace.MANY_OPEN_BLOCKS} tool blocks",
        f"one line of at most {WIDTH} columns a\n  row",
        f"measured: {2 * test_trace.MANY_OPEN_BLOCKS + 5} lines",
    ],
)
def test_the_reliability_page_states_the_codes_figures(figure: str) -> None:
    assert figure in DOC


def test_the_figures_hold_together() -> None:
    """The stall outlasts every read timeout replay gives; a bomb passes every cap."""
    assert STALL_MS / 1000 > DEFAULT_READ_TIMEOUT > REPLAY_TIMEOUT
    assert BOMB_BYTES > MAX_BODY_BYTES > MAX_LINE_BYTES


def test_every_hostile_server_behaviour_is_listed() -> None:
    listed = [name for name in BEHAVIOURS if name != "stream"]
    assert ", ".join(f"`{name}`" for name in listed) in DOC
