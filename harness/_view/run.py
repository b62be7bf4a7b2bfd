"""A run drawn: a folder of cassettes, each one's outcome in a table, its timeline below.

What `harness view` calls a run is a folder of cassettes that is not a session folder:
the broken variants a fault run leaves, the pytest plugin's (`fault_variant` writes one
a catalogue row under `.pytest_cache/d/stream-harness-variants/<test id>/`, or the
folder `--harness-variants-dir` names) or `harness faults --out`'s, and any folder of
cassettes (`cassettes/errors/`). Every `*.jsonl` below it, sorted, is a row of the
table: its path, the fault that made it (its header's `fault`), the outcome it says it
replays to (`expect`, or an `errors/` file's name: `harness._testing.rules.declared`),
the outcome it replays to, and whether the two agree (a session variant's turns are one
call, as `harness replay` plays them: a 429 the SDK retries, then the turn it plays,
`harness._replay.calls`); each links to its stream, drawn
under the table in a `<details>` (closed) as a stream page draws it. Bounded as the
rest: each stream's timeline draws at most `STREAM_BUDGET` rows, and the first
`STREAMS_DRAWN` cassettes are drawn (every one is in the table).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

from harness._cassette.codec import Cassette
from harness._exceptions import InputError
from harness._replay.calls import Call, played
from harness._view.page import document, escape
from harness._view.stream import StreamSection, stream_section

__all__ = ["RunPage", "run_page"]

#: Timeline rows a cassette of a run draws before it keeps only its last ones.
STREAM_BUDGET: Final = 100
#: Cassettes whose stream a run page draws (the table lists them all).
STREAMS_DRAWN: Final = 100


class RunPage:
    """The page and what the command says of it."""

    def __init__(self, html: str, cassettes: int, summary: str) -> None:
        self.html = html
        self.cassettes = cassettes
        self.summary = summary


def _row(number: int, name: str, cassette: Cassette, section: StreamSection, drawn: bool) -> str:
    fault = (cassette.header or {}).get("fault")
    expected = section.expected
    agrees = expected is None or expected == section.outcome
    classes = "run-row" if agrees else "run-row unexpected"
    link = f'<a href="#c-{number}">{escape(name)}</a>' if drawn else escape(name)
    verdict = "" if expected is None else ("yes" if agrees else "NO")
    return (
        f'<tr class="{classes}"><td>{link}</td>'
        f"<td><code>{escape(fault if isinstance(fault, str) else '')}</code></td>"
        f"<td><code>{escape(expected or '')}</code></td>"
        f'<td class="outcome"><code>{escape(section.outcome)}</code></td>'
        f"<td>{escape(verdict)}</td><td>{escape(section.summary)}</td></tr>"
    )


def run_page(folder: str | os.PathLike[str], *, title: str | None = None) -> RunPage:
    """The page of a folder of cassettes. Raises `CassetteError` for an unusable one,
    `InputError` for a folder holding none."""
    root = Path(folder)
    paths = sorted(path for path in root.rglob("*.jsonl") if not path.is_dir())
    if not paths:
        raise InputError(f"{os.fspath(root)}: no cassette (*.jsonl) in this folder")
    rows, streams, unexpected = [], [], 0
    calls = played([str(path) for path in paths])
    for number, call in enumerate(calls, start=1):
        path = Path(call.played if isinstance(call, Call) else call)
        name = path.relative_to(root).as_posix()
        if isinstance(call, Call):
            retried = ", ".join(Path(turn).name for turn in call.retried)
            name += f" (after {retried}, answers the SDK retries)"
        cassette = Cassette(path)
        drawn = number <= STREAMS_DRAWN
        section = stream_section(cassette, anchor=f"c-{number}-", budget=STREAM_BUDGET, level=3)
        unexpected += section.expected is not None and section.expected != section.outcome
        rows.append(_row(number, name, cassette, section, drawn))
        if drawn:
            streams.append(
                f'<details class="stream" id="c-{number}"><summary>{escape(name)}: '
                f"<code>{escape(section.outcome)}</code></summary>{section.html}</details>"
            )
    heading = title if title is not None else f"{root.name}: {len(calls)} cassettes"
    summary = f"{len(calls)} cassettes, {unexpected} not as expected"
    failed = " failed" if unexpected else ""
    more = ""
    if len(calls) > STREAMS_DRAWN:
        more = (
            f'<p class="note">The first {STREAMS_DRAWN} streams are drawn below; '
            "harness view PATH draws any one of them.</p>"
        )
    body = (
        f"<h1>{escape(heading)}</h1>"
        f'<p class="verdict{failed}">{escape(summary)}.</p>'
        '<table class="summary run"><thead><tr><th>cassette</th><th>fault</th>'
        "<th>expected</th><th>outcome</th><th>agrees</th><th>stream</th></tr></thead><tbody>"
        + "".join(rows)
        + f"</tbody></table><h2>The streams</h2>{more}"
        + "".join(streams)
    )
    return RunPage(document(f"{heading} · harness view", body), len(calls), summary)
