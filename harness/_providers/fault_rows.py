"""What every provider's fault catalogue is made of: the rows, and the rows no dialect decides.

`Fault` (one row: a name, the outcome it must replay to, a description, the function
deriving the broken variant from a good stream's lines) and `Variant` (one derived
stream and its expected outcome) are the same for every provider; each provider's
`faults` module (`harness._providers.<provider>.faults`) renders the rows of its own
dialect, and `harness.faults` is the public face of them all.

The wire rows are provider-neutral ideas, built here once: an HTTP error answer instead
of a stream, a 429 (retried after `retry-after-ms`) then the good stream, the connection
cut half-way through the middle event's bytes, and a stall longer than any read timeout
before it. A provider gives only what differs: its error answer (status, body shape,
headers), where its stream begins and ends (the middle lies strictly between), and how
many bytes an event takes on its wire.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from harness._directives import CUT, HTTP_ERROR, STALL

__all__ = [
    "DONE",
    "STALL_MS",
    "Events",
    "Fault",
    "Variant",
    "events_of",
    "http_error",
    "wire_rows",
    "without",
]

#: Raw events, and for the wire rows directive lines among them: one response's lines.
Events = list[dict[str, Any]]

#: The outcome of a stream that completes (a row the SDK's retries recover from).
DONE: Final = "done"
#: How long `stall` sends nothing: longer than any read timeout a test would set, and
#: than the SDK's own default (600 s), so a client timeout always fires first.
STALL_MS: Final = 601_000


def events_of(events: object) -> Events:
    """`events` read once into a list, each a dict (a line's JSON object), or a `ValueError`
    naming the first that is not: the rows read their fields, and crashed on anything else."""
    if not isinstance(events, Iterable) or isinstance(events, str | bytes | Mapping):
        raise ValueError(f"events must be an iterable of dicts, not {type(events).__name__}")
    stream = list(events)
    for number, event in enumerate(stream, 1):
        if not isinstance(event, dict):
            raise ValueError(f"event {number} is not a dict but {type(event).__name__}")
    return stream


@dataclass(frozen=True, slots=True)
class Fault:
    """One row of the catalogue: `derive(events)` is the broken variant, or None if
    inapplicable. `events` may be any iterable of dicts (a list, a tuple, a generator:
    read once, not modified), as `derive_variants` takes them; `ValueError` otherwise."""

    name: str
    expect: str
    description: str
    #: a row's function of `Events`, called with any iterable of dicts (`_Deriving`): typed
    #: loosely, since the row takes a list and its callers may pass any iterable
    derive: Callable[..., Events | None] = field(repr=False, compare=False)
    #: responses answered before the derived one (a session: `http_429_then_ok`)
    before: tuple[Events, ...] = field(default=(), repr=False, compare=False)
    #: True when the variant holds HTTP or connection directives: replay it through a client
    wire: bool = False
    #: True for a binary row (`frame_rows`): a stream served in event-stream frames alone
    framed: bool = False

    def __post_init__(self) -> None:
        rows = self.derive
        if isinstance(rows, _Deriving):
            return
        object.__setattr__(self, "derive", _Deriving(rows))


class _Deriving:
    """A row's derive function, taking any iterable of dicts (`events_of`) as a list."""

    __slots__ = ("__wrapped__",)

    def __init__(self, rows: Callable[[Events], Events | None]) -> None:
        self.__wrapped__ = rows

    def __call__(self, events: Iterable[dict[str, Any]]) -> Events | None:
        return self.__wrapped__(events_of(events))


@dataclass(frozen=True, slots=True)
class Variant:
    """A broken stream derived from a good one, and the outcome it must replay to."""

    fault: Fault
    expected_code: str
    events: Events

    @property
    def responses(self) -> list[Events]:
        """Every response of the variant, in the order a client is answered: one, or a session."""
        return [*self.fault.before, self.events]


def without(events: Events, positions: set[int]) -> Events:
    """A deep copy of `events` without the events at `positions`."""
    return [
        copy.deepcopy(event) for position, event in enumerate(events) if position not in positions
    ]


def http_error(status: int, body: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
    """An `http_error` directive: the API's error JSON with the given status and headers."""
    return {"harness": HTTP_ERROR, "status": status, "headers": headers, "body": body}


#: Where a stream begins and ends: the positions of its first and last lines, or None.
Span = Callable[[Events], tuple[int, int] | None]


def _middle(span: Span, events: Events) -> int | None:
    """The position of the middle-most line strictly between the stream's first and last."""
    ends = span(events)
    if ends is None or ends[1] - ends[0] < 2:
        return None
    return (ends[0] + 1 + ends[1]) // 2


def wire_rows(
    error_row: tuple[str, str, str, dict[str, Any]],
    rate_limit: dict[str, Any],
    span: Span,
    size: Callable[[dict[str, Any]], int],
) -> tuple[Fault, ...]:
    """The four wire rows of a provider: its HTTP error answer (`(name, expect,
    description, directive)`), its 429 then the good stream, the cut mid-event (after
    half of the middle event's `size` bytes) and the stall before the middle event."""
    name, expect, description, directive = error_row

    def answer_error(events: Events) -> Events | None:
        return [copy.deepcopy(directive)]

    def then_ok(events: Events) -> Events | None:
        return copy.deepcopy(events)

    def cut_mid_event(events: Events) -> Events | None:
        """The connection drops half-way through the middle event's bytes; nothing follows."""
        at = _middle(span, events)
        if at is None:
            return None
        kept = copy.deepcopy(events[: at + 1])
        return [*kept[:at], {"harness": CUT, "after_bytes": size(events[at]) // 2}, kept[at]]

    def stall(events: Events) -> Events | None:
        at = _middle(span, events)
        if at is None:
            return None
        broken = copy.deepcopy(events)
        broken.insert(at, {"harness": STALL, "ms": STALL_MS})
        return broken

    return (
        Fault(name, expect, description, answer_error, wire=True),
        Fault(
            "http_429_then_ok",
            DONE,
            "a session: an HTTP 429 with retry-after-ms 1, then the good stream; "
            "the SDK's own retry must recover",
            then_ok,
            before=([rate_limit],),
            wire=True,
        ),
        Fault(
            "cut_mid_event",
            "connection_error:RemoteProtocolError",
            "the connection drops half-way through the middle event's bytes",
            cut_mid_event,
            wire=True,
        ),
        Fault(
            "stall",
            "connection_error:ReadTimeout",
            f"no byte for {STALL_MS} ms before the middle event, longer than the client's timeout",
            stall,
            wire=True,
        ),
    )
