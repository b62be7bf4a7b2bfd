"""What the pytest plugin needs to know of each provider, said in one place.

The plugin's fixtures and the fault runs behind them are provider-neutral: they read the
provider a cassette's header names (`cassette_provider`) and ask here for what differs,
never spelling an event type or an SDK call themselves: the default adapter (the
provider's own driver, under the run's compatible-server profile where the provider has
profiles: `profile_for`), the stream one request of a cassette client yields (what a wire
fault row's adapter reads; `harness._strict.report` asks the registry itself), the
items of a cassette as its adapter reads them, which SDK a test's cassettes are
recorded and replayed with (`cassette_sdk`: their headers', else the marker's `sdk=`) and
the key that opts in to recording them (`key_variable`, from the one table of
`harness._replay.clients`), and what the plugin does not record live (an OpenAI
cassette from a marker's `request=`, or for a `fault_variant`: `refuse_recording`).
When the provider registry learns these facts, this folds into it.
"""

from __future__ import annotations

import functools
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
    "cassette_sdk",
    "default_adapter",
    "key_variable",
    "profile_for",
    "refuse_recording",
    "request_items",
]

#: Which SDK's client answers (and records) each provider's cassettes.
_SDK_NAMES: Final = ("anthropic", "openai")


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


def _sdk_of_provider(provider: str) -> str:
    return "anthropic" if provider == ANTHROPIC else "openai"


def cassette_sdk(paths: Iterable[Path], wanted: object, where: str) -> str:
    """The SDK (`anthropic`, `openai`) of a test's cassettes: the one their headers name
    (a cassette not written yet has none), else the marker's `sdk=`, else `anthropic`;
    `InputError` in one line for an `sdk=` that is neither, or that the headers contradict."""
    if wanted not in (None, *_SDK_NAMES):
        raise InputError(f"{where}: @pytest.mark.cassette sdk= takes 'anthropic' or 'openai'")
    found = {
        _sdk_of_provider(cassette_provider(path))
        for path in paths
        if path.is_file() or (path.is_dir() and any(path.glob("turn-*.jsonl")))
    }
    if len(found) > 1:
        raise InputError(f"{where}: the marked cassettes are Anthropic and OpenAI ones")
    sdk = found.pop() if found else str(wanted or "anthropic")
    if wanted not in (None, sdk):
        raise InputError(
            f"{where}: @pytest.mark.cassette sdk={wanted!r}, but the cassettes are {sdk} ones"
        )
    return sdk


def key_variable(sdk: str) -> str:
    """The variable holding the key that records cassettes of `sdk` (`OPENAI_API_KEY`)."""
    from harness._replay.clients import KEY_VARIABLES

    return KEY_VARIABLES[sdk]


def default_adapter(provider: str, profile: str | None = None) -> Adapter:
    """The harness's own adapter of `provider`'s dialect (its `to_model_events` driver),
    reading its streams under the compatible server `profile` if given (`ValueError` for
    an unknown one, or a provider that has none)."""
    if provider == ANTHROPIC and profile is None:
        from harness._providers.anthropic.adapter import to_model_events

        return to_model_events
    from harness._providers import provider as registered

    found = registered(provider)
    options = found.adapter_options(profile)
    driver: Adapter = found.to_model_events
    return functools.partial(driver, **options) if options else driver


def profile_for(provider: str, profile: str | None) -> str | None:
    """The run's compatible-server `profile` for a cassette of `provider`: the profile for
    a provider that has them (Chat Completions), None (the default) for the others: the
    plugin's profile is suite-wide, as it is for the strict clients."""
    from harness._providers import provider as registered

    return profile if profile is not None and registered(provider).has_profiles else None


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


def refuse_recording(paths: Iterable[Path], where: str, mode: object, sdk: str) -> None:
    """`InputError` in one line when cassettes of `sdk` are to be recorded in a way the
    plugin cannot: an OpenAI cassette is recorded by the client fixtures alone, from the
    code's own requests (not from a marker's `request=`, nor for a `fault_variant`, whose
    rows are chosen at collection, before the cassette's provider is known)."""
    if sdk == "anthropic":
        return
    names = ", ".join(str(path) for path in paths)
    raise InputError(
        f"{where}: record mode {mode}: {names} is an OpenAI cassette, which the plugin "
        "records through harness_client or harness_async_client alone (no request=, no "
        "fault_variant); record it so, or with harness record, then replay it"
    )
