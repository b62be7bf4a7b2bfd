"""What the pytest plugin needs to know of each provider, said in one place.

The plugin's fixtures and the fault runs behind them are provider-neutral: they read the
provider a cassette's header names (`cassette_provider`) and ask here for what differs,
never spelling an event type or an SDK call themselves: the default adapter (the
provider's own driver), the stream one request of a cassette client yields (what a wire
fault row's adapter reads; `harness._strict.report` asks the registry itself), the
items of a cassette as its adapter reads them, and whether the plugin can record the
provider's cassettes live (Anthropic's alone, so far). When the provider registry learns
these facts, this folds into it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from harness._exceptions import ANTHROPIC, InputError

if TYPE_CHECKING:
    from harness._testing.fault_runs import Adapter

__all__ = [
    "adapter_items",
    "cassette_provider",
    "default_adapter",
    "refuse_recording",
    "request_items",
]

#: The providers whose cassettes the plugin records live (with their key's variable).
RECORDS: Final = {ANTHROPIC: "ANTHROPIC_API_KEY"}


def cassette_provider(path: str | os.PathLike[str]) -> str:
    """The provider a cassette's header names (a session folder's: its first turn's);
    `anthropic` for one that does not exist yet or names none."""
    from harness._cassette.codec import Cassette

    found = Path(path)
    if found.is_dir():
        turns = sorted(found.glob("turn-*.jsonl"))
        if not turns:
            return ANTHROPIC
        found = turns[0]
    if not found.is_file():
        return ANTHROPIC
    return Cassette(found).provider


def default_adapter(provider: str) -> Adapter:
    """The harness's own adapter of `provider`'s dialect (its `to_model_events` driver)."""
    if provider == ANTHROPIC:
        from harness._providers.anthropic.adapter import to_model_events

        return to_model_events
    from harness._providers import provider as registered

    driver: Adapter = registered(provider).to_model_events
    return driver


def adapter_items(cassette: Any) -> Iterator[Any]:
    """A `Cassette`'s stream as its provider's adapter is fed it: the SDK's event objects
    for Anthropic, the lines' dicts (Chat's `done` line as its `[DONE]`) for OpenAI; raises
    as a live client would at an error line, a cut or a long stall."""
    from harness._cassette.codec import pass_over
    from harness._replay.direct import sdk_events
    from harness._replay.plan import DEFAULT_READ_TIMEOUT

    if cassette.provider == ANTHROPIC:
        return sdk_events(cassette)
    from harness._replay.openai import provider_items

    return provider_items(cassette, pass_over, DEFAULT_READ_TIMEOUT)


def request_items(client: Any, provider: str) -> Iterator[Any]:
    """The stream one minimal streaming request of `client` (a cassette client of
    `provider`'s SDK) yields, as the provider's adapter is fed it; the SDK's errors raised
    as it raises them. An OpenAI Chat stream the SDK read to its end gets its `[DONE]`
    back (the SDK's iteration consumes it), so the adapter can complete. An error line the
    `openai` SDK raises mid-stream is handed on as its line (as direct replay feeds it)."""
    if provider == ANTHROPIC:
        yield from client.messages.create(
            model="harness-replay",
            max_tokens=1,
            messages=[{"role": "user", "content": "replay"}],
            stream=True,
        )
        return
    from harness._providers import provider as registered
    from harness._replay.clients import openai_sdk
    from harness._replay.readers import _read

    reading = registered(provider).module("reading")
    yield from _read(openai_sdk(), reading.create_items(client))
    if reading.DRIVER_OPTIONS.get("done_at_end"):
        yield registered(provider).module("adapter").DONE


def refuse_recording(paths: Iterable[Path], where: str, mode: object) -> None:
    """`InputError` in one line when a cassette to record is of a provider the plugin
    cannot record live (OpenAI's, so far: replay them with record mode none)."""
    for path in paths:
        name = cassette_provider(path)
        if name not in RECORDS:
            raise InputError(
                f"{where}: record mode {mode}: {path} is an {name} cassette, and the plugin "
                f"records {', '.join(RECORDS)} cassettes alone; replay it with record mode none"
            )
