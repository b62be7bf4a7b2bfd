"""The stop-reason policy as a command line spells it: `max_tokens,stop_sequence`, or
OpenAI's finish reasons (`length`) and incomplete reasons (`max_output_tokens`).

`harness proxy --allow-stop-reasons` reads its value here, into what `harness.strict`'s
`allow_stop_reasons=` takes; `completing_stop_reasons` is what every strict reader
(`harness.strict`, `StrictTransport`, the proxy) makes of that. Any name of the API's
form is accepted (lower-case letters and underscores), known to this version or not: the
API adds stop reasons, and the adapter compares names only.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Final

from harness._exceptions import InputError
from harness._providers.anthropic.adapter import COMPLETE_STOP_REASONS

__all__ = ["completing_stop_reasons", "stop_reasons_from"]

#: A stop reason's name as the API writes one (`end_turn`, `max_tokens`, `pause_turn`).
_NAME: Final = re.compile(r"[a-z][a-z_]*")


def stop_reasons_from(spelled: str) -> tuple[str, ...]:
    """The stop reasons of a comma-separated list, in order; `InputError` (one line) for an
    empty list, an empty item or a name that is not a stop reason's form."""
    names = [name.strip() for name in spelled.split(",")]
    if names == [""]:
        raise InputError(
            "no stop reason given: name them separated by commas, as max_tokens or length"
        )
    for name in names:
        if not name:
            raise InputError(
                f"{spelled!r} holds an empty stop reason: separate the names by single "
                "commas, as max_tokens,stop_sequence"
            )
        if not _NAME.fullmatch(name):
            raise InputError(
                f"{name!r} is not a stop reason: one is lower-case letters and underscores, "
                "as max_tokens or length"
            )
    return tuple(names)


def completing_stop_reasons(allow_stop_reasons: Collection[str]) -> frozenset[str]:
    """The stop reasons that complete a message: the default (`end_turn`, `tool_use`) and
    those `allow_stop_reasons` adds."""
    return COMPLETE_STOP_REASONS | frozenset(allow_stop_reasons)
