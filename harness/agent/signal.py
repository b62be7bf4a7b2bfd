"""A small abort signal, after the web's `AbortController` / `AbortSignal`.

The controller sets the signal once; whoever holds the signal may poll `.aborted` (the
agent loop does, at its checkpoints) or register a listener (a model client does, to
close its stream at once). Cheap, synchronous, no SDK: setting it never waits.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["AbortController", "AbortSignal"]

Listener = Callable[[], None]


class AbortSignal:
    """Read side: `.aborted` and `.reason`; listeners run once, when the controller aborts."""

    __slots__ = ("_listeners", "aborted", "reason")

    def __init__(self) -> None:
        self.aborted = False
        self.reason = ""
        self._listeners: list[Listener] = []

    def on_abort(self, listener: Listener) -> Callable[[], None]:
        """Call `listener` on abort (at once if already aborted); returns an unsubscribe."""
        if self.aborted:
            listener()
            return _nothing
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def _abort(self, reason: str) -> None:
        if self.aborted:
            return
        self.aborted = True
        self.reason = reason
        listeners, self._listeners = self._listeners, []
        for listener in listeners:
            listener()


def _nothing() -> None:
    """Unsubscribe for a listener that already ran."""


class AbortController:
    """Write side: owns one `signal` and sets it with `abort()`; later calls change nothing."""

    __slots__ = ("signal",)

    def __init__(self) -> None:
        self.signal = AbortSignal()

    def abort(self, reason: str = "aborted") -> None:
        self.signal._abort(reason)
