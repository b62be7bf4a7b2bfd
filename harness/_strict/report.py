"""What `harness.strict` makes of an answer, in words: for the fault report of a row the
code under test accepted silently."""

from __future__ import annotations

import os
from collections.abc import Collection, Sequence
from typing import Any

from harness._exceptions import StreamProtocolError

__all__ = ["strict_verdict"]


def strict_verdict(
    served: Sequence[str | os.PathLike[str]],
    options: dict[str, Any],
    allow_stop_reasons: Collection[str] = (),
) -> str:
    """One clause: what a strict cassette client serving `served` (accepting the extra
    `allow_stop_reasons`) raises to the code."""
    from harness._replay.clients import cassette_client
    from harness._strict.client import strict
    from harness._testing.plugin_providers import cassette_provider, request_items

    client = strict(
        cassette_client(list(served), match_on=None, **options),
        allow_stop_reasons=allow_stop_reasons,
    )
    try:
        for _ in request_items(client, cassette_provider(served[-1]), error_lines=False):
            pass
    except StreamProtocolError as error:
        return f"harness.strict would have raised StreamProtocolError: {error}"
    except Exception as error:
        return f"harness.strict leaves it to the SDK, which raises {type(error).__name__}"
    finally:
        client.close()
    return "harness.strict accepts it"
