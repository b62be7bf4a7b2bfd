"""The thin dialect's fault catalogue: two rows of its own, then the wire rows."""

from __future__ import annotations

import copy
from typing import Any, Final

from harness._providers.fault_rows import Events, Fault, http_error, wire_rows
from thin_dialect.framing import encode


def _lines(events: Events) -> list[int]:
    return [at for at, line in enumerate(events) if "harness" not in line]


def drop_end(events: Events) -> Events | None:
    ends = [at for at, line in enumerate(events) if line.get("kind") == "end"]
    return (
        [copy.deepcopy(line) for at, line in enumerate(events) if at not in ends] if ends else None
    )


def break_arguments(events: Events) -> Events | None:
    calls = [at for at, line in enumerate(events) if line.get("kind") == "call"]
    if not calls:
        return None
    broken = copy.deepcopy(events)
    broken[calls[0]]["arguments"] = "[1, 2]"
    return broken


def _span(events: Events) -> tuple[int, int] | None:
    found = _lines(events)
    return (found[0], found[-1]) if found else None


def _size(line: dict[str, Any]) -> int:
    return len(encode(line))


_SERVER_ERROR: Final = http_error(
    500, {"error": {"type": "server_error", "message": "the thin API failed"}}, {}
)
_RATE_LIMIT: Final = http_error(
    429, {"error": {"type": "rate_limited", "message": "slow down"}}, {"retry-after-ms": "1"}
)

CATALOGUE: Final[tuple[Fault, ...]] = (
    Fault("drop_end", "missing_end", "the end line is dropped", drop_end),
    Fault(
        "non_object_arguments",
        "non_object_tool_input",
        "the first call's arguments are a JSON list",
        break_arguments,
    ),
    *wire_rows(
        ("http_500", "api_error:server_error", "an HTTP 500 instead of the stream", _SERVER_ERROR),
        _RATE_LIMIT,
        _span,
        _size,
    ),
)
