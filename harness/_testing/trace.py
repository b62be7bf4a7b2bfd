"""The trace of a stream: each cassette line, the tool blocks open after it, what it emitted.

This is the picture the adapter is explained with (docs/replay.md): an interleaved stream
`start(1) start(3) delta(3) delta(1) stop(1) stop(3)`, under each event the open tool
blocks `{1} {1,3} {1,3} {1,3} {3} {}`, under those the events emitted, `tool_call(1)`
`tool_call(3)` `done`. `trace(cassette)` draws it for any stream, so a failure explains
itself: the row where a rule fires carries the error, and the trace stops there.

The rows come from the one adapter, not a copy of its rules: each line goes through the
step direct replay takes (`harness._replay.direct.feed_reader`), what it gives is fed
to the adapter of the cassette's provider (its header's `provider`), and the row holds
what `feed` returned and the adapter's open tool blocks after it (Anthropic's content
blocks, Chat's calls by `index`, Responses' output items by `output_index`); the end row
holds what `finish` returned. Lines the adapter is fed nothing for (a `ping`, a directive)
are rows too, with the state unchanged. So the emits of a trace, concatenated, are the
internal events `harness replay` prints.

What differs by dialect is its provider's `tracing` module (`harness._providers.*.tracing`),
asked the same way for every provider: `machine(**options)` the adapter to feed, `open_items` its
open set, `describe` a line's event, index and text-form head (`start(1) tool_use read`,
`call(0) get_weather call_1`), `compared` what else of a line two traces must share.
Directives and the end row are named here, the same for every provider.

A row costs the same however many tool blocks are open, so a trace is linear in its
stream: it holds the open set in full up to `OPEN_LISTED` blocks, past that the first
`OPEN_LISTED` opened and the count (its provider's `open_items`); the
text form shows the set in `OPEN_WIDTH` characters at most, as its first few indexes and
how many more (`{0,1,2,…+99997}`). Side by side (`harness diff --trace`), two traces are
read a row of each at a time and each line is given as soon as its rows are read.

`trace_hint(path)` is the command that prints a case's trace, for every failure report
(the plugin's, `harness diff`'s, `harness conform`'s) to name. `harness view` draws the
same rows as a page (`harness._view`), naming them as the text form does (`event_parts`,
`open_set`) and pairing two traces as the side-by-side form does (`paired_rows`).
"""

from __future__ import annotations

import os
import shlex
import textwrap
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from itertools import zip_longest
from types import ModuleType
from typing import Any, Final

from harness._cassette.codec import (
    CassetteLine,
    CassetteSource,
    DirectiveHandler,
    pass_over,
    read_cassette,
)
from harness._events import ModelEvent, event_to_json
from harness._providers import provider
from harness._replay.direct import (
    SKIP,
    failure_code,
    failure_to_json,
    feed_reader,
    is_stream_failure,
)
from harness._replay.plan import DEFAULT_READ_TIMEOUT
from harness._terminal import json_text, printable

__all__ = [
    "END",
    "HEADER",
    "OPEN_LISTED",
    "OPEN_WIDTH",
    "SideBySide",
    "TraceRow",
    "event_parts",
    "format_row",
    "format_rows",
    "open_set",
    "paired_rows",
    "trace",
    "trace_hint",
]

#: The `event` of the last row, the end of the stream (`finish`).
END: Final = "end"
#: The `event` of a directive line's row.
DIRECTIVE: Final = "directive"
#: A row lists at most this many open tool blocks, the ones opened first; its
#: `open_count` says how many are open.
OPEN_LISTED: Final = 16
#: The text form's open set is at most this many characters: in full while it fits, else
#: its first indexes and how many more are open (`{0,1,2,…+99997}`).
OPEN_WIDTH: Final = 16

#: No excerpt: the event's head says it all.
_NOTHING: Final = object()
#: The text form's width: a row's first line fits an 80-column terminal.
WIDTH: Final = 80
#: Columns before the event: the line number (4), the open tool blocks (6), spaces.
_PREFIX: Final = 13
#: The event column's width on a row that emits something; the emits start after it.
_EVENT: Final = 20


