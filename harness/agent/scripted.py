"""`ScriptedModelClient`: a `ModelClient` that plays internal events from a script.

For tests of a loop (this one or yours) at a precise point: a turn is a list of steps,
each an internal event to yield, an exception to raise, or a callable to run right
there (`controller.abort`, say). The client never looks at the abort signal, so it is
a non-cooperative stream, as the cancellation tests need one: it runs its script to the
end unless the loop stops pulling (docs/agent.md, the cancellation model).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from typing import TypeAlias

from harness._events import ModelEvent
from harness.agent.client import ModelRequest

__all__ = ["ScriptedModelClient", "Step"]

Step: TypeAlias = ModelEvent | BaseException | Callable[[], object]


class ScriptedModelClient:
    """Plays one scripted turn per request; records requests and how far each turn got."""

    def __init__(self, *turns: Sequence[Step]) -> None:
        self.turns = [list(turn) for turn in turns]
        self.requests: list[ModelRequest] = []
        #: Per turn played: the number of steps run before the stream finished or was closed.
        self.progress: list[int] = []

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        self.requests.append(request)
        if len(self.requests) > len(self.turns):
            raise AssertionError(f"no scripted turn {len(self.requests)}")
        self.progress.append(0)
        return self._play(len(self.requests) - 1)

    async def _play(self, turn: int) -> AsyncIterator[ModelEvent]:
        for step in self.turns[turn]:
            self.progress[turn] += 1
            if isinstance(step, BaseException):
                raise step
            if callable(step):
                step()
                continue
            await asyncio.sleep(0)
            yield step
