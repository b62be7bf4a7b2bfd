"""A trace read for drawing: each row's cells, the lanes, the text as it is assembled.

The rows are the trace's (`harness._testing.trace.trace`, the adapter itself fed line by
line), so nothing here decides what a stream means; `Drawing` only keeps, beside them,
what a reader looks for on a page:
- the arrival offset of each event, from the `at` line before it (a recording writes
  one before every event; the `at` line is no row of its own, it is the next row's
  time), else none: rows stand in order;
- the text as it is assembled, from the `text` events the rows emit;
- a lane for each tool block (Anthropic's content block index, Chat's call index,
  Responses' output item): it opens where its index enters the trace's open set, takes
  the pieces of JSON its provider's `tracing.arguments` reads at its index, and closes
  where its index leaves the set, with the `tool_call` emitted there (its JSON parsed),
  or the error that fired there;
- the row where a rule fired, its code and message.
A row holds at most a few hundred characters, however long the cassette's text: its
cells are cut (`CELL`), the text and JSON so far shown as their last `SO_FAR`
characters, the assembled text kept up to `TEXT_KEPT` characters, a lane's JSON up to
`LANE_KEPT`, and `LANES_KEPT` lanes in all; past the trace's `OPEN_LISTED` open blocks
the open set is the first ones opened (a lane revealed by an earlier one's close is
marked as joined late). So memory and page size are bounded whatever the stream holds.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final

from harness._events import event_to_json
from harness._providers import provider
from harness._replay.direct import failure_code, failure_to_json
from harness._terminal import json_text
from harness._testing.trace import DIRECTIVE, END, TraceRow, event_parts, open_set

__all__ = [
    "CELL",
    "Drawing",
    "Drawn",
    "Growth",
    "Lane",
]

#: Characters of an excerpt, an emitted text or a tool call's input in a row's cell.
CELL: Final = 160
#: Characters of the text (or a lane's JSON) so far shown before a row's new piece.
SO_FAR: Final = 60
#: Characters of a failure's message a row shows.
MESSAGE: Final = 1000
#: Pieces a row shows growing (a Chat chunk may carry a piece of every call).
GROWTHS: Final = 4
#: Characters of the assembled text the page holds, and how many of its pieces are
#: marked as pieces (the rest is plain text).
TEXT_KEPT: Final = 40_000
PIECES_MARKED: Final = 1_500
#: Characters of a lane's JSON the page holds, pieces of it marked, lanes kept.
LANE_KEPT: Final = 4_000
LANE_PIECES: Final = 200
LANES_KEPT: Final = 48


@dataclass(slots=True)
class Growth:
    """One piece a row adds, to the text or to a lane's JSON: what came before it (its
    last `SO_FAR` characters), the piece, and at a lane's close its parsed input."""

    label: str
    before: str
    piece: str
    parsed: str | None = None


@dataclass(slots=True)
class Drawn:
    """A row as the page draws it: every cell as plain text, cut to size.

    `kind` is `event`, `passed` (a line no adapter was fed: a `ping`), `directive` or
    `end`; `failure` the code and message of a rule that fired (or the API's error, a
    dropped connection); `added` how many characters of text or JSON the row added;
    `key` what a run of similar rows shares (None: never folded: the rows where a lane
    opens or closes, a call or `done` is emitted, a rule fires)."""

    number: int | None
    at: float | None
    open: str
    head: str
    excerpt: str | None
    kind: str
    growth: list[Growth] = field(default_factory=list)
    more_growth: int = 0
    emits: list[tuple[str, str]] = field(default_factory=list)
    failure: tuple[str, str] | None = None
    added: int = 0
    key: tuple[Any, ...] | None = None