@dataclass(frozen=True, slots=True, kw_only=True)
class TraceRow:
    """One row of a trace: a cassette line (or the end), the open tool blocks after it,
    the internal events it completed, and the error if a rule fired here (the last row).

    `number` is the cassette line (None on the end row); `event` the line's event as its
    provider names it, `"directive"` or `"end"`; `open` the open tool blocks' indexes,
    sorted (past `OPEN_LISTED` of them, the `OPEN_LISTED` opened first), `open_count` how
    many are open; `data` the line's object (None on the end row); `provider` the
    cassette's, whose `tracing` module names the row; `fed` is False on the row of a
    line the adapter was not fed (a `ping`, a directive that raised nothing).
    """

    number: int | None
    event: str
    index: int | None
    open: tuple[int, ...]
    open_count: int
    provider: str
    emits: tuple[ModelEvent, ...] = ()
    error: BaseException | None = None
    data: Mapping[str, Any] | None = None
    fed: bool = True

    def to_json(self) -> dict[str, Any]:
        """The row as `harness replay --trace --format json` prints it (docs/replay.md)."""
        row: dict[str, Any] = {
            "n": self.number,
            "event": self.event,
            "index": self.index,
            "open": list(self.open),
        }
        if self.open_count > len(self.open):
            row["open_count"] = self.open_count
        row["emits"] = [event_to_json(event) for event in self.emits]
        if self.error is not None:
            row["error"] = {
                "code": failure_code(self.error),
                "message": failure_to_json(self.error)["message"],
            }
        return row


@cache
def _tracing(name: str) -> ModuleType:
    """The `tracing` module of the provider `name`: how its rows are named."""
    return provider(name).module("tracing")


def trace(
    source: CassetteSource,
    on_directive: DirectiveHandler = pass_over,
    *,
    sdk_objects: bool = True,
    read_timeout: float | None = DEFAULT_READ_TIMEOUT,
) -> Iterator[TraceRow]:
    """The rows of a cassette's replay, lazily, as direct replay runs it; the last is the
    end row or the row whose error ended the stream. A `CassetteError` raises at its line.
    `sdk_objects=False`: without the SDK (`harness replay --trace`); a stall longer than
    `read_timeout` seconds ends the trace on its row (both as in `line_reader`)."""
    cassette = read_cassette(source)
    name = cassette.provider
    tracing = _tracing(name)
    machine = tracing.machine(**provider(name).request_options(cassette.header))
    item_of = feed_reader(
        cassette, on_directive, sdk_objects=sdk_objects, read_timeout=read_timeout
    )

    def row(
        line: CassetteLine,
        emits: Iterable[ModelEvent] = (),
        *,
        fed: bool = True,
        error: BaseException | None = None,
    ) -> TraceRow:
        """The row of `line`, with the adapter's state after it."""
        data = line.data
        if line.kind == "directive":
            event, index = DIRECTIVE, None
        else:
            event, index, _, _ = tracing.describe(data, _NOTHING)
        return TraceRow(
            number=line.number,
            event=event,
            index=index,
            **_open_state(tracing, machine),
            provider=name,
            emits=tuple(emits),
            error=error,
            data=data,
            fed=fed,
        )

    for line in cassette.lines():
        try:
            item = item_of(line)
            emits = machine.feed(item) if item is not SKIP else []
        except Exception as error:
            if not is_stream_failure(error):
                raise
            yield row(line, error=error)
            return
        yield row(line, emits, fed=item is not SKIP)
    try:
        emits = machine.finish()
    except Exception as error:
        if not is_stream_failure(error):
            raise
        state = _open_state(tracing, machine)
        yield TraceRow(number=None, event=END, index=None, **state, provider=name, error=error)
        return
    state = _open_state(tracing, machine)
    yield TraceRow(number=None, event=END, index=None, **state, provider=name, emits=tuple(emits))


def _open_state(tracing: ModuleType, machine: object) -> dict[str, Any]:
    """A row's `open` and `open_count`: the adapter's open set, at a cost bounded by
    `OPEN_LISTED`."""
    listed, count = tracing.open_items(machine, OPEN_LISTED)
    return {"open": tuple(sorted(listed)), "open_count": count}


def trace_hint(path: str | os.PathLike[str]) -> str:
    """The command that prints the trace of the cassette at `path`, quoted for a shell and
    safe to print: what a failure report names so the trace is one step away."""
    return f"harness replay --trace {printable(shlex.quote(os.fspath(path)))}"


# The text form -------------------------------------------------------------------------


def open_set(row: TraceRow) -> str:
    """The open tool blocks in `OPEN_WIDTH` characters at most: `{1,3}` in full while it
    fits, else as many of the first indexes as fit and how many more (`{0,1,…+99998}`)."""
    listed = [str(index) for index in row.open]
    if row.open_count == len(listed) and len(",".join(listed)) + 2 <= OPEN_WIDTH:
        return "{" + ",".join(listed) + "}"
    shown = 0
    while shown < len(listed):
        more = f"…+{row.open_count - shown - 1}"
        if len(",".join([*listed[: shown + 1], more])) + 2 > OPEN_WIDTH:
            break
        shown += 1
    return "{" + ",".join([*listed[:shown], f"…+{row.open_count - shown}"]) + "}"


