"""The shell every `harness view` page shares: the document, its style, escaping, the write.

A page is one HTML file that opens from disk and fetches nothing: its style is inline,
it holds no script (folds are `<details>`), and its Content-Security-Policy allows no
source at all but inline style (and inline script and `data:` images, which a page
built on this shell may add), so even text that slipped through escaping could not load
or send anything. Every text of a cassette goes through `escape` (HTML's five
characters, and the controls, bidi overrides and lone surrogates `harness._terminal`
escapes for a terminal, which would otherwise reorder what a reader sees or fail the
UTF-8 write); `script_json` is the one way a value enters a `<script>` block, should a
page ever need one. `write_page` replaces its file atomically (`harness._files`): an
interrupted write leaves the old page.
"""

from __future__ import annotations

import json
import os
from html import escape as _entities
from typing import Any, Final

from harness._exceptions import OutputError
from harness._files import atomic_write
from harness._terminal import printable
from harness._version import __version__

__all__ = [
    "CSP",
    "DIFFERS",
    "FAILED",
    "FAILED_EDGE",
    "cut",
    "document",
    "escape",
    "script_json",
    "write_page",
]

#: Nothing may be fetched: no script, style, image, font or frame from anywhere, no form
#: target, no connection; inline style (and inline script, `data:` images) only.
CSP: Final = (
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"
)

#: The colours a reader (and tests/test_browser.py, in a screenshot's pixels) finds the
#: marked rows by: the failing row's background and its left edge, the row where two
#: traces part.
FAILED: Final = "#fde8e8"
FAILED_EDGE: Final = "#c81e1e"
DIFFERS: Final = "#fff4d6"

_ROOT: Final = (
    ":root { --line: #d9dce1; --soft: #f5f6f8; --text: #1d2330; --dim: #6b7280;\n"
    f"  --failed: {FAILED}; --failed-edge: {FAILED_EDGE}; --text-emit: #e6f4ea;\n"
    f"  --call-emit: #e8effd; --done-emit: #eceff3; --fold: #fafafa; --differs: {DIFFERS}; }}\n"
)

STYLE: Final = (
    _ROOT
    + """* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--text);
  margin: 0; padding: 1.2rem 1.6rem 3rem; background: #fff; }
h1 { font-size: 1.25rem; margin: 0 0 .3rem; word-break: break-all; }
h2 { font-size: 1.05rem; margin: 1.6rem 0 .5rem; }
h3 { font-size: .95rem; margin: 1.2rem 0 .4rem; }
h4 { font-size: .9rem; margin: 1rem 0 .3rem; }
code, pre, .mono, table.timeline td { font-family: ui-monospace, "SFMono-Regular", Menlo,
  Consolas, monospace; font-size: 12.5px; }
pre { background: var(--soft); border: 1px solid var(--line); padding: .6rem .8rem;
  overflow: auto; max-height: 28rem; white-space: pre-wrap; word-break: break-all; }
.about { color: var(--dim); margin: 0 0 .2rem; }
.verdict { margin: .6rem 0 1rem; padding: .5rem .8rem; border-left: 4px solid var(--dim);
  background: var(--soft); }
.verdict.failed { border-color: var(--failed-edge); background: var(--failed); }
.verdict a { color: inherit; }
table.timeline { border-collapse: collapse; width: 100%; table-layout: auto; }
table.timeline th { position: sticky; top: 0; background: #fff; text-align: left;
  font-weight: 600; border-bottom: 2px solid var(--line); padding: .25rem .4rem; z-index: 1; }
table.timeline td { border-bottom: 1px solid var(--line); padding: .2rem .4rem;
  vertical-align: top; overflow-wrap: anywhere; }
td.n, td.at, td.open { white-space: nowrap; color: var(--dim); word-break: normal; }
td.n { text-align: right; }
td.at .bar { display: block; height: 3px; background: #9aa4b2; margin-top: 2px;
  min-width: 1px; }
td.event .head { font-weight: 600; }
td.event .excerpt { color: var(--dim); }
tr.row-passed td, tr.row-directive td { color: var(--dim); }
tr.row-passed td.event .head, tr.row-directive td.event .head { font-weight: 400; }
tr.row-end td { border-top: 2px solid var(--line); }
tr.row-failed td { background: var(--failed); }
tr.row-failed td:first-child { box-shadow: inset 4px 0 var(--failed-edge); }
tr.row-differs td { background: var(--differs); }
td.mark { text-align: center; font-weight: 700; }
tr.row-differs td.mark { color: var(--failed-edge); }
tr.fold td { background: var(--fold); color: var(--dim); font-style: italic; }
tr.fold summary { cursor: pointer; }
tr.fold table { margin: .3rem 0 .2rem 1rem; font-style: normal; }
.emit { display: inline-block; border-radius: 3px; padding: 0 .3rem; margin: 0 .2rem .1rem 0; }
.emit-text { background: var(--text-emit); }
.emit-tool_call { background: var(--call-emit); }
.emit-done { background: var(--done-emit); font-weight: 600; }
.failure { display: block; margin-top: .15rem; }
.code { font-weight: 700; color: var(--failed-edge); }
.rule { color: var(--text); }
td.grows { white-space: pre-wrap; }
.growth { display: block; }
.growth .label { color: var(--dim); }
.growth mark { background: #fff1a8; }
.growth .parsed { background: var(--call-emit); }
.nl { color: var(--dim); }
section.lanes { display: flex; flex-wrap: wrap; gap: .6rem; }
div.lane { border: 1px solid var(--line); border-radius: 4px; padding: .4rem .6rem;
  min-width: 16rem; max-width: 40rem; flex: 1 1 20rem; background: #fff; }
div.lane.lane-failed { border-color: var(--failed-edge); background: var(--failed); }
div.lane .lane-head { font-weight: 600; word-break: break-all; }
div.lane .lane-json { margin: .3rem 0; max-height: 12rem; }
div.lane .lane-parsed { max-height: 8rem; overflow: auto; }
div.lane .lane-json .piece:nth-child(even) { background: #dde3ec; }
div.lane .lane-parsed { margin: 0; }
section.text pre .piece:nth-child(even) { background: #dde3ec; }
.note { color: var(--dim); font-style: italic; }
table.summary { border-collapse: collapse; margin: .4rem 0 1rem; width: 100%; }
table.summary th, table.summary td { border-bottom: 1px solid var(--line); padding: .2rem .6rem;
  text-align: left; vertical-align: top; overflow-wrap: anywhere; }
tr.unexpected td { background: var(--failed); }
details.stream { border: 1px solid var(--line); border-radius: 4px; margin: .5rem 0;
  padding: .3rem .6rem; }
details.stream > summary { cursor: pointer; font-weight: 600; }
section.turn { border-top: 3px solid var(--line); margin-top: 1.6rem; }
.sides { display: grid; grid-template-columns: 1fr 1fr; gap: 1rem; }
.sides pre .differs { background: var(--differs); box-shadow: inset 4px 0 var(--failed-edge); }
footer { margin-top: 2rem; color: var(--dim); font-size: 12px; }
"""
)

