"""One stream drawn: what it is, how it ends, its text, its lanes, its timeline.

`stream_page(path)` is the whole page of one cassette; `StreamSection` the same parts as
a section of a bigger page (a session's turn, a run's cassette): its ids prefixed, its
timeline's row budget chosen by the page. In reading order:
- the header's facts: provider, model, description, source, and the outcome the
  cassette says it replays to (a fault variant's `expect`, an `errors/` cassette's
  name), if any;
- the verdict: `done`, or the failing line with its code and message, linked to its row;
- the text as it was assembled, each piece marked (its line in the title);
- a lane for each tool block, call or output item: where it opened and closed, its JSON
  piece by piece, and the input parsed at its close (or the rule that fired there);
- the timeline (`harness._view.timeline`), its long runs folded (`harness._view.fold`).
The rows come from `harness._testing.trace` without the SDK, read once, lazily; a
cassette the harness cannot read raises its `CassetteError` before anything is drawn.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness._cassette.codec import Cassette, CassetteSource, read_cassette
from harness._terminal import json_text
from harness._testing.rules import declared
from harness._testing.trace import OPEN_LISTED, trace, trace_hint
from harness._view.drawing import LANE_KEPT, Drawing, Drawn, Lane
from harness._view.fold import BUDGET, folded
from harness._view.page import cut, document, escape
from harness._view.timeline import table

__all__ = ["StreamSection", "stream_page", "stream_section"]


@dataclass(frozen=True, slots=True)
class StreamSection:
    """A stream's parts as HTML (`html`), and what a page says of it: its `outcome`
    (`done` or the failure's code), its `expected` outcome if the cassette says one, the
    failing line (`failed_at`), how many lines and events it has, its provider."""

    html: str
    outcome: str
    expected: str | None
    failed_at: str | None
    lines: int
    events: int
    provider: str

    @property
    def summary(self) -> str:
        """One line: `16 lines, ends in done`, `15 lines, fails at line 16: CODE`."""
        lines = f"{self.lines} line{'' if self.lines == 1 else 's'}"
        if self.failed_at is None:
            return f"{lines}, ends in {self.outcome}"
        where = "the end" if self.failed_at == "end" else f"line {self.failed_at}"
        return f"{lines}, fails at {where}: {self.outcome}"


def _facts(cassette: Cassette, expected: str | None) -> str:
    header = cassette.header or {}
    facts = [("provider", cassette.provider)]
    for key in ("model", "source", "recorded_at", "fault"):
        if isinstance(header.get(key), str | int | float) and not isinstance(header[key], bool):
            facts.append((key, str(header[key])))
    if expected is not None:
        facts.append(("expected outcome", expected))
    shown = " · ".join(f"{escape(name)} <code>{escape(value)}</code>" for name, value in facts)
    description = cassette.description
    about = f'<p class="about">{escape(description)}</p>' if description else ""
    return f'{about}<p class="about">{shown}</p>'


def _verdict(drawing: Drawing, expected: str | None, anchor: str) -> str:
    outcome = drawing.outcome or "done"
    as_expected = ""
    if expected is not None:
        as_expected = (
            " (as the cassette expects)"
            if expected == outcome
            else (f" (the cassette expects <code>{escape(expected)}</code>)")
        )
    if drawing.failed_at is None:
        return (
            f'<p class="verdict">Ends in <code>{escape(outcome)}</code>{as_expected}: '
            f"{_count(drawing.lines, 'line')}, {_count(drawing.events, 'event')}.</p>"
        )
    line = drawing.failed_at
    where = "at the end of the stream" if line == "end" else f"at line {escape(line)}"
    return (
        f'<p class="verdict failed">Fails {where}: <a href="#{escape(anchor)}failed">'
        f'<span class="code">{escape(outcome)}</span></a>{as_expected}, after '
        f"{_count(drawing.lines, 'line')}, {_count(drawing.events, 'event')}.</p>"
    )


def _text(drawing: Drawing, level: int) -> str:
    if not drawing.text_count:
        return ""
    pieces = [
        f'<span class="piece" title="line {escape(number)}">{escape(text)}</span>'
        if number is not None
        else f'<span class="piece">{escape(text)}</span>'
        for number, text in drawing.text_pieces
    ]
    rest = escape("".join(drawing.text_rest))
    kept = sum(len(text) for _, text in drawing.text_pieces) + sum(map(len, drawing.text_rest))
    more = ""
    if kept < drawing.text_size:
        more = (
            f'<p class="note">The first {kept:,} characters of {drawing.text_size:,}; '
            "harness replay prints the whole text.</p>"
        )
    return (
        f"<h{level}>Text, as assembled</h{level}>"
        f'<p class="about">{_count(drawing.text_size, "character")} in '
        f"{_count(drawing.text_count, 'text event')}; each piece is shaded in turn, its "
        "line in its title.</p>"
        f'<section class="text"><pre>{"".join(pieces)}{rest}</pre></section>{more}'
    )


def _lane(lane: Lane) -> str:
    classes = "lane lane-failed" if lane.failure is not None else "lane"
    opened = (
        f"before line {lane.opened}, past the {OPEN_LISTED} open blocks a trace lists (its "
        "pieces from there on)"
        if lane.late
        else f"at line {lane.opened}"
    )
    if lane.closed is None:
        closed = "never closed"
    else:
        closed = "closed at the end" if lane.closed == "end" else f"closed at line {lane.closed}"
    pieces = "".join(f'<span class="piece">{escape(piece)}</span>' for piece in lane.pieces)
    if lane.kept < lane.size:
        pieces += f'<span class="note">… {lane.size - lane.kept:,} more characters</span>'
    json_part = (
        f'<pre class="lane-json">{pieces}</pre>'
        if lane.count
        else '<p class="note">no JSON pieces</p>'
    )
    if lane.call is not None:
        call = lane.call
        parsed = (
            f'<p class="lane-parsed">tool_call <code>{escape(call["name"])}</code> '
            f"<code>{escape(call['id'])}</code>, input parsed: "
            f'<code class="parsed">{escape(cut(json_text(call["input"]), LANE_KEPT))}</code></p>'
        )
    elif lane.failure is not None:
        where = "" if lane.closed is not None else ", never closed"
        parsed = (
            f'<p class="lane-parsed">error <span class="code">{escape(lane.failure)}</span>'
            f"{where}</p>"
        )
    else:
        parsed = '<p class="lane-parsed note">no tool_call at its close</p>'
    return (
        f'<div class="{classes}" data-index="{lane.index}">'
        f'<div class="lane-head">{escape(lane.label)}: {escape(lane.head)}</div>'
        f'<div class="about">opened {escape(opened)}, {escape(closed)}; '
        f"{_count(lane.count, 'piece')}, {_count(lane.size, 'character')}</div>"
        f"{json_part}{parsed}</div>"
    )


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


def _lanes(drawing: Drawing, level: int) -> str:
    if not drawing.lanes:
        return ""
    more = ""
    if drawing.lanes_more:
        more = f'<p class="note">and {drawing.lanes_more:,} more lanes, not drawn</p>'
    title = escape(drawing.lane_title)
    return (
        f"<h{level}>Lanes: each tool {title}, its JSON piece by piece</h{level}>"
        f'<section class="lanes">{"".join(_lane(lane) for lane in drawing.lanes)}</section>{more}'
    )


def stream_section(
    source: CassetteSource,
    *,
    anchor: str = "",
    budget: int = BUDGET,
    level: int = 2,
    label: str | None = None,
) -> StreamSection:
    """A cassette's parts, its ids prefixed with `anchor`, headings at `level`, at most
    about `budget` timeline rows. Raises `CassetteError` if the cassette is unusable."""
    cassette = read_cassette(source)
    expected = declared(cassette)
    drawing = Drawing(cassette.provider)
    rows = drawing.rows(trace(cassette, sdk_objects=False))
    entries = list(folded(rows, _key, budget=budget))
    hint = trace_hint(label if label is not None else cassette.path)
    timeline = table(entries, timed=drawing.timed, anchor=anchor, hint=hint)
    about = (
        "one row a line, at its recorded offset (ms after the request)"
        if drawing.timed
        else "one row a line, in order (no recorded offsets)"
    )
    html = "".join(
        [
            _facts(cassette, expected),
            _verdict(drawing, expected, anchor),
            _text(drawing, level),
            _lanes(drawing, level),
            f"<h{level}>Timeline</h{level}>",
            f'<p class="about">{escape(about)}; the same rows as <code>{escape(hint)}</code>.</p>',
            timeline,
        ]
    )
    return StreamSection(
        html=html,
        outcome=drawing.outcome or "done",
        expected=expected,
        failed_at=drawing.failed_at,
        lines=drawing.lines,
        events=drawing.events,
        provider=cassette.provider,
    )


def _key(row: Drawn) -> tuple[Any, ...] | None:
    return row.key


def stream_page(path: str | os.PathLike[str], *, title: str | None = None) -> str:
    """The whole page of one cassette (a stream): an HTML document that fetches nothing.
    Raises `CassetteError` (`PATH:LINE: reason`) if the cassette is unusable."""
    return stream_document(path, title=title)[0]


def stream_document(
    path: str | os.PathLike[str], *, title: str | None = None
) -> tuple[str, StreamSection]:
    """`stream_page`, with the section's facts (for the command's one line)."""
    section = stream_section(path)
    name = Path(path).name
    heading = title if title is not None else name
    body = f"<h1>{escape(heading)}</h1>{section.html}"
    return document(f"{heading} · harness view", body), section
