"""Session replay: a whole multi-turn conversation, offline, from a folder of cassettes.

A session folder holds `session.json` (`{"system", "prompt", "tools", "max_turns"}`) and
one cassette per model turn, `turn-01.jsonl`, `turn-02.jsonl`, ... `ReplayModelClient`
serves the turns in order (by turn number: `turn-100` after `turn-99`) through the real
adapter of each turn's provider (its header's `provider`, through the registry): an
Anthropic turn fed with the SDK's own event objects, an OpenAI one with its lines' dicts
(`harness._replay.direct`), and keeps every request it receives so a test can assert
what the loop sent back. Two replay directives act on the loop:

- `{"harness": "abort"}` sets the abort signal when replay reaches that line;
- `{"harness": "hang"}` makes the stream wait, deaf to the signal, until the task
  consuming it is cancelled: a non-cooperative stream.

The other directives are carried out as direct replay does (`http_error`, `cut`) or
passed over (`stall`; `at`, the offsets `harness record` and `harness proxy` write,
unless `realtime`, which then waits until each event's recorded offset from the turn's
request, without holding up the event loop).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness._cassette.codec import Cassette
from harness._cassette.sessions import (
    SESSION_FILE,
    TURN_PATTERN,
    turn_files,
    turn_number,
    turn_path,
)
from harness._directives import ABORT, HANG
from harness._events import ModelEvent
from harness._exceptions import ReplayError, SessionError
from harness._files import atomic_write
from harness._providers import provider
from harness._replay.calls import Call, played
from harness._replay.plan import DEFAULT_READ_TIMEOUT
from harness.agent.client import ModelRequest
from harness.agent.loop import AgentResult, run_agent
from harness.agent.signal import AbortController
from harness.agent.tools import TOOL_FACTORIES
from harness.builder import StreamBuilder

__all__ = [
    "ReplayError",
    "ReplayModelClient",
    "Session",
    "SessionError",
    "load_session",
    "replay_session",
    "write_session",
]

#: key -> (Python type, how an error message names it)
SESSION_KEYS: dict[str, tuple[type, str]] = {
    "system": (str, "a string"),
    "prompt": (str, "a string"),
    "tools": (list, "a list of tool names"),
    "max_turns": (int, "an integer"),
}


@dataclass(frozen=True, slots=True)
class Session:
    folder: Path
    system: str
    prompt: str
    tools: tuple[str, ...]
    max_turns: int
    turns: tuple[Path, ...]


def load_session(folder: str | os.PathLike[str]) -> Session:
    """Read and check a session folder; its turn cassettes are validated line by line.

    Raises `SessionError` for the folder and `session.json`, `CassetteError` for a turn.
    """
    root = Path(folder)
    config_path = root / SESSION_FILE
    config = _read_config(config_path)
    turns = _turn_files(root)
    for turn in turns:
        Cassette(turn).validate()
    tools = tuple(config.get("tools", []))
    for name in tools:
        if not isinstance(name, str) or name not in TOOL_FACTORIES:
            known = ", ".join(sorted(TOOL_FACTORIES))
            raise SessionError(f"{config_path}: unknown tool {name!r} (known: {known})")
    max_turns = config.get("max_turns", len(turns))
    if max_turns < 1:
        raise SessionError(f"{config_path}: max_turns must be at least 1")
    return Session(root, config.get("system", ""), config["prompt"], tools, max_turns, turns)


def write_session(
    folder: str | os.PathLike[str],
    turns: Sequence[tuple[str, StreamBuilder]],
    *,
    prompt: str,
    system: str = "",
    tools: Sequence[str] = ("read",),
    max_turns: int | None = None,
) -> Path:
    """Write a session folder: `session.json`, then one cassette per (description, turn)."""
    root = Path(folder)
    root.mkdir(parents=True, exist_ok=True)
    config = {
        "system": system,
        "prompt": prompt,
        "tools": list(tools),
        "max_turns": len(turns) if max_turns is None else max_turns,
    }
    with atomic_write(root / SESSION_FILE) as handle:
        handle.write((json.dumps(config, indent=2, ensure_ascii=False) + "\n").encode())
    for number, (description, builder) in enumerate(turns, start=1):
        builder.write(turn_path(root, number), description)
    return root


def _read_config(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise SessionError(f"{path}: cannot read: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise SessionError(f"{path}: not UTF-8 text") from None
    try:
        config = json.loads(text)
    except ValueError as error:
        raise SessionError(f"{path}: not valid JSON: {error}") from None
    except RecursionError:
        raise SessionError(f"{path}: not valid JSON: nested too deeply") from None
    if not isinstance(config, dict):
        raise SessionError(f"{path}: expected a JSON object")
    for key, value in config.items():
        expected = SESSION_KEYS.get(key)
        if expected is None:
            raise SessionError(f"{path}: unknown key {key!r} (keys: {', '.join(SESSION_KEYS)})")
        kind, described = expected
        if not isinstance(value, kind) or isinstance(value, bool):
            raise SessionError(f"{path}: {key!r} must be {described}")
    if "prompt" not in config:
        raise SessionError(f"{path}: 'prompt' is required")
    return config


def _turn_files(root: Path) -> tuple[Path, ...]:
    """The turn cassettes in turn order, numbered 1, 2, 3... without a gap."""
    try:
        found = turn_files(root)
    except OSError as error:
        raise SessionError(f"{root}: cannot read: {error.strerror or error}") from None
    if not found:
        raise SessionError(f"{root}: no {TURN_PATTERN} cassettes")
    for expected, path in enumerate(found, start=1):
        if turn_number(path.name) != expected:
            raise SessionError(f"{path}: expected turn number {expected} here ({TURN_PATTERN})")
    return tuple(found)


class ReplayModelClient:
    """A `ModelClient` serving recorded turns in order, recording the requests it gets.

    A request is answered as the SDK's client would be: an answer it retries (a 429
    turn, `harness._replay.calls`) is passed over for the turn after it."""

    def __init__(
        self,
        turns: Sequence[str | os.PathLike[str]],
        controller: AbortController | None = None,
        *,
        realtime: bool = False,
    ) -> None:
        self.turns = [Path(turn) for turn in turns]
        #: each request's turn (the last of its call: the answers before it are retried)
        self._answers = [
            Path(call.played if isinstance(call, Call) else call)
            for call in played([os.fspath(turn) for turn in self.turns])
        ]
        self.controller = controller
        self.realtime = realtime
        self.requests: list[ModelRequest] = []

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        self.requests.append(request)
        number = len(self.requests)
        if number > len(self._answers):
            raise ReplayError(
                f"the loop asked for turn {number}, but the session has "
                f"{len(self._answers)} recorded turn(s)"
            )
        path = self._answers[number - 1]
        cassette = Cassette(path)
        return provider(cassette.provider).ato_model_events(self._turn_items(cassette))

    def check_finished(self) -> None:
        """Raise `ReplayError` if some recorded turns were never asked for."""
        unplayed = self._answers[len(self.requests) :]
        if unplayed:
            names = ", ".join(path.name for path in unplayed)
            raise ReplayError(f"{len(unplayed)} recorded turn(s) left unplayed: {names}")

    async def _turn_items(self, cassette: Cassette) -> AsyncIterator[Any]:
        """What the turn's adapter reads (an Anthropic turn's SDK event objects, an OpenAI
        turn's dicts), one per loop iteration, acting on directives."""
        from harness._replay.direct import aprovider_items

        path = cassette.path
        hang = False

        def on_directive(directive: dict[str, Any]) -> None:
            nonlocal hang
            name = directive["harness"]
            if name == HANG:
                hang = True
            elif name == ABORT:
                if self.controller is None:
                    raise ReplayError(f"{path}: an abort directive needs a controller")
                self.controller.abort(f"{path}: abort directive")
            # any other directive is carried out or passed over by `asdk_events`

        items = aprovider_items(
            cassette, on_directive, DEFAULT_READ_TIMEOUT, realtime=self.realtime
        )
        async for event in items:
            if hang:
                await asyncio.Event().wait()  # deaf to the signal; only cancellation ends it
            await asyncio.sleep(0)  # a real stream yields to the event loop between events
            yield event
        if hang:
            await asyncio.Event().wait()


async def replay_session(
    session: Session, root: str | os.PathLike[str], *, realtime: bool = False
) -> tuple[AgentResult, ReplayModelClient]:
    """Run the loop over a session with real tools under `root`; `realtime` paces each
    turn's events at their recorded `at` offsets.

    Raises `AgentFailed` when a turn fails, `ReplayError` (directly or as the cause of
    `AgentFailed`) when the loop and the recording disagree.
    """
    controller = AbortController()
    client = ReplayModelClient(session.turns, controller, realtime=realtime)
    tools = [TOOL_FACTORIES[name](root) for name in session.tools]
    result = await run_agent(
        client,
        prompt=session.prompt,
        tools=tools,
        system=session.system,
        max_turns=session.max_turns,
        signal=controller.signal,
    )
    if result.stop_reason != "aborted":
        client.check_finished()
    return result, client