@dataclass(slots=True)
class Lane:
    """A tool block (call, output item) from its opening to its close: its JSON, piece by
    piece (the first `LANE_KEPT` characters), and what its close gave."""

    index: int
    label: str
    opened: int | None
    head: str
    late: bool = False
    pieces: list[str] = field(default_factory=list)
    kept: int = 0
    size: int = 0
    count: int = 0
    tail: str = ""
    closed: str | None = None
    call: dict[str, Any] | None = None
    failure: str | None = None

    def add(self, piece: str) -> str:
        """Take a piece; return what came before it (its last `SO_FAR` characters)."""
        before = self.tail
        self.count += 1
        self.size += len(piece)
        self.tail = (before + piece)[-SO_FAR:]
        if self.kept < LANE_KEPT and len(self.pieces) < LANE_PIECES:
            kept = piece[: LANE_KEPT - self.kept]
            self.pieces.append(kept)
            self.kept += len(kept)
        return before


def _cut(text: str, width: int = CELL) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _line(number: int | None) -> str:
    return "end" if number is None else str(number)


class Drawing:
    """Rows of a trace turned into `Drawn` rows, lazily (`rows`), with what the page shows
    beside them filled in as they go: `lanes`, `text`, `outcome`, `lines`, `timed`."""

    def __init__(self, provider_name: str) -> None:
        self.provider = provider_name
        tracing = provider(provider_name).module("tracing")
        self._arguments = tracing.arguments
        #: what a lane is, in the provider's own words (its tracing's `LANES`)
        lanes: tuple[str, str] = getattr(tracing, "LANES", ("lane", "lane"))
        self._noun, self.lane_title = lanes
        #: lanes open now, by index; lanes closed, in closing order (`LANES_KEPT` at most)
        self._active: dict[int, Lane] = {}
        self.lanes: list[Lane] = []
        self.lanes_more = 0
        #: the text assembled: its first pieces (`PIECES_MARKED`), the rest as plain text,
        #: `TEXT_KEPT` characters in all; its whole size and how many pieces made it
        self.text_pieces: list[tuple[int | None, str]] = []
        self.text_rest: list[str] = []
        self.text_size = 0
        self.text_count = 0
        self._text_tail = ""
        self._text_kept = 0
        #: the outcome (`done` or the failure's code), the failing row's line, counts
        self.outcome: str | None = None
        self.failed_at: str | None = None
        self.lines = 0
        self.events = 0
        self.timed = False
        self.last_at: float | None = None
        self._pending_at: float | None = None
        self._truncated = False

    def rows(self, trace_rows: Iterable[TraceRow]) -> Iterator[Drawn]:
        """The drawn rows of `trace_rows`, one a row but the `at` lines (the next row's
        time); the lanes still open at the end are kept with the rest."""
        for row in trace_rows:
            drawn = self.draw(row)
            if drawn is not None:
                yield drawn
        for lane in self._active.values():
            self._keep(lane)
        self._active.clear()

    def draw(self, row: TraceRow) -> Drawn | None:
        """The drawn row of one trace row (None for an `at` line: the next row's time);
        the rows must come in the trace's order."""
        data = row.data or {}
        if row.number is not None:
            self.lines += 1
        if row.event == DIRECTIVE and data.get("harness") == "at" and row.error is None:
            ms = data.get("ms")
            if isinstance(ms, int | float) and not isinstance(ms, bool):
                self._pending_at = float(ms)
                self.timed = True
                self.last_at = float(ms)
            return None
        at, self._pending_at = self._pending_at, None
        head, excerpt = event_parts(row)
        kind = "end" if row.event == END else "directive" if row.event == DIRECTIVE else "event"
        if kind == "event" and not row.fed and row.error is None:
            kind = "passed"
        if kind in ("event", "passed"):
            self.events += 1
        drawn = Drawn(
            number=row.number,
            at=at,
            open=open_set(row),
            head=_cut(head),
            excerpt=None if excerpt is None else _cut(excerpt),
            kind=kind,
        )
        opened = self._open(row)
        for index, piece in self._arguments(data) if row.fed and kind == "event" else []:
            lane = self._active.get(index)
            if lane is not None:
                before = lane.add(piece)
                drawn.added += len(piece)
                self._grow(drawn, Growth(lane.label, before, _cut(piece)))
        closing = [lane for index, lane in self._active.items() if index not in row.open]
        for lane in closing:
            del self._active[lane.index]
            lane.closed = _line(row.number)
        self._emitted(row, drawn, closing)
        if row.error is not None:
            self._failed(row, drawn, closing)
        elif row.event == END:
            self.outcome = "done"
        for lane in closing:
            self._keep(lane)
        self._truncated = row.open_count > len(row.open)
        changes = opened or closing or drawn.failure or kind in ("end", "directive")
        if not changes and all(emit == "text" for emit, _ in drawn.emits):
            labels = tuple(growth.label for growth in drawn.growth)
            emits = tuple(emit for emit, _ in drawn.emits)
            drawn.key = (kind, row.event, row.index, row.open, row.open_count, emits, labels)
        return drawn

    def _open(self, row: TraceRow) -> list[Lane]:
        """The lanes whose index entered the open set at this row."""
        opened = []
        for index in row.open:
            if index in self._active:
                continue
            head, _ = event_parts(row)
            late = self._truncated and row.index != index
            lane = Lane(
                index,
                f"{self._noun} {index}",
                row.number,
                _cut(head) if not late else f"(opened before line {_line(row.number)})",
                late=late,
            )
            self._active[index] = lane
            opened.append(lane)
        return opened

    def _grow(self, drawn: Drawn, growth: Growth) -> None:
        if len(drawn.growth) < GROWTHS:
            drawn.growth.append(growth)
        else:
            drawn.more_growth += 1

    def _emitted(self, row: TraceRow, drawn: Drawn, closing: list[Lane]) -> None:
        """The row's emits as cells; its text added to the text, its calls to the lanes
        that closed here (the one whose head names the call's id, else in opening order)."""
        waiting = sorted(closing, key=lambda lane: (lane.opened or 0, lane.index))
        for event in row.emits:
            shown = event_to_json(event)
            kind = str(shown["type"])
            if kind == "text":
                text = str(shown["text"])
                drawn.emits.append((kind, _cut(json_text(text))))
                drawn.added += len(text)
                before = self._add_text(row.number, text)
                self._grow(drawn, Growth("text", before, _cut(text)))
            elif kind == "tool_call":
                call = shown["call"]
                drawn.emits.append((kind, _cut(f"{call['name']} {call['id']}")))
                lane = next((lane for lane in waiting if str(call["id"]) in lane.head), None)
                lane = lane or (waiting[0] if waiting else None)
                parsed = _cut(json_text(call["input"]))
                if lane is not None:
                    waiting.remove(lane)
                    lane.call = call
                    self._grow(drawn, Growth(lane.label, "", "", parsed))
                else:
                    self._grow(drawn, Growth("call", "", "", parsed))
            else:
                drawn.emits.append((kind, kind))

    def _add_text(self, number: int | None, text: str) -> str:
        before = self._text_tail
        self._text_tail = (before + text)[-SO_FAR:]
        self.text_size += len(text)
        self.text_count += 1
        if self._text_kept < TEXT_KEPT:
            kept = text[: TEXT_KEPT - self._text_kept]
            self._text_kept += len(kept)
            if len(self.text_pieces) < PIECES_MARKED:
                self.text_pieces.append((number, kept))
            else:  # the rest as one plain run: the page holds a bounded count of elements
                self.text_rest.append(kept)
        return before

    def _failed(self, row: TraceRow, drawn: Drawn, closing: list[Lane]) -> None:
        assert row.error is not None
        code = str(failure_code(row.error))
        message = str(failure_to_json(row.error).get("message", ""))
        drawn.failure = (code, _cut(message, MESSAGE))
        self.outcome = code
        self.failed_at = _line(row.number)
        for lane in [*closing, *self._active.values()]:
            if row.index is None or lane.index == row.index:  # a stream-wide rule: every lane
                lane.failure = code

    def _keep(self, lane: Lane) -> None:
        if len(self.lanes) < LANES_KEPT:
            self.lanes.append(lane)
        else:
            self.lanes_more += 1
