"""Cassettes read once a session: parsed, checked and SSE-encoded, kept while unchanged.

The cassette clients, the plugin's client fixtures and `harness serve` answer from the
same small cassettes again and again (every retry, every test of a session), so each
file is read, validated and encoded once: `kept(path)` keeps its `KeptCassette`,
keyed by the path as given (and the folder it was given from), and checks at each call
that the file's size, modification time and inode are still those it was read with; a
file rewritten (a re-recording) is read afresh. Memory is bounded: the cache holds
cassettes of at most `MAX_CACHED_BYTES` of files in all, the least recently used going
first. Standard input and other streams are never cached (they are read once anyway).
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from stat import S_ISREG
from typing import Final

from harness._cassette.codec import STDIN, Cassette, CassetteSource, KeptCassette
from harness._replay.replayer import cassettes_from

__all__ = ["MAX_CACHED_BYTES", "clear", "kept", "kept_cassettes"]

#: The most file bytes the cache holds cassettes of.
MAX_CACHED_BYTES: Final = 256 * 1024 * 1024


#: (the path as given, the folder it was given from) -> (file identity, the cassette)
_cache: OrderedDict[tuple[str, str], tuple[tuple[int, int, int, int], KeptCassette]] = OrderedDict()
_cached_bytes = 0
_lock = threading.Lock()


def clear() -> None:
    """Forget every cassette kept."""
    global _cached_bytes
    with _lock:
        _cache.clear()
        _cached_bytes = 0


def kept(path: str | os.PathLike[str]) -> KeptCassette:
    """The `KeptCassette` of a path, from the cache while the file is unchanged; a
    `CassetteError` for a bad one, raised at each call (never kept)."""
    given = os.fspath(path)
    found = _kept_file(given)
    return found if found is not None else KeptCassette(given)  # a stream: read once


def _kept_file(given: str) -> KeptCassette | None:
    """`kept` for a regular file (or one that cannot be looked at, which says why when
    read); None for standard input and anything else read once. One `stat` a call."""
    global _cached_bytes
    if given == STDIN:
        return None
    try:
        status = os.stat(given)
    except OSError:
        return KeptCassette(given)  # it says why it cannot be read
    if not S_ISREG(status.st_mode):
        return None
    identity = (status.st_size, status.st_mtime_ns, status.st_ino, status.st_dev)
    key = (given, os.getcwd())
    with _lock:
        found = _cache.get(key)
        if found is not None and found[0] == identity:
            _cache.move_to_end(key)
            return found[1]
    cassette = KeptCassette(given)
    with _lock:
        previous = _cache.pop(key, None)
        if previous is not None:
            _cached_bytes -= previous[0][0]
        if identity[0] <= MAX_CACHED_BYTES:
            _cache[key] = (identity, cassette)
            _cached_bytes += identity[0]
        while _cached_bytes > MAX_CACHED_BYTES:
            _, (evicted, _) = _cache.popitem(last=False)
            _cached_bytes -= evicted[0]
    return cassette


def kept_cassettes(sources: Sequence[CassetteSource]) -> list[Cassette]:
    """`cassettes_from` (folders and session folders expanded, in answer order): each path
    from the cache; a `Cassette` given, kept as it is read through itself, and a stream
    (`-`), read once, each kept once however often it is named."""
    once: dict[object, Cassette] = {}

    def keep(source: CassetteSource) -> Cassette:
        if not isinstance(source, Cassette):
            file = _kept_file(os.fspath(source))
            if file is not None:
                return file
        key = source if isinstance(source, Cassette) else os.fspath(source)
        if key not in once:
            once[key] = source if isinstance(source, KeptCassette) else KeptCassette(source)
        return once[key]

    return cassettes_from(sources, keep)
