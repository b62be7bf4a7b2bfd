"""The calls a list of cassettes is played as: one a file, but an answer the SDK retries
goes with the turn after it.

A session folder (`harness._cassette.sessions`) is the answers of one request after
another. The SDK makes each request once and retries an answer it retries by status
(408, 409, 429, 5xx) or by its `x-should-retry` header, at most `SDK_ATTEMPTS - 1`
times, each retry answered by the next turn: so a 429 turn is no outcome of its own, it
is the first attempt of the call that plays the turn after it (`http_429_then_ok`, and
a session `harness faults FOLDER --turn N` breaks with it). `played(paths)` says what
`harness replay` and `harness coverage` play, so the two read a folder the same way:
each file a call of its own, but turns of one folder folded into the `Call` that
retries through them. `call_events` plays a call, directly or through a cassette
client with the SDK's own retries.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Final

from harness._cassette.codec import Cassette
from harness._cassette.sessions import turn_number
from harness._directives import HTTP_ERROR
from harness._events import ModelEvent
from harness._exceptions import CassetteError

__all__ = ["SDK_ATTEMPTS", "Call", "call_events", "played", "retried_turns"]

#: Attempts the SDK makes by default (1 + its `max_retries` of 2).
SDK_ATTEMPTS: Final = 3
#: Statuses the SDK retries on its own (with no `x-should-retry` header saying otherwise).
_RETRIED_STATUSES: Final = frozenset({408, 409, 429})


@dataclass(frozen=True, slots=True)
class Call:
    """One request over a session folder's turns: the answers the SDK retries through,
    then the turn whose stream it plays (what the call comes to)."""

    retried: tuple[str, ...]
    played: str

    @property
    def turns(self) -> tuple[str, ...]:
        return (*self.retried, self.played)


def _retried(turn: Cassette | str) -> bool:
    """Whether the SDK would retry a turn's answer: an `http_error` it retries by status,
    or whose `x-should-retry` header says so. An unusable turn is not: played on its own,
    it reports why."""
    try:
        for line in (turn if isinstance(turn, Cassette) else Cassette(turn)).lines():
            if line.kind == "event":
                return False
            if line.data["harness"] == HTTP_ERROR:
                should = str(line.data.get("headers", {}).get("x-should-retry", "")).lower()
                if should in ("true", "false"):
                    return should == "true"
                status = int(line.data["status"])
                return status in _RETRIED_STATUSES or status >= 500
    except CassetteError:
        return False
    return False


def retried_turns(turns: Sequence[Cassette | str]) -> int:
    """How many of the first `turns` the SDK retries through in one call (at most its
    `SDK_ATTEMPTS - 1`, never the last turn): the turn it plays is the next one."""
    retried = 0
    while retried < min(len(turns) - 1, SDK_ATTEMPTS - 1) and _retried(turns[retried]):
        retried += 1
    return retried


def played(paths: Sequence[str]) -> list[str | Call]:
    """What is played of `paths` (files, as `expand_paths` gives them), in order: each
    file, but a run of turns of one session folder grouped into `Call`s where the SDK
    retries an answer (a call with nothing retried is its turn's path, as any file)."""
    found: list[str | Call] = []
    run: list[str] = []

    def close_run() -> None:
        run.sort(key=lambda path: turn_number(os.path.basename(path)) or 0)
        start = 0
        while start < len(run):
            retried = retried_turns(run[start:])
            upto = start + retried
            found.append(Call(tuple(run[start:upto]), run[upto]) if retried else run[upto])
            start = upto + 1
        run.clear()

    for path in paths:
        if run and (not _is_turn(path) or os.path.dirname(path) != os.path.dirname(run[0])):
            close_run()
        if _is_turn(path):
            run.append(path)
        else:
            found.append(path)
    if run:
        close_run()
    return found


def _is_turn(path: str) -> bool:
    return turn_number(os.path.basename(path)) is not None and os.path.isfile(path)


def call_events(call: Call, *, via: str, read_timeout: float | None) -> Iterator[ModelEvent]:
    """The internal events of `call`, as the SDK plays it: through a cassette client with
    its own retries (`via="sdk"`, its provider's `create` reader), or directly, the
    answers it would retry passed over."""
    from harness._replay.clients import cassette_client
    from harness._replay.direct import replay
    from harness._replay.readers import client_events

    if via != "sdk":
        yield from replay(call.played, sdk_objects=False, read_timeout=read_timeout)
        return
    client = cassette_client(list(call.turns), match_on=None, timeout=read_timeout)
    try:
        yield from client_events(client, Cassette(call.played).provider)
    finally:
        client.close()
