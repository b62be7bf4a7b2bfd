"""The report pages: a test suite's fault run, and `harness conform`'s cases, as HTML.

`fault_run_page` draws the data `pytest --harness-report` gathers
(`harness._testing.fault_report`): a row a fault row of the catalogue, a column a test,
each cell the plugin's verdict in its own words, how a caught row was caught (the code
refused the stream, with the exception it raised, or recovered), and a link to the
variant's timeline (`variant_link`). `conform_page` draws the objects `harness conform
--format json` prints: a row a case, the disagreeing ones first.

A page is one self-contained file that opens from disk: its style inline, no script, no
request of any kind (its Content-Security-Policy forbids them), every text escaped, so a
cassette holding `</script>` or markup shows it as text.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from harness._view.page import cut, document, escape, write_page

__all__ = ["conform_page", "escape", "fault_run_page", "page", "variant_link"]

#: What a cell shows of a long text before its `<details>` holds the rest.
SHORT: Final = 140

#: The report pages' own style (the tables of verdicts), in `page.document`'s shell.
_BASE_STYLE: Final = """
:root { color-scheme: light; --ink: #1f2328; --muted: #59636e; --line: #d1d9e0; }
* { box-sizing: border-box; }
body { margin: 0; padding: 20px 24px; font: 14px/1.45 system-ui, -apple-system, "Segoe UI",
  Roboto, "DejaVu Sans", sans-serif; color: var(--ink); background: #ffffff; }
h1 { font-size: 20px; margin: 0 0 4px; }
h2 { font-size: 16px; margin: 24px 0 8px; }
p.lead { margin: 0 0 14px; color: var(--muted); }
code, pre { font: 12px/1.4 ui-monospace, "SFMono-Regular", "DejaVu Sans Mono", monospace; }
pre { white-space: pre-wrap; word-break: break-word; margin: 4px 0 0; }
table { border-collapse: separate; border-spacing: 0; }
th, td { border-right: 1px solid var(--line); border-bottom: 1px solid var(--line);
  padding: 6px 8px; vertical-align: top; text-align: left; }
thead th { position: sticky; top: 0; background: #f6f8fa; z-index: 2;
  border-top: 1px solid var(--line); }
th:first-child, td:first-child { border-left: 1px solid var(--line); }
.chips { display: flex; flex-wrap: wrap; gap: 6px; margin: 0 0 16px; padding: 0; }
.chips li { list-style: none; padding: 2px 10px; border-radius: 12px; font-size: 13px; }
details summary { cursor: pointer; color: var(--muted); font-size: 12px; }
.muted { color: var(--muted); }
"""


def page(title: str, body: str, *, style: str = "") -> str:
    """A whole report page: `body` (markup already escaped) under `title`."""
    return document(title, body, style=_BASE_STYLE + style, drawn=False)


def _short(text: str, limit: int = SHORT) -> str:
    """A text on one line, cut to `limit` characters."""
    return cut(" ".join(text.split()), limit)


def _more(text: str, label: str = "more") -> str:
    """The whole of a text a cell shows the start of, folded (nothing when it all shows)."""
    if len(" ".join(text.split())) <= SHORT and "\n" not in text.strip():
        return ""
    return f"<details><summary>{escape(label)}</summary><pre>{escape(text)}</pre></details>"


def _class(words: str) -> str:
    """A verdict's CSS class: `accepted silently` is `v-accepted-silently`."""
    return "v-" + "-".join(words.split())


# -- the fault run -------------------------------------------------------------------------

#: Each verdict's colours (background, text): the plugin's words, harness.pytest_plugin.VERDICTS.
VERDICT_COLOURS: Final = {
    "caught": ("#d8f3dc", "#14532d"),
    "accepted silently": ("#fddede", "#8a1c1c"),
    "accepted on purpose": ("#e0e7ff", "#312e81"),
    "wrong code": ("#ffe8cc", "#7c2d12"),
    "crashed": ("#f6d5f7", "#701a75"),
    "not answered": ("#fdf0c4", "#713f12"),
    "not recovered": ("#ffd9c2", "#7c2d12"),
    "not judged": ("#e8eaed", "#3c4043"),
    "does not apply": ("#f6f8fa", "#8c959f"),
}
#: The verdict of a row the test's cassette gives nothing to break.
DOES_NOT_APPLY: Final = "does not apply"
#: The border of a cell whose test failed: the rows to fix.
FAILED_BORDER: Final = "#d1242f"

_FAULT_STYLE: Final = (
    "".join(
        f".{_class(verdict)} {{ background: {background}; color: {ink}; }}\n"
        for verdict, (background, ink) in VERDICT_COLOURS.items()
    )
    + f"""
table.matrix td {{ min-width: 150px; max-width: 320px; font-size: 13px; }}
table.matrix td.failed {{ box-shadow: inset 4px 0 0 {FAILED_BORDER}; }}
table.matrix td.none {{ background: #ffffff; color: #8c959f; }}
table.matrix th[scope=row] {{ position: sticky; left: 0; background: #ffffff; z-index: 1;
  min-width: 220px; max-width: 340px; }}
table.matrix thead th {{ min-width: 150px; max-width: 320px; overflow-wrap: anywhere; }}
table.matrix thead th:first-child {{ left: 0; z-index: 3; }}
.verdict {{ font-weight: 600; color: inherit; }}
a.verdict {{ text-decoration: underline dotted; }}
.how {{ margin-top: 2px; }}
.desc {{ font-weight: 400; color: var(--muted); font-size: 12px; }}
.file {{ display: block; font-weight: 400; color: var(--muted); font-size: 12px; }}
"""
)


def fault_run_page(data: Mapping[str, Any], links: Mapping[str, str] | None = None) -> str:
    """The page of a fault run: `data` as `harness._testing.fault_report.fault_run_data`
    makes it (the JSON the option also writes), `links` the href of each cell's variant
    page, by the row's test id (none: the verdict is not a link)."""
    links = links or {}
    tests: Sequence[Mapping[str, Any]] = data["tests"]
    faults: Sequence[Mapping[str, str]] = data["faults"]
    cells = {(test["test"], cell["fault"]): cell for test in tests for cell in test["rows"]}
    counted = [(verdict, data["summary"].get(verdict, 0)) for verdict in data["verdicts"]]
    failed = sum(cell["outcome"] == "failed" for cell in cells.values())
    chips = "".join(
        f'<li class="{_class(verdict)}">{escape(verdict)} <b>{count}</b></li>'
        for verdict, count in counted
        if count
    )
    lead = (
        f"{len(cells)} fault row{'s' if len(cells) != 1 else ''} run by {len(tests)} "
        f"test{'s' if len(tests) != 1 else ''}, {failed} failed. A row a fault of the "
        "catalogue, a column a test; a verdict links to the broken variant it was served."
    )
    heads = "".join(f"<th>{_test_head(test['test'])}</th>" for test in tests)
    rows = []
    nowhere = [  # rows that apply to no test's cassette: named once, below the table
        fault["fault"]
        for fault in faults
        if all(
            cell["verdict"] == DOES_NOT_APPLY
            for (_, name), cell in cells.items()
            if name == fault["fault"]
        )
    ]
    for fault in faults:
        name = fault["fault"]
        if name in nowhere:
            continue
        head = (
            f'<th scope="row"><code>{escape(name)}</code>'
            f'<div class="desc">{escape(fault["description"])}</div></th>'
        )
        row_cells = "".join(_fault_cell(cells.get((test["test"], name)), links) for test in tests)
        rows.append(f"<tr>{head}{row_cells}</tr>")
    table = (
        '<table class="matrix">\n<thead><tr><th>fault row</th>'
        f"{heads}</tr></thead>\n<tbody>\n" + "\n".join(rows) + "\n</tbody>\n</table>"
    )
    if nowhere:
        listed = ", ".join(f"<code>{escape(name)}</code>" for name in nowhere)
        table += f'\n<p class="muted">{escape(DOES_NOT_APPLY)} to any test: {listed}</p>'
    if not tests:
        table = '<p class="muted">No test ran a fault row (fault_variant).</p>'
    body = (
        f'<h1>{escape(data["title"])}</h1>\n<p class="lead">{escape(lead)}</p>\n'
        f'<ul class="chips">{chips}</ul>\n{table}'
    )
    return page(str(data["title"]), body, style=_FAULT_STYLE)


def _test_head(test: str) -> str:
    """A test's column head: its function's name, its file below it."""
    where, _, name = test.rpartition("::")
    return f'{escape(name or test)}<span class="file">{escape(where)}</span>'


def _fault_cell(cell: Mapping[str, Any] | None, links: Mapping[str, str]) -> str:
    if cell is None:
        return '<td class="none" title="not run by this test">·</td>'
    verdict = str(cell["verdict"])
    classes = [_class(verdict)] + (["failed"] if cell["outcome"] == "failed" else [])
    href = links.get(cell["nodeid"])
    label = escape(verdict)
    shown = (
        f'<a class="verdict" href="{escape(href)}">{label}</a>'
        if href is not None
        else f'<span class="verdict">{label}</span>'
    )
    how, full = _how(cell)
    parts = [shown]
    if how:
        parts.append(f'<div class="how">{escape(_short(how))}</div>')
    if full:
        parts.append(_more(full, "the whole message"))
    nodeid = escape(cell["nodeid"])
    return f'<td class="{" ".join(classes)}" data-nodeid="{nodeid}">{"".join(parts)}</td>'


def _how(cell: Mapping[str, Any]) -> tuple[str, str]:
    """What a cell says under its verdict, and the whole text behind it (may be empty)."""
    raised = cell.get("raised")
    exception = "" if raised is None else f"{raised['type']}: {raised['message']}"
    if cell["verdict"] == "caught":
        if cell.get("caught") == "recovered":
            return "recovered: the stream completed", ""
        code = None if raised is None else raised.get("code")
        refused = f"refused ({code})" if code else "refused"
        return (f"{refused}: {exception}" if exception else refused), exception
    if cell["verdict"] == "accepted on purpose":
        return str(cell.get("accepted_because") or ""), ""
    message = str(cell.get("message") or "")
    if cell["verdict"] == DOES_NOT_APPLY:
        return "", ""
    return message, message


# -- a variant's page -----------------------------------------------------------------------


def variant_link(variant: Path, page_path: Path, report: Path) -> str:
    """The href a report's cell at `report` links to for a broken variant: the variant's
    timeline, rendered into `page_path` by `harness view` (`harness._view.stream_page`),
    or, where that page cannot be made, the variant's cassette itself."""
    from harness._exceptions import HarnessError
    from harness._view.stream import stream_page

    target = variant
    try:
        written = stream_page(variant, title=f"{variant.name}: {variant.parent.name}")
        page_path.parent.mkdir(parents=True, exist_ok=True)
        write_page(written, page_path)
    except (HarnessError, OSError, ValueError):
        pass  # an unreadable variant: its cassette is what the cell links to
    else:
        target = page_path
    return _href(target, report.parent)


def _href(target: Path, folder: Path) -> str:
    """`target` relative to the page's `folder` (the pair moves together, as a CI
    artifact), else as a file: URL."""
    try:
        relative = os.path.relpath(target, folder)
    except ValueError:  # another drive
        return target.absolute().as_uri()
    return "/".join(_quoted(part) for part in Path(relative).parts)


def _quoted(part: str) -> str:
    from urllib.parse import quote

    return quote(part, safe="")


# -- the conformance report -----------------------------------------------------------------

#: The colours of `harness conform`'s classes (harness._testing.findings.CLASSES), and of
#: a case that agrees.
CLASS_COLOURS: Final = {
    "agrees": ("#d8f3dc", "#14532d"),
    "accepted silently": ("#fddede", "#8a1c1c"),
    "wrong data": ("#ffe8cc", "#7c2d12"),
    "failed differently": ("#fdf0c4", "#713f12"),
    "crashed": ("#f6d5f7", "#701a75"),
    "timed out": ("#e8eaed", "#3c4043"),
    "broke the protocol": ("#f6d5f7", "#701a75"),
}
_CONFORM_STYLE: Final = (
    "".join(
        f".{_class(kind)} {{ background: {background}; color: {ink}; }}\n"
        for kind, (background, ink) in CLASS_COLOURS.items()
    )
    + f"""
table.cases td {{ font-size: 13px; max-width: 420px; }}
table.cases tr.disagree td:first-child {{ box-shadow: inset 4px 0 0 {FAILED_BORDER}; }}
table.cases td.class {{ font-weight: 600; }}
"""
)


def conform_page(
    records: Sequence[Mapping[str, Any]], summary: Mapping[str, Any], heading: str
) -> str:
    """The page of a conformance run: `records` the objects `--format json` prints a case,
    `summary` its closing object's, `heading` the command judged."""
    count = f"{summary['agree']}/{summary['cases']} cases agree"
    if summary.get("skipped"):
        count += f" ({summary['skipped']} wire-level cases skipped: --serve runs them)"
    chips = [("agrees", summary["agree"])]
    by_class: dict[str, int] = {}
    for row in summary["by_class"]:
        by_class[row["class"]] = by_class.get(row["class"], 0) + row["cases"]
    chips += list(by_class.items())
    listed = "".join(
        f'<li class="{_class(kind)}">{escape(kind)} <b>{number}</b></li>'
        for kind, number in chips
        if number
    )
    classes = [
        "<tr>"
        f'<td class="class {_class(row["class"])}">{escape(row["class"])}</td>'
        f"<td><code>{escape(row['fault'])}</code></td><td>{row['cases']}</td></tr>"
        for row in summary["by_class"]
    ]
    by_class_table = ""
    if classes:
        by_class_table = (
            "<h2>By class and fault</h2>\n<table>\n<thead><tr><th>class</th><th>fault</th>"
            "<th>cases</th></tr></thead>\n<tbody>\n" + "\n".join(classes) + "\n</tbody></table>"
        )
    ordered = [r for r in records if not r["agree"]] + [r for r in records if r["agree"]]
    rows = "\n".join(_conform_row(record) for record in ordered)
    table = (
        '<h2>Cases, the disagreeing ones first</h2>\n<table class="cases">\n<thead><tr>'
        "<th>case</th><th>expected</th><th>got</th><th>class</th><th>first difference</th>"
        f"<th>the fault</th></tr></thead>\n<tbody>\n{rows}\n</tbody>\n</table>"
    )
    body = (
        f'<h1>{escape(heading)}</h1>\n<p class="lead">{escape(count)}</p>\n'
        f'<ul class="chips">{listed}</ul>\n{table}\n{by_class_table}'
    )
    return page(f"{heading}: {count}", body, style=_CONFORM_STYLE)


def _conform_row(record: Mapping[str, Any]) -> str:
    got = record["got"]
    said = str(got.get("problem") or got["outcome"])
    if got.get("stderr"):
        said += "\n" + "\n".join(got["stderr"])
    if got.get("message") and got.get("problem") is None:
        said += f"\n{got['message']}"
    kind = record["class"] or "agrees"
    shown_kind = kind if not record.get("detail") else f"{kind}: {record['detail']}"
    words = str(record.get("description") or "")
    if record.get("fault"):
        words = f"fault {record['fault']}: {words}"
    difference = str(record.get("difference") or "")
    trace = record.get("trace")
    traced = f'<div class="muted"><code>{escape(trace)}</code></div>' if trace else ""
    row_class = "agree" if record["agree"] else "disagree"
    return (
        f'<tr class="{row_class}" data-case="{escape(record["case"])}">'
        f"<td><code>{escape(record['case'])}</code></td>"
        f"<td><code>{escape(record['expected']['outcome'])}</code></td>"
        f"<td><code>{escape(_short(said))}</code>{_more(said)}</td>"
        f'<td class="class {_class(kind)}">{escape(shown_kind)}</td>'
        f"<td>{escape(_short(difference))}{_more(difference)}{traced}</td>"
        f"<td>{escape(_short(words))}</td></tr>"
    )