#: C0 and C1 controls but tab and line feed, bidi controls, lone surrogates: their
#: escape (`\\u001b`), as the terminal shows them (`harness._terminal.printable`).
_KEPT: Final = "\t\n"


def escape(text: object) -> str:
    """`text` (`str()` of any value) safe inside an HTML element or a quoted attribute:
    `& < > " '` as entities, and controls, bidi overrides and lone surrogates as their
    `\\uXXXX` escape, so nothing a cassette holds is markup, reorders the page, or
    fails the UTF-8 write."""
    return _entities(printable(str(text), keep=_KEPT), quote=True)


def cut(text: str, width: int) -> str:
    """`text` in at most `width` characters, an ellipsis marking the cut: a row's cell
    costs the same however long the cassette's text is."""
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


_SCRIPT_UNSAFE: Final = str.maketrans(
    {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
)


def script_json(value: Any) -> str:
    """`value` as JSON safe inside `<script type="application/json">`: `<`, `>`, `&` and
    the line and paragraph separators as `\\u` escapes (which JSON reads back the same),
    so no `</script>` or `<!--` can close or bend the block."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False).translate(_SCRIPT_UNSAFE)


def document(title: str, body: str, *, style: str = STYLE, drawn: bool = True) -> str:
    """A whole page: `title` (plain text, escaped here) and `body` (markup already made
    of escaped text), with `style` and the policy that lets it fetch nothing; `drawn`:
    the footer that says a trace's rows are the adapter's."""
    footer = (
        f"<footer>Drawn by <code>harness view</code> (stream-harness {escape(__version__)}),"
        " from the harness's own trace: every row is what the adapter did at that line."
        "</footer>\n"
        if drawn
        else ""
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        '<meta name="referrer" content="no-referrer">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f'<meta name="generator" content="harness view {escape(__version__)}">\n'
        f"<title>{escape(title)}</title>\n<style>{style}</style>\n</head>\n<body>\n"
        f"{body}\n{footer}</body>\n</html>\n"
    )


def write_page(html: str, out: str | os.PathLike[str]) -> None:
    """Write a page to `out`, atomically: the old file stays until the new one is whole.
    `OutputError` (`PATH: cannot write: reason`) when it cannot be written."""
    try:
        with atomic_write(out) as handle:
            handle.write(html.encode("utf-8"))
    except OSError as error:
        raise OutputError(f"{os.fspath(out)}: cannot write: {error.strerror or error}") from None