def _cut(text: str, width: int) -> str:
    """`text` in at most `width` characters, an ellipsis marking a cut."""
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def _event_parts(row: TraceRow, *, short: bool = False) -> tuple[str, object]:
    """The event's head (`start(1) tool_use read`) and the value of its excerpt, if any:
    a line's as its provider names it (`short`: for the side-by-side form)."""
    data = row.data or {}
    if row.event == END:
        return "end of stream", _NOTHING
    if row.event == DIRECTIVE:
        fields = {key: value for key, value in data.items() if key != "harness"}
        return f"directive {printable(str(data.get('harness')))}", fields or _NOTHING
    _, _, head, excerpt = _tracing(row.provider).describe(data, _NOTHING, short=short)
    return head, excerpt


def event_parts(row: TraceRow) -> tuple[str, str | None]:
    """A row's event as the text form names it (`start(1) tool_use read`, `end of stream`,
    `directive at`) and its excerpt as JSON text (`"{\\"path\\":"`), or None: what a
    drawn trace (`harness view`) shows of the event, escaped as printed text is."""
    head, value = _event_parts(row)
    return head, None if value is _NOTHING else json_text(value)


def _event_text(row: TraceRow, width: int, *, short: bool = False) -> str:
    """The event column: its head, and the excerpt as far as `width` allows."""
    head, value = _event_parts(row, short=short)
    if value is _NOTHING or len(head) >= width:
        return _cut(head, width)
    room = width - len(head) - 1
    if room < 6:  # not enough for an excerpt that says anything
        return head
    return f"{head} {_cut(json_text(value), room)}"


def _emit_text(event: ModelEvent, width: int, *, ids: bool = True) -> str:
    """An emitted event in `width` columns if it can be: text is cut to fit; of a tool call
    only the name is, down to a few characters, never the id (what a reader looks for)."""
    line = event_to_json(event)
    if line["type"] == "text":
        return _cut(f"text {json_text(line['text'])}", width)
    if line["type"] == "tool_call":
        call = line["call"]
        ident = f" {printable(str(call['id']))}" if ids else ""
        name = printable(str(call["name"]))
        name = _cut(name, max(width - len("tool_call ") - len(ident), 8))
        return f"tool_call {name}{ident}"
    return str(line["type"])


def _emitted(row: TraceRow, width: int, *, ids: bool = True) -> list[str]:
    """What the row emitted, one entry an event; a fired rule is `error CODE`."""
    shown = [_emit_text(event, width, ids=ids) for event in row.emits]
    if row.error is not None:
        shown.append(f"error {_error_code(row.error)}")
    return shown


def _error_code(error: BaseException) -> str:
    return printable(str(failure_code(error)))


def _error_message(error: BaseException) -> str:
    return printable(str(failure_to_json(error)["message"]))


HEADER: Final = f"{'line':>4}  {'open':<6} {'event':<{_EVENT}}  emits"


def format_row(row: TraceRow, width: int = WIDTH) -> list[str]:
    """A row as text: one line of `width` columns at most (excerpts and text are cut to
    fit), any further emits under the first, then a fired rule's code and message, wrapped."""
    number = "end" if row.number is None else str(row.number)
    prefix = f"{number:>4}  {open_set(row):<6} "
    column = len(prefix) + _EVENT + 2
    beside = [_emit_text(event, width - column) for event in row.emits]
    if beside and all(column + len(emit) <= width for emit in beside):
        event = _event_text(row, _EVENT).ljust(_EVENT)
        lines = [f"{prefix}{event}  {beside[0]}", *(" " * column + more for more in beside[1:])]
    else:  # a tool call too long to stand beside the event stands under it, to the right
        lines = [prefix + _event_text(row, width - len(prefix))]
        for emitted in row.emits:
            emit = _emit_text(emitted, width - len(prefix))
            lines.append(" " * max(min(column, width - len(emit)), len(prefix)) + emit)
    if row.error is not None:
        lines.extend(
            textwrap.wrap(
                f"error {_error_code(row.error)}: {_error_message(row.error)}",
                width,
                initial_indent=" " * _PREFIX,
                subsequent_indent=" " * (_PREFIX + 2),
                break_on_hyphens=False,
            )
        )
    return lines


