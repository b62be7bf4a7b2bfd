"""Two cassettes side by side: `harness diff --trace` drawn.

The verdict is `harness diff`'s (`harness._testing.diff.match_outcomes`: the outcomes
replayed a line of each at a time), the rows are the side-by-side form's
(`harness._testing.trace.paired_rows`: the rows an adapter saw, a row of each side at a
time, up to and including the first pair that differs), each side's drawn as a stream
page draws it (`harness._view.drawing`). The pair where the two part is
`tr.row-differs`, id `first-difference`, marked `!`, and both its rows follow in full;
runs of agreeing pairs fold as a stream's rows do. Both must be of one provider
(`one_provider`), else `CassetteError`, as `harness diff` refuses them.
"""

from __future__ import annotations

import os
from collections.abc import Hashable, Iterable, Iterator
from dataclasses import dataclass
from itertools import zip_longest
from pathlib import Path
from typing import Final

from harness._cassette.codec import Cassette
from harness._testing.diff import match_outcomes, one_provider, streamed_lines
from harness._testing.trace import TraceRow, paired_rows, trace
from harness._view.drawing import Drawing, Drawn
from harness._view.fold import BUDGET, Fold, folded
from harness._view.page import cut, document, escape
from harness._view.timeline import fold_row, table

__all__ = ["DiffPage", "diff_page"]

#: Lines of each outcome the page shows (the rest are counted).
OUTCOME_SHOWN: Final = 200


@dataclass(slots=True)
class _Pair:
    """A row of each side (None past a side's end) and whether the two agree."""

    left: Drawn | None
    right: Drawn | None
    agree: bool

    @property
    def number(self) -> int | None:
        side = self.left or self.right
        return None if side is None else side.number

    @property
    def added(self) -> int:
        return self.left.added if self.left is not None else 0

    @property
    def head(self) -> str:
        side = self.left or self.right
        return "" if side is None else side.head


@dataclass(frozen=True, slots=True)
class DiffPage:
    """The page and what the command says of it: whether the outcomes are the same, and
    the pair where the traces part (None: they agree row for row)."""

    html: str
    same: bool
    parted_at: int | None
    verdict: str


class _Side:
    """A side's trace rows passed on, each one's drawn row kept as `last`."""

    def __init__(self, cassette: Cassette) -> None:
        self.drawing = Drawing(cassette.provider)
        self._rows = trace(cassette, sdk_objects=False)
        self.last: Drawn | None = None

    def __iter__(self) -> Iterator[TraceRow]:
        for row in self._rows:
            self.last = self.drawing.draw(row)
            yield row


def _pairs(a: _Side, b: _Side, ids: bool) -> Iterator[_Pair]:
    for left, right, agree in paired_rows(a, b, ids=ids):
        yield _Pair(
            a.last if left is not None else None, b.last if right is not None else None, agree
        )


def _key(pair: _Pair) -> Hashable | None:
    if not pair.agree or pair.left is None or pair.right is None:
        return None
    if pair.left.key is None or pair.right.key is None:
        return None
    return (pair.left.key, pair.right.key)


COLUMNS = ("n", "open", "event", "emits")


def _cells(row: Drawn | None) -> str:
    if row is None:
        return (
            '<td class="n"></td><td class="open"></td>'
            '<td class="event note">(ended)</td><td class="emits"></td>'
        )
    emits = "".join(
        f'<span class="emit emit-{escape(kind)}">'
        f"{escape(kind if kind == text else f'{kind} {text}')}</span>"
        for kind, text in row.emits
    )
    if row.failure is not None:
        emits += (
            f'<span class="failure">error <span class="code">{escape(row.failure[0])}</span></span>'
        )
    excerpt = "" if row.excerpt is None else f' <span class="excerpt">{escape(row.excerpt)}</span>'
    number = "end" if row.number is None else str(row.number)
    return (
        f'<td class="n">{escape(number)}</td><td class="open">{escape(row.open)}</td>'
        f'<td class="event"><span class="head">{escape(row.head)}</span>{excerpt}</td>'
        f'<td class="emits">{emits}</td>'
    )


def _pair_row(pair: _Pair, with_id: bool) -> str:
    classes = ["row", "row-pair"]
    if not pair.agree:
        classes.append("row-differs")
    for row in (pair.left, pair.right):
        if row is not None and row.failure is not None:
            classes.append("row-failed")
            break
    anchor = ' id="first-difference"' if with_id and not pair.agree else ""
    mark = "|" if pair.agree else "!"
    return (
        f'<tr class="{" ".join(classes)}"{anchor}>{_cells(pair.left)}'
        f'<td class="mark">{mark}</td>{_cells(pair.right)}</tr>'
    )


