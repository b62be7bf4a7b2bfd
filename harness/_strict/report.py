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
    from harness._cassette.codec import Cassette
    from harness._exceptions import ANTHROPIC
    from harness._providers import provider
    from harness._replay.clients import cassette_client
    from harness._strict.client import strict

    client = strict(
        cassette_client(list(served), match_on=None, **options),
        allow_stop_reasons=allow_stop_reasons,
    )
    name = Cassette(served[-1]).provider
    try:
        if name == ANTHROPIC:
            stream = client.messages.create(
                model="harness-replay",
                max_tokens=1,
                messages=[{"role": "user", "content": "replay"}],
                stream=True,
            )
        else:  # an OpenAI dialect: its `create(stream=True)` reader
            stream = provider(name).module("reading").create_items(client)
        for _ in stream:
            pass
    except StreamProtocolError as error:
        return f"harness.strict would have raised StreamProtocolError: {error}"
    except Exception as error:
        return f"harness.strict leaves it to the SDK, which raises {type(error).__name__}"
    finally:
        client.close()
    return "harness.strict accepts it"
