"""What every builder shares: its lines, the low-level calls, `interleave`, and `write`.

A builder accumulates a cassette's lines (the stream's `data` objects and directive
lines) in order; each dialect's builder (`messages`, `chat`, `responses`) adds the calls
that write its events the way its API sends them. `split_json` cuts a tool's JSON into
the pieces its deltas carry.
"""

from __future__ import annotations

import itertools
import os
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Self

from harness._cassette.codec import make_header, write_cassette
from harness._exceptions import InputError

__all__ = ["Builder", "split_json"]


def split_json(text: str, pieces: int | Sequence[int]) -> list[str]:
    """Cut `text` into `pieces` near-equal parts, or at the given character offsets."""
    if isinstance(pieces, int):
        count = max(1, min(pieces, len(text))) if text else 1
        size, extra = divmod(len(text), count)
        cuts, at = [], 0
        for part in range(count - 1):
            at += size + (1 if part < extra else 0)
            cuts.append(at)
    else:
        cuts = sorted(pieces)
    bounds = [0, *cuts, len(text)]
    return [text[start:end] for start, end in itertools.pairwise(bounds)]


class Builder:
    """A cassette's lines being written; every method returns the builder for chaining."""

    #: the header's `provider`; None: none written (an Anthropic cassette, as ever)
    provider: ClassVar[str | None] = None

    def __init__(self, *, model: str) -> None:
        self.model = model
        self._events: list[dict[str, Any]] = []

    def raw(self, event: dict[str, Any]) -> Self:
        """Append any line (an event, a directive, anything broken) as it is."""
        self._events.append(event)
        return self

    def directive(self, name: str, **fields: Any) -> Self:
        """A replay directive line (`{"harness": name, ...}`, docs/cassettes.md)."""
        return self.raw({"harness": name, **fields})

    def _take(self, event: dict[str, Any]) -> None:
        """Append a line of a builder merged in by `interleave`."""
        self.raw(event)

    def _merged(self, blocks: Sequence[Self]) -> None:
        """What else of `blocks` the builder keeps when they are merged in (their counts)."""

    def interleave(self, blocks: Sequence[Self], order: Sequence[int]) -> Self:
        """Merge blocks built apart (each builder made with `start=False`), one line at a time.

        `order[k]` is the position in `blocks` of the block whose next line comes k-th, and
        each block keeps its own order. `order` names every line once: a block named as
        many times as it has lines. Any other order (shorter, longer, a position that is no
        block's) raises `InputError` saying which block it miscounts, before anything is added.
        """
        queues = [deque(block.events()) for block in blocks]
        wanted = [len(queue) for queue in queues]
        named = [0] * len(queues)
        for which in order:
            if not 0 <= which < len(queues):
                raise InputError(
                    f"interleave: order names block {which}, "
                    f"not a position of the {len(queues)} blocks"
                )
            named[which] += 1
        if named != wanted:
            wrong = ", ".join(
                f"block {which} has {events} and is named {times}"
                for which, (events, times) in enumerate(zip(wanted, named, strict=True))
                if events != times
            )
            raise InputError(
                f"interleave: order ({len(order)} positions for {sum(wanted)} events) "
                f"must name each block once for each of its events: {wrong}"
            )
        self._merged(blocks)
        for which in order:
            self._take(queues[which].popleft())
        return self

    def events(self) -> list[dict[str, Any]]:
        """A copy of the lines so far: the stream's `data` objects, and directive lines."""
        return list(self._events)

    def write(
        self,
        path: str | os.PathLike[str],
        description: str,
        *,
        request: Mapping[str, Any] | None = None,
        **metadata: Any,
    ) -> None:
        """Write a synthetic cassette atomically: a header naming the provider and model
        (and keeping `request`, the body that asked for the stream, and any `metadata`
        such as `expect`), then the lines."""
        fields: dict[str, Any] = {} if self.provider is None else {"provider": self.provider}
        fields.update(metadata)
        fields.setdefault("model", self.model)
        header = make_header(description, "synthetic", request=request, **fields)
        write_cassette(path, self._events, header=header)
