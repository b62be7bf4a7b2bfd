"""Session folders: one cassette a turn, named and ordered in this one place.

A session folder holds one cassette per response, `turn-01.jsonl`, `turn-02.jsonl`, ...
(agent sessions add a `session.json`, `SESSION_FILE`). Every writer names its turns with
`turn_path` (two digits at least: `turn-01` .. `turn-99`, then `turn-100`), and every reader orders
them with `turn_files`, by turn number, never by name: `turn-100` comes after `turn-99`,
and folders written with another width (`turn-1`, `turn-0001`, as the proxy of 0.1 did)
read the same. `write_session_variant` copies a session with one turn replaced by other
responses (`harness faults FOLDER --turn N`), all its files at once or none.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Final

from harness._cassette.codec import write_cassette
from harness._files import AtomicBatch

__all__ = [
    "SESSION_FILE",
    "TURN_PATTERN",
    "is_session_folder",
    "last_turn",
    "turn_files",
    "turn_name",
    "turn_number",
    "turn_path",
    "write_session_variant",
    "write_turns",
]

#: An agent session's settings, beside its turns (`harness.agent.session`).
SESSION_FILE: Final = "session.json"

#: What a turn's file name looks like, as messages say it.
TURN_PATTERN: Final = "turn-NN.jsonl"
_TURN: Final = re.compile(r"turn-(\d+)\.jsonl")


def turn_name(number: int) -> str:
    """The file name of turn `number` (1-based): `turn-01.jsonl`."""
    if number < 1:
        raise ValueError(f"turns are numbered from 1, not {number}")
    return f"turn-{number:02d}.jsonl"


def turn_path(folder: str | os.PathLike[str], number: int) -> Path:
    """Where turn `number` of the session `folder` is written."""
    return Path(folder) / turn_name(number)


def turn_number(name: str) -> int | None:
    """The turn number a file name carries (any width), or None for any other name."""
    match = _TURN.fullmatch(name)
    return int(match.group(1)) if match else None


def turn_files(folder: str | os.PathLike[str]) -> list[Path]:
    """The folder's turn cassettes in turn order (by number; a tie, by name); [] for none.

    A folder that cannot be listed raises its `OSError`.
    """
    numbered = sorted(
        (number, name) for name in _names(folder) if (number := turn_number(name)) is not None
    )
    return [Path(folder) / name for _, name in numbered]


def _names(folder: str | os.PathLike[str]) -> list[str]:
    with os.scandir(folder) as entries:
        return [entry.name for entry in entries]


def is_session_folder(path: str | os.PathLike[str]) -> bool:
    """Whether `path` is a folder holding at least one turn cassette."""
    try:
        return os.path.isdir(path) and any(turn_number(name) is not None for name in _names(path))
    except OSError:
        return False


def last_turn(folder: str | os.PathLike[str]) -> int:
    """The highest turn number already in `folder` (0 for none, or no folder yet)."""
    try:
        return max((turn_number(name) or 0 for name in _names(folder)), default=0)
    except OSError:
        return 0


def write_turns(
    folder: str | os.PathLike[str],
    turns: Iterable[Iterable[dict[str, Any]]],
    *,
    header: dict[str, Any] | None = None,
) -> list[Path]:
    """Write a session folder (created if missing): one cassette a turn, from turn 1, each
    atomically with the same header; return the paths written."""
    os.makedirs(folder, exist_ok=True)
    paths = []
    for number, lines in enumerate(turns, start=1):
        path = turn_path(folder, number)
        write_cassette(path, lines, header=header)
        paths.append(path)
    return paths


def write_session_variant(
    folder: str | os.PathLike[str],
    session: str | os.PathLike[str],
    turn: int,
    responses: Sequence[Iterable[dict[str, Any]]],
    *,
    header: dict[str, Any],
) -> list[Path]:
    """Write into `folder` (created if missing) the session folder `session` with its turn
    `turn` (1-based, in turn order) replaced by `responses`, each a cassette with `header`:
    the turns before and after it copied byte for byte (those after renumbered when
    `responses` are more than one), and its `SESSION_FILE` if it has one. Every file
    is replaced at once or none is (`AtomicBatch`); turns of `folder` past the last
    written are then removed, so it holds this session alone. Returns the turns written."""
    turns = turn_files(session)
    if not 1 <= turn <= len(turns):
        raise ValueError(f"{session}: no turn {turn} among its {len(turns)}")
    os.makedirs(folder, exist_ok=True)
    written: list[Path] = []
    with AtomicBatch() as batch:
        for path in turns[: turn - 1]:
            written.append(_copy(path, turn_path(folder, len(written) + 1), batch))
        for lines in responses:
            written.append(turn_path(folder, len(written) + 1))
            write_cassette(written[-1], lines, header=header, batch=batch)
        for path in turns[turn:]:
            written.append(_copy(path, turn_path(folder, len(written) + 1), batch))
        settings = Path(session) / SESSION_FILE
        if settings.is_file():
            _copy(settings, Path(folder) / SESSION_FILE, batch)
        batch.commit()
    for stale in turn_files(folder)[len(written) :]:
        stale.unlink()
    return written


def _copy(source: Path, target: Path, batch: AtomicBatch) -> Path:
    with batch.write(target) as handle:
        handle.write(source.read_bytes())
    return target
