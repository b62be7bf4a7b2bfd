"""Every replay directive, defined once: its name, its fields, who acts on it, who passes over it.

A directive is a cassette line with a `"harness"` key, an instruction to whoever replays
the cassette, never a stream event. Every reader of cassettes imports its names from here
and accepts every directive it can meet: the ones it acts on, it carries out; the others
it passes over (or hands to its caller's `DirectiveHandler`, which passes over what it
does not know). The codec refuses a directive that is not listed here, so a typo in a
hand-written cassette is told at its line instead of passed over unnoticed.

The readers (`Directive.acted_on_by` names them):
- `direct`: direct replay, the SDK's event objects built from the lines
  (`harness._replay.direct`); it has no clock: a `stall` shorter than the read timeout
  changes nothing there, a longer one is the client's `ReadTimeout` at once;
- `wire`: byte-level replay, a response plan carried out by a transport or a server
  (`harness._replay.plan`: the cassette clients, `--via sdk`, `harness serve`);
- `realtime`: a pacer sleeping to the recorded offsets (`--realtime` of `replay`,
  `serve`, `agent`);
- `agent`: agent session replay (`harness.agent.session`).

`cassette.schema.json` checks the fields of the directives it names (its `directive`
definition); `tests/test_directives.py` holds the two to the same fields.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

__all__ = [
    "ABORT",
    "AT",
    "CUT",
    "DIRECTIVES",
    "DONE",
    "FRAME",
    "FRAME_FAULTS",
    "FRAME_INTEGERS",
    "FRAME_NAME_BYTES",
    "FRAME_STRING_BYTES",
    "HANG",
    "HTTP_ERROR",
    "MAX_AT_MS",
    "STALL",
    "Directive",
    "Reader",
    "directive_problem",
]

Reader = Literal["direct", "wire", "realtime", "agent"]
READERS: Final[tuple[Reader, ...]] = ("direct", "wire", "realtime", "agent")

#: `{"harness": "at", "ms": N}`: the next event arrived N ms after the request.
AT: Final = "at"
#: `{"harness": "http_error", "status": S, "headers": {...}, "body": {...}}`.
HTTP_ERROR: Final = "http_error"
#: `{"harness": "cut"}` or `{"harness": "cut", "after_bytes": N}`: the connection drops.
CUT: Final = "cut"
#: `{"harness": "stall", "ms": N}`: no byte for N ms before the next one.
STALL: Final = "stall"
#: `{"harness": "done"}`: no directive of the registry, but an openai-chat cassette's
#: `data: [DONE]` (the sentinel that ends a Chat Completions body is no JSON object): a
#: line of its stream, which the codec takes in that provider's cassettes alone.
DONE: Final = "done"
#: `{"harness": "frame", "fault": F}` or `{"harness": "frame", "headers": {...},
#: "payload": ...}`: a stream served in event-stream frames broken in its frames
#: (`harness._providers.frame_rows`); no line of a stream served as SSE.
FRAME: Final = "frame"
#: A `frame` line's `fault`s: what it does to the next event's frame.
FRAME_FAULTS: Final = ("prelude_crc", "message_crc", "cut_in_prelude", "cut_in_payload")
#: What a `frame` line's `headers` can be written as (the event-stream wire: a name's
#: length is one byte, a string's two, a whole number an int32 or an int64): the longest
#: name and string, in bytes of UTF-8, and the whole numbers.
FRAME_NAME_BYTES: Final = 255
FRAME_STRING_BYTES: Final = 65_535
FRAME_INTEGERS: Final = range(-(2**63), 2**63)
#: `{"harness": "abort"}`: the agent's abort signal is set here.
ABORT: Final = "abort"
#: `{"harness": "hang"}`: the stream waits, deaf to the signal, until cancelled.
HANG: Final = "hang"

#: The largest `at` offset a cassette may hold: a day, far beyond any recording's length.
MAX_AT_MS: Final = 86_400_000


@dataclass(frozen=True, slots=True)
class Directive:
    """One directive: its name, its fields (required, then optional), what it does, and
    which readers act on it (every other reader passes over it)."""

    name: str
    required: tuple[str, ...]
    optional: tuple[str, ...]
    effect: str
    acted_on_by: frozenset[Reader]

    @property
    def passed_over_by(self) -> frozenset[Reader]:
        return frozenset(READERS) - self.acted_on_by


def _registry(*directives: Directive) -> Mapping[str, Directive]:
    return {directive.name: directive for directive in directives}


#: Every directive, by name.
DIRECTIVES: Final[Mapping[str, Directive]] = _registry(
    Directive(
        AT,
        ("ms",),
        (),
        "the next event arrived `ms` milliseconds after the request (record and proxy "
        "write one before every event)",
        frozenset({"realtime"}),
    ),
    Directive(
        HTTP_ERROR,
        ("status", "body"),
        ("headers",),
        "the answer is this HTTP error instead of a stream; it stands before any event",
        frozenset({"direct", "wire", "agent"}),
    ),
    Directive(
        CUT,
        (),
        ("after_bytes",),
        "the connection drops here (after the first `after_bytes` bytes of the next event)",
        frozenset({"direct", "wire", "agent"}),
    ),
    Directive(
        STALL,
        ("ms",),
        (),
        "no byte for `ms` milliseconds before the next one (past the read timeout, the "
        "client's ReadTimeout)",
        frozenset({"direct", "wire"}),
    ),
    Directive(
        FRAME,
        (),
        ("fault", "headers", "payload"),
        "in a stream served in event-stream frames: the next event's frame broken "
        "(`fault`), or a frame of its own (`headers`, `payload`) sent here",
        frozenset({"direct", "wire", "agent"}),
    ),
    Directive(
        ABORT,
        (),
        (),
        "the agent's abort signal is set when replay reaches the line",
        frozenset({"agent"}),
    ),
    Directive(
        HANG,
        (),
        (),
        "the stream waits, deaf to the abort signal, until its task is cancelled",
        frozenset({"agent"}),
    ),
)


def directive_problem(data: Mapping[str, Any]) -> str | None:
    """Why a directive line cannot be used (unknown name, a field missing or out of range),
    or None. The schema has checked the types of the fields it names already."""
    name = data.get("harness")
    directive = DIRECTIVES.get(name) if isinstance(name, str) else None
    if directive is None:
        return f"unknown directive {name!r} (known: {', '.join(DIRECTIVES)})"
    if directive.name == AT:
        ms = data.get("ms")
        if isinstance(ms, bool) or not isinstance(ms, int | float) or not 0 <= ms <= MAX_AT_MS:
            return f"an at directive needs ms, a number of milliseconds from 0 to {MAX_AT_MS}"
    if directive.name == FRAME:
        if ("fault" in data) == ("headers" in data):
            return "a frame directive needs a fault or headers (one of them)"
        problem = _frame_headers_problem(data["headers"]) if "headers" in data else None
        if problem is not None:
            return problem
    missing = [field for field in directive.required if field not in data]
    if missing:
        return f"a {directive.name} directive needs {' and '.join(missing)}"
    return None


def _frame_headers_problem(headers: Any) -> str | None:
    """Why a `frame` line's `headers` (an object of strings, whole numbers and booleans:
    the schema says so) cannot be written in a frame: a name or a string too long, a
    number no header type holds; or None."""
    for name, value in headers.items():
        size = len(name.encode())
        if size > FRAME_NAME_BYTES:
            return (
                f"a frame header's name of {size} bytes (UTF-8): a frame holds names of "
                f"{FRAME_NAME_BYTES} at most"
            )
        shown = name if len(name) <= 40 else f"{name[:39]}…"
        if isinstance(value, str):
            size = len(value.encode())
            if size > FRAME_STRING_BYTES:
                return (
                    f"frame header {shown!r}: a string of {size} bytes (UTF-8), and a frame "
                    f"holds {FRAME_STRING_BYTES} at most"
                )
        elif not isinstance(value, bool) and (
            not isinstance(value, int) or value not in FRAME_INTEGERS
        ):
            return (
                f"frame header {shown!r}: {value!r} is no string, boolean or whole number a "
                "frame holds (a 64-bit integer)"
            )
    return None