def _table(entries: Iterable[_Pair | Fold[_Pair]], labels: tuple[str, str], hint: str) -> str:
    span = 2 * len(COLUMNS) + 1
    heads = "".join(
        f'<th class="{name}">{name if name != "n" else "line"}</th>' for name in COLUMNS
    )
    lines = [
        '<table class="timeline diff">',
        f'<thead><tr><th colspan="{len(COLUMNS)}">A: {escape(labels[0])}</th><th></th>'
        f'<th colspan="{len(COLUMNS)}">B: {escape(labels[1])}</th></tr>',
        f'<tr>{heads}<th class="mark"></th>{heads}</tr></thead><tbody>',
    ]
    for entry in entries:
        if isinstance(entry, Fold):
            inner = "".join(_pair_row(pair, False) for pair in entry.sample)
            lines.append(fold_row(entry, span, inner, hint))
        else:
            lines.append(_pair_row(entry, True))
    lines.append("</tbody></table>")
    return "\n".join(lines)


def diff_page(
    a: str | os.PathLike[str],
    b: str | os.PathLike[str],
    *,
    ignore_ids: bool = False,
    title: str | None = None,
) -> DiffPage:
    """The page of two cassettes side by side. Raises `CassetteError` if one is unusable
    or the two are of different providers."""
    labels = (os.fspath(a), os.fspath(b))
    a_cassette, b_cassette = Cassette(a), Cassette(b)
    one_provider(a_cassette, b_cassette, "harness view")
    match = match_outcomes(a_cassette, b_cassette, ignore_ids=ignore_ids)
    if match.same:
        verdict = f"same outcome: {match.a_count} lines, ending in {match.a_code}"
    else:
        verdict = f"outcomes differ: A ends in {match.a_code}, B in {match.b_code}"
    left, right = _Side(a_cassette), _Side(b_cassette)
    pairs = list(folded(_pairs(left, right, not ignore_ids), _key, budget=BUDGET))
    parted = next((entry for entry in pairs if isinstance(entry, _Pair) and not entry.agree), None)
    option = " --ignore-ids" if ignore_ids else ""
    hint = f"harness diff --trace{option} {labels[0]} {labels[1]}"
    parts = [
        f"<h1>{escape(title or f'{Path(a).name} against {Path(b).name}')}</h1>",
        f'<p class="about">A <code>{escape(labels[0])}</code> · B <code>{escape(labels[1])}</code>'
        f" · provider <code>{escape(a_cassette.provider)}</code>"
        + (" · tool-call ids compared by position" if ignore_ids else "")
        + "</p>",
    ]
    failed = "" if match.same else " failed"
    if parted is None:
        where = "the traces agree row for row"
    else:
        where = (
            '<a href="#first-difference">the first row where they part</a> is marked <code>!</code>'
        )
    parts.append(f'<p class="verdict{failed}">{escape(verdict)}; {where}.</p>')
    parts.append("<h2>The two outcomes</h2>")
    parts.append(
        '<p class="about">What each replays to, a JSON line an event (as <code>harness replay '
        "--format json</code> prints them), the first line where they differ marked.</p>"
    )
    parts.append(_outcomes(a_cassette, b_cassette, ignore_ids))
    parts.append("<h2>The traces side by side</h2>")
    parts.append(
        '<p class="about">The rows an adapter saw (pings and arrival offsets left out), a row '
        "of each at a time, up to the first that differs; the same rows as "
        f"<code>{escape(hint)}</code>.</p>"
    )
    parts.append(_table(pairs, labels, hint))
    if parted is not None:
        parts.append("<h2>Where they part, in full</h2>")
        for name, row, drawing in (
            ("A", parted.left, left.drawing),
            ("B", parted.right, right.drawing),
        ):
            parts.append(f"<h3>{name}</h3>")
            if row is None:
                parts.append('<p class="note">(no row: the stream ended)</p>')
            else:
                parts.append(
                    table([row], timed=drawing.timed, anchor=f"{name.lower()}-", hint=hint)
                )
    html = document(f"{labels[0]} against {labels[1]} · harness view", "".join(parts))
    parted_at = None if parted is None else parted.number
    return DiffPage(html, match.same, parted_at if parted is not None else None, verdict)


def _outcomes(a: Cassette, b: Cassette, ignore_ids: bool) -> str:
    """Both outcomes side by side, their first `OUTCOME_SHOWN` lines, the first line
    where they differ marked (`span.differs`); read a line of each at a time."""
    shown: tuple[list[str], list[str]] = ([], [])
    counts = [0, 0]
    parted: int | None = None
    sides = (streamed_lines(a, ignore_ids=ignore_ids), streamed_lines(b, ignore_ids=ignore_ids))
    for number, (left, right) in enumerate(zip_longest(*sides)):
        if parted is None and left != right:
            parted = number
        for side, line in enumerate((left, right)):
            if line is None:
                continue
            counts[side] += 1
            if number < OUTCOME_SHOWN:
                marked = ' class="differs"' if number == parted else ""
                shown[side].append(f"<span{marked}>{escape(cut(line, 400))}</span>")
    blocks = []
    for name, lines, count in (("A", shown[0], counts[0]), ("B", shown[1], counts[1])):
        more = ""
        if count > len(lines):
            more = f'<p class="note">and {count - len(lines):,} more lines</p>'
        joined = "\n".join(lines)
        blocks.append(f'<div><h3>{name}</h3><pre class="outcome">{joined}</pre>{more}</div>')
    return f'<div class="sides">{"".join(blocks)}</div>'
