"""How a timeline stays a bounded number of rows, whatever the stream's length.

Two steps, both lazy and holding a bounded number of rows:
- **Runs of similar rows fold.** Rows that share a key (`Drawn.key`: the same event at
  the same index, the same open set, emitting text or nothing: a long answer's
  `text_delta`s, a tool block's `input_json_delta`s) and number `FOLD_MIN` or more are
  drawn as their first `FOLD_HEAD` rows, one fold row (how many, which lines, how much
  text or JSON they added, and in a `<details>` the first `FOLD_SAMPLE` of them), and
  their last `FOLD_TAIL` rows. Rows that change something (a lane opens or closes, a
  call or `done` is emitted, a rule fires) have no key and are always drawn.
- **A budget bounds the rest.** Past `budget` drawn entries (rows and folds), the entries
  that follow are not drawn but the last `tail`: one fold row stands for those left out
  (a stream whose every row differs from the one before). The failing row, the last of
  a trace, is always among the rows kept.
`folded` works on any item with `number` and `added` (a trace's `Drawn` rows, a pair of
rows side by side), given the key to fold by.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Final, Generic, Protocol, TypeVar

__all__ = ["BUDGET", "FOLD_MIN", "Fold", "folded"]

#: Rows a run of similar rows must number to be folded.
FOLD_MIN: Final = 6
#: Rows of a folded run drawn before the fold, and after it.
FOLD_HEAD: Final = 2
FOLD_TAIL: Final = 1
#: Rows of a folded run drawn inside its fold's `<details>` (enough to hold the middle of
#: a run too short to fold).
FOLD_SAMPLE: Final = 5
assert FOLD_SAMPLE >= FOLD_MIN - FOLD_HEAD - FOLD_TAIL
#: Entries (rows and folds) a timeline draws before it keeps only its last `TAIL`.
BUDGET: Final = 1500
TAIL: Final = 40


class Item(Protocol):
    @property
    def number(self) -> int | None: ...

    @property
    def added(self) -> int: ...


T = TypeVar("T", bound=Item)


@dataclass(slots=True)
class Fold(Generic[T]):
    """Rows not drawn one by one: how many, the first and last of them (their lines), the
    characters they added, a few of them to show, and why (`similar`: a run of rows alike;
    `budget`: past the timeline's budget)."""

    reason: str
    count: int = 0
    added: int = 0
    first: T | None = None
    last: T | None = None
    sample: list[T] = field(default_factory=list)

    def take(self, item: T) -> None:
        if self.first is None:
            self.first = item
        self.last = item
        self.count += 1
        self.added += item.added
        if len(self.sample) < FOLD_SAMPLE and self.reason == "similar":
            self.sample.append(item)

    def absorb(self, entry: T | Fold[T]) -> None:
        """Count a drawn entry (a row, or a fold with its rows) as left out."""
        if isinstance(entry, Fold):
            if entry.first is not None and self.first is None:
                self.first = entry.first
            if entry.last is not None:
                self.last = entry.last
            self.count += entry.count
            self.added += entry.added
        else:
            self.take(entry)


def folded(
    items: Iterable[T],
    key: Callable[[T], Hashable | None],
    *,
    budget: int = BUDGET,
    tail: int = TAIL,
) -> Iterator[T | Fold[T]]:
    """`items` with runs of similar ones folded, and at most `budget + tail + 1` entries."""
    drawn = 0
    kept: deque[T | Fold[T]] = deque()
    left_out: Fold[T] = Fold("budget")
    for entry in _runs(items, key):
        if drawn < budget:
            drawn += 1
            yield entry
            continue
        kept.append(entry)
        if len(kept) > tail:
            left_out.absorb(kept.popleft())
    if left_out.count:
        yield left_out
    yield from kept


def _runs(items: Iterable[T], key: Callable[[T], Hashable | None]) -> Iterator[T | Fold[T]]:
    """Each run of `FOLD_MIN` or more items of one key as its head, a fold, its tail."""
    run_key: Hashable | None = None
    head: list[T] = []
    middle: Fold[T] = Fold("similar")
    end: deque[T] = deque()

    def close() -> Iterator[T | Fold[T]]:
        nonlocal middle
        yield from head
        if middle.count >= FOLD_MIN - FOLD_HEAD - FOLD_TAIL:
            yield middle
        else:  # a short run: its few middle rows are all in the sample, drawn as they are
            yield from middle.sample
        yield from end
        head.clear()
        end.clear()
        middle = Fold("similar")

    for item in items:
        item_key = key(item)
        if item_key is None or item_key != run_key:
            yield from close()
            run_key = item_key
            if item_key is None:
                yield item
                continue
        if len(head) < FOLD_HEAD:
            head.append(item)
            continue
        end.append(item)
        if len(end) > FOLD_TAIL:
            middle.take(end.popleft())
    yield from close()