def format_rows(rows: Iterable[TraceRow]) -> Iterator[str]:
    """The text form of a trace, lazily: the header line, then each row's lines."""
    yield HEADER
    for row in rows:
        yield from format_row(row)


# Two traces side by side (`harness diff --trace`) --------------------------------------


def _compact(row: TraceRow | None, width: int, *, ids: bool) -> str:
    """A row in `width` columns: line, open blocks, event, what it emitted (cut to fit)."""
    if row is None:
        return ""
    number = "end" if row.number is None else str(row.number)
    head = f"{number:>3} {open_set(row):<5} "
    shown = _emitted(row, width - len(head) - 10, ids=ids)
    event = _event_text(row, 14 if shown else width - len(head), short=True)
    return _cut(head + " ".join([event, *shown]), width)


def _cut_left(text: str, width: int) -> str:
    """`text` in at most `width` characters, keeping its end (a path's file name)."""
    return text if len(text) <= width else "…" + text[len(text) - width + 1 :]


def _comparable(row: TraceRow, *, ids: bool) -> tuple[object, ...]:
    """What two rows must share to agree: the JSON row but the line number (a re-recording
    numbers its lines its own way), and what else of the line the adapter reads, as its
    provider's `compared` says (not a message id); tool-call ids only if `ids`."""
    shown = row.to_json()
    emits = shown["emits"]
    if not ids:
        emits = [
            {**emit, "call": {**emit["call"], "id": None}} if emit["type"] == "tool_call" else emit
            for emit in emits
        ]
    data = row.data or {}
    carried: object = None
    if row.event == DIRECTIVE:
        carried = data.get("harness")
    else:
        carried = _tracing(row.provider).compared(data, ids=ids)
    return (
        shown["event"],
        shown["index"],
        shown["open"],
        json_text([emits, carried]),
        shown.get("error"),
    )


def _reaches_adapter(row: TraceRow) -> bool:
    """Whether the row is one an adapter saw: a line it was fed (a directive's only if it
    raised), or an error."""
    return row.error is not None or (row.fed and row.event != DIRECTIVE)


def paired_rows(
    a: Iterable[TraceRow], b: Iterable[TraceRow], *, ids: bool = True
) -> Iterator[tuple[TraceRow | None, TraceRow | None, bool]]:
    """The rows of two traces an adapter saw, a row of each at a time (None past a
    trace's end), and whether the two agree; lazily, up to and including the first pair
    that does not: what `SideBySide` prints and `harness view A B` draws."""
    seen_a, seen_b = ((row for row in side if _reaches_adapter(row)) for side in (a, b))
    for left, right in zip_longest(seen_a, seen_b):
        agree = (
            left is not None
            and right is not None
            and _comparable(left, ids=ids) == _comparable(right, ids=ids)
        )
        yield left, right, agree
        if not agree:
            return


class SideBySide:
    """Two traces as text side by side, up to and including the first row where they
    differ, marked `!` and then shown in full, one row under the other (`A`, `B`).

    Lazily: iterating reads a row of each trace at a time and gives each line as soon as
    its rows are read, holding neither trace. `agree` is whether they agreed row for
    row, known once every line is out (None before).

    Rows no adapter sees (a `ping`, a directive that raised nothing) are left out, so a
    re-recording's other pings and arrival offsets do not count as a difference.
    """

    def __init__(
        self,
        a: Iterable[TraceRow],
        b: Iterable[TraceRow],
        labels: tuple[str, str],
        *,
        ids: bool = True,
        width: int = WIDTH,
    ) -> None:
        self._sides = (a, b)
        self._labels = labels
        self._ids = ids
        self._width = width
        self.agree: bool | None = None

    def __iter__(self) -> Iterator[str]:
        ids, width = self._ids, self._width
        half = (width - 3) // 2
        left_label, right_label = (_cut_left(printable(label), half) for label in self._labels)
        yield f"{left_label:<{half}}   {right_label}"
        for left, right, agree in paired_rows(*self._sides, ids=ids):
            mark = "|" if agree else "!"
            yield f"{_compact(left, half, ids=ids):<{half}} {mark} {_compact(right, half, ids=ids)}"
            if not agree:
                yield "first difference (!), in full:"
                for name, row in (("A", left), ("B", right)):
                    shown = format_row(row, width - 2) if row is not None else ["(no row: ended)"]
                    for number, line in enumerate(shown):
                        yield f"{name if number == 0 else ' '} {line}"
                self.agree = False
                return
        self.agree = True
