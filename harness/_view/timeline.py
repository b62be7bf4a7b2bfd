"""A timeline as HTML: one `<tr>` a drawn row, one a fold, every text escaped.

The class names are what a reader's style, and a test in a browser, find the rows by:
- `table.timeline`, its rows `tr.row`, each also `row-event`, `row-passed` (a line no
  adapter was fed: a `ping`), `row-directive` or `row-end`; the row where a rule fired
  (or an API error, a dropped connection ended the stream) also `row-failed`, with the
  id `failed` (prefixed on a page of several timelines), and its `span.code` and
  `span.rule` (the message: the rule in the error table's words);
- the cells `td.n` (the line), `td.at` (the arrival offset, ms, with a bar scaled to
  the stream's length; only when the cassette has `at` lines), `td.open` (the open
  set as the trace shows it), `td.event`, `td.grows` (the text or JSON so far, the
  new piece marked), `td.emits` (`span.emit`, with `emit-text`, `emit-tool_call`,
  `emit-done`);
- `tr.fold`, a run of rows folded or left out (`harness._view.fold`), its `<details>`
  holding a few of them.
Each row's id is `line-N` (`line-end` for the end), so a page can link to a line.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from harness._view.drawing import SO_FAR, Drawn, Growth
from harness._view.fold import Fold
from harness._view.page import escape

__all__ = ["columns", "fold_row", "row_cells", "row_class", "table"]


def _number(value: int) -> str:
    return f"{value:,}"


def _line(number: int | None) -> str:
    return "end" if number is None else str(number)


def _visible(text: str) -> str:
    """Escaped text whose line ends show (`↵`) without breaking the row."""
    return escape(text).replace("\n", '<span class="nl">↵</span>')


def _growth(growth: Growth) -> str:
    label = f'<span class="label">{escape(growth.label)}</span>'
    if growth.parsed is not None:
        parsed = f'<code class="parsed">{escape(growth.parsed)}</code>'
        return f'<span class="growth">{label} parsed {parsed}</span>'
    before = ("…" if len(growth.before) >= SO_FAR else "") + growth.before
    piece = (
        f"<mark>{_visible(growth.piece)}</mark>"
        if growth.piece
        else '<span class="note">(empty piece)</span>'
    )
    return (
        f'<span class="growth">{label} <span class="before">{_visible(before)}</span>{piece}</span>'
    )


def _emits(row: Drawn) -> str:
    shown = []
    for kind, text in row.emits:
        words = kind if kind == text else f"{kind} {text}"
        shown.append(f'<span class="emit emit-{escape(kind)}">{escape(words)}</span>')
    if row.failure is not None:
        code, message = row.failure
        shown.append(
            f'<span class="failure">error <span class="code">{escape(code)}</span>: '
            f'<span class="rule">{escape(message)}</span></span>'
        )
    return " ".join(shown)


def columns(timed: bool) -> list[tuple[str, str]]:
    """The timeline's columns: class and heading."""
    named = [("n", "line"), ("at", "at ms"), ("open", "open"), ("event", "event")]
    named += [("grows", "text / JSON so far"), ("emits", "emits")]
    return [column for column in named if timed or column[0] != "at"]


def row_class(row: Drawn) -> str:
    classes = ["row", f"row-{row.kind}"]
    if row.failure is not None:
        classes.append("row-failed")
    return " ".join(classes)


def row_cells(row: Drawn, timed: bool, longest: float) -> str:
    """The `<td>` cells of a row (`longest`: the stream's last offset, for the bar)."""
    cells = [f'<td class="n">{escape(_line(row.number))}</td>']
    if timed:
        if row.at is None:
            cells.append('<td class="at"></td>')
        else:
            width = 100 * row.at / longest if longest > 0 else 0
            cells.append(
                f'<td class="at">{escape(f"{row.at:,.0f}")}'
                f'<span class="bar" style="width:{width:.1f}%"></span></td>'
            )
    cells.append(f'<td class="open">{escape(row.open)}</td>')
    excerpt = "" if row.excerpt is None else f' <span class="excerpt">{escape(row.excerpt)}</span>'
    cells.append(f'<td class="event"><span class="head">{escape(row.head)}</span>{excerpt}</td>')
    grown = [_growth(growth) for growth in row.growth]
    if row.more_growth:
        grown.append(f'<span class="note">and {row.more_growth} more</span>')
    cells.append(f'<td class="grows">{"".join(grown)}</td>')
    cells.append(f'<td class="emits">{_emits(row)}</td>')
    return "".join(cells)


def _row(row: Drawn, timed: bool, longest: float, anchor: str | None) -> str:
    attributes = f' class="{row_class(row)}"'
    if anchor is not None:
        name = f"{anchor}failed" if row.failure is not None else f"{anchor}line-{_line(row.number)}"
        attributes += f' id="{escape(name)}"'
    return f"<tr{attributes}>{row_cells(row, timed, longest)}</tr>"


def fold_row(fold: Fold[Any], span: int, inner: str, hint: str) -> str:
    """A fold's row: what it stands for, and `inner` (rows of the same table) inside its
    `<details>`; `hint` the command that prints every row."""
    first, last = fold.first, fold.last
    lines = ""
    if first is not None and last is not None:
        lines = f"lines {_line(first.number)} to {_line(last.number)}"
    added = f", +{_number(fold.added)} characters" if fold.added else ""
    if fold.reason == "similar":
        what = f" ({escape(first.head)})" if first is not None else ""
        summary = f"{_number(fold.count)} similar rows folded: {escape(lines)}{what}{added}"
        shown = len(fold.sample)
        note = (
            f"The first {shown} of them, above; every row: <code>{escape(hint)}</code>"
            if shown < fold.count
            else f"All of them, above; the same rows: <code>{escape(hint)}</code>"
        )
    else:
        summary = f"{_number(fold.count)} rows not drawn: {escape(lines)}{added}"
        note = (
            "A page draws a bounded number of rows, then the last ones; every row: "
            f"<code>{escape(hint)}</code>"
        )
    table = f'<table class="timeline"><tbody>{inner}</tbody></table>' if inner else ""
    return (
        f'<tr class="fold"><td colspan="{span}"><details><summary>{summary}</summary>'
        f'{table}<p class="note">{note}</p></details></td></tr>'
    )


def table(
    entries: Sequence[Drawn | Fold[Drawn]], *, timed: bool, anchor: str | None = "", hint: str
) -> str:
    """The timeline of `entries` (rows and folds), as a `table.timeline`; row ids start
    with `anchor` (None: no ids)."""
    longest = max((row.at or 0.0 for row in _rows(entries)), default=0.0)
    heads = columns(timed)
    lines = [
        '<table class="timeline">',
        "<thead><tr>"
        + "".join(f'<th class="{name}">{escape(title)}</th>' for name, title in heads)
        + "</tr></thead>",
        "<tbody>",
    ]
    for entry in entries:
        if isinstance(entry, Fold):
            inner = "".join(_row(row, timed, longest, None) for row in entry.sample)
            lines.append(fold_row(entry, len(heads), inner, hint))
        else:
            lines.append(_row(entry, timed, longest, anchor))
    lines.append("</tbody></table>")
    return "\n".join(lines)


def _rows(entries: Iterable[Drawn | Fold[Drawn]]) -> Iterable[Drawn]:
    for entry in entries:
        if isinstance(entry, Fold):
            yield from (row for row in (entry.first, entry.last) if row is not None)
        else:
            yield entry
