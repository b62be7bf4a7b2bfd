"""A session folder drawn: its turns one after another, each with what the code sent.

A session folder (`harness._cassette.sessions`) holds a cassette a response, in turn
order. Each turn is drawn as a stream is (`harness._view.stream`, its ids prefixed
`turn-N-`, a smaller row budget, so a long session stays bounded), under what the code
sent for it: the `request` its header keeps (the conversation so far in its API's
shape, Messages' and Chat's `messages`, Responses' `input`), and of that, what was sent
back since the turn before: the items added to the conversation (the assistant's tool
calls, the tool results). A turn the SDK retries through (a 429 before the answer it
plays, `harness._replay.calls`) is marked so. An agent session's `session.json` (its
prompt, system, tools) stands first.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Final

from harness._cassette.codec import Cassette
from harness._cassette.sessions import SESSION_FILE, TURN_PATTERN, turn_files
from harness._exceptions import InputError
from harness._replay.calls import Call, played
from harness._terminal import json_text
from harness._view.page import cut, document, escape
from harness._view.stream import stream_section

__all__ = ["SessionPage", "session_page"]

#: Timeline rows a turn draws before it keeps only its last ones.
TURN_BUDGET: Final = 400
#: Characters of a request (or `session.json`) a turn shows.
REQUEST_SHOWN: Final = 20_000
#: The request's field holding the conversation, by what it is named in each API.
CONVERSATION: Final = ("messages", "input")


class SessionPage:
    """The page and what the command says of it."""

    def __init__(self, html: str, turns: int, summary: str) -> None:
        self.html = html
        self.turns = turns
        self.summary = summary


def _pretty(value: Any) -> str:
    return cut(json_text(value, indent=2), REQUEST_SHOWN)


def _conversation(request: Any) -> tuple[str, list[Any]] | None:
    """The request's conversation field and its items, if it has one."""
    if not isinstance(request, dict):
        return None
    for name in CONVERSATION:
        items = request.get(name)
        if isinstance(items, list):
            return name, items
        if isinstance(items, str):
            return name, [items]
    return None


def _sent(request: Any, before: Any) -> str:
    """What the code sent for this turn: the items added since the turn before, and the
    whole request under a fold."""
    if request is None:
        return '<p class="note">This turn\'s cassette keeps no request.</p>'
    parts = []
    now, then = _conversation(request), _conversation(before)
    if now is not None:
        name, items = now
        if then is not None and then[0] == name and items[: len(then[1])] == then[1]:
            added = items[len(then[1]) :]
            what = (
                f"sent back since the turn before: {len(added)} new item(s) of <code>{name}</code>"
            )
        else:
            added = items
            what = f"the conversation sent: <code>{name}</code>, {len(items)} item(s)"
        parts.append(f'<p class="about">{what}</p><pre class="sent">{escape(_pretty(added))}</pre>')
    parts.append(
        f'<details class="request"><summary>the whole request</summary>'
        f"<pre>{escape(_pretty(request))}</pre></details>"
    )
    return "".join(parts)


def _settings(folder: Path) -> str:
    path = folder / SESSION_FILE
    if not path.is_file():
        return ""
    try:
        settings = json.loads(path.read_text(encoding="utf-8"))
        shown = _pretty(settings)
    except (OSError, ValueError, RecursionError) as error:
        return f'<p class="note">{escape(SESSION_FILE)}: cannot read: {escape(error)}</p>'
    return f"<h2>The session: <code>{escape(SESSION_FILE)}</code></h2><pre>{escape(shown)}</pre>"


def session_page(folder: str | os.PathLike[str], *, title: str | None = None) -> SessionPage:
    """The page of a session folder. Raises `CassetteError` for an unusable turn,
    `InputError` for a folder without turns."""
    root = Path(folder)
    try:
        turns = turn_files(root)
    except OSError as error:
        raise InputError(f"{os.fspath(root)}: cannot read: {error.strerror or error}") from None
    if not turns:
        raise InputError(f"{os.fspath(root)}: no {TURN_PATTERN} file in this folder")
    retried = {
        path
        for call in played([str(turn) for turn in turns])
        if isinstance(call, Call)
        for path in call.retried
    }
    heading = title if title is not None else f"{root.name}: a session of {len(turns)} turns"
    parts = [f"<h1>{escape(heading)}</h1>", _settings(root)]
    outcomes = []
    before: Any = None
    for number, turn in enumerate(turns, start=1):
        cassette = Cassette(turn)
        request = (cassette.header or {}).get("request")
        note = (
            " (an answer the SDK retries: the next turn answers the same call)"
            if str(turn) in retried
            else ""
        )
        section = stream_section(cassette, anchor=f"turn-{number}-", budget=TURN_BUDGET, level=4)
        outcomes.append(section.outcome)
        parts.append(
            f'<section class="turn" id="turn-{number}"><h2>Turn {number}: '
            f"<code>{escape(turn.name)}</code>{escape(note)}</h2>"
            f"<h3>What the code sent</h3>{_sent(request, before)}"
            f"<h3>What came back</h3>{section.html}</section>"
        )
        if request is not None:
            before = request
    summary = f"{len(turns)} turns, ending in " + ", ".join(outcomes)
    parts.insert(2, f'<p class="verdict">{escape(summary)}</p>')
    return SessionPage(document(f"{heading} · harness view", "".join(parts)), len(turns), summary)
