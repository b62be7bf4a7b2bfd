"""Run the fault catalogue against any adapter, and say readably which faults it misses.

A `FaultCase` is one row of `harness.faults.CATALOGUE` applied to a good cassette: the
broken variant is written as a cassette of its own (so it can be replayed by hand with
`harness replay`), replayed through the adapter under test, and compared with the code
the row must produce. Unlike `replay`, every exception the adapter raises is kept, since
a crash (a `ValueError` from `json.loads`, say) is exactly what the report should show.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness._events import ModelEvent
    from harness.faults import Fault

__all__ = ["Adapter", "FaultCase", "run_fault"]

#: An adapter: the SDK's raw stream events in, internal events out (as `to_model_events`).
Adapter = Callable[[Iterable[Any]], Iterable["ModelEvent"]]


@dataclass(slots=True, repr=False)
class FaultCase:
    """One fault row against one adapter: what it must give, and what the adapter gave."""

    fault: Fault
    expected_code: str
    path: Path
    events: list[ModelEvent] = field(default_factory=list)
    error: BaseException | None = None

    def __repr__(self) -> str:
        return f"<FaultCase {self.fault.name}: expects {self.expected_code}>"

    @property
    def code(self) -> str | None:
        """What the adapter's outcome came to, in the catalogue's terms (None: no such code)."""
        from harness._replay import failure_code

        return None if self.error is None else failure_code(self.error)

    @property
    def caught(self) -> bool:
        return self.code == self.expected_code

    def report(self) -> str:
        """A few readable lines: the fault, what was expected, what came out, how to replay."""
        from harness._events import event_to_json

        if self.error is None:
            got = "the stream completed, as if nothing were wrong"
        elif self.code is None:
            got = f"the adapter crashed: {type(self.error).__name__}: {self.error}"
        else:
            got = f"{self.code} ({self.error})"
        shown = ", ".join(json.dumps(event_to_json(event)) for event in self.events)
        return "\n".join(
            [
                f"fault {self.fault.name}: {self.fault.description}",
                f"  expected: {self.expected_code}",
                f"  got:      {got}",
                f"  events:   {shown or '(none)'}",
                f"  replay:   harness replay {self.path}",
            ]
        )

    def assert_caught(self) -> None:
        """Raise `AssertionError` with `report()` unless the adapter gave the expected code."""
        __tracebackhide__ = True
        if not self.caught:
            raise AssertionError(self.report())


def run_fault(
    adapter: Adapter, good: str | os.PathLike[str], fault: Fault, folder: Path
) -> FaultCase | None:
    """Derive `fault`'s variant of the good cassette, write it in `folder`, replay it.

    None when the fault does not apply to this cassette (no tool block: no tool faults).
    """
    from harness._cassette import Cassette, make_header, write_cassette
    from harness._replay import sdk_events

    broken = fault.derive(list(Cassette(good).events()))
    if broken is None:
        return None
    path = folder / f"{fault.name}.jsonl"
    header = make_header(
        f"{fault.name}: {fault.description} (from {os.fspath(good)})",
        fault=fault.name,
        expect=fault.expect,
    )
    write_cassette(path, broken, header=header)
    case = FaultCase(fault, fault.expect, path)
    try:
        for event in adapter(sdk_events(Cassette(path))):
            case.events.append(event)
    except Exception as error:
        case.error = error
    return case
