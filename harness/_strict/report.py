"""What `harness.strict` makes of an answer, in words: for the fault report of a row the
code under test accepted silently."""

from __future__ import annotations

import os
from collections.abc import Collection, Sequence
from typing import Any

from harness._replay.direct import failure_code, protocol_error

__all__ = ["strict_verdict"]


def strict_verdict(
    served: Sequence[str | os.PathLike[str]],
    options: dict[str, Any],
    allow_stop_reasons: Collection[str] = (),
    profile: str | None = None,
) -> str:
    """One clause: what a strict cassette client serving `served` (accepting the extra
    `allow_stop_reasons`, reading a Chat answer under the compatible server `profile`)
    raises to the code."""
    from harness._cassette.codec import Cassette
    from harness._replay.clients import cassette_client
    from harness._strict.client import strict

    found = Cassette(served[-1]).dialect
    client = strict(
        cassette_client(list(served), match_on=None, **options),
        allow_stop_reasons=allow_stop_reasons,
        profile=profile if found.has_profiles else None,
    )
    try:
        for _ in found.reading.create_items(client):  # its `create(stream=True)` reader
            pass
    except Exception as error:
        return _verdict(error)
    finally:
        client.close()
    return "harness.strict accepts it"


def _verdict(error: Exception) -> str:
    """What a strict client raised, read through its chain as replay names a failure:
    the guard's error wherever an SDK release put it, any other stream failure by its
    name (a connection failure by its transport error, `RemoteProtocolError`, whether a
    release wrapped it in `APIConnectionError` or not)."""
    protocol = protocol_error(error)
    if protocol is not None:
        return f"harness.strict would have raised StreamProtocolError: {protocol}"
    code = failure_code(error)
    if code is not None:
        return f"harness.strict leaves it to the SDK, which fails with {code}"
    return f"harness.strict leaves it to the SDK, which raises {type(error).__name__}"
