"""What the pytest plugin asks of a cassette's provider, through the registry alone.

The plugin's fixtures and the fault runs behind them are provider-neutral: they read the
provider a cassette's header names (`cassette_provider`) and ask the `Provider` for what
differs, never spelling a provider, an event type or an SDK call themselves: the default
adapter (the provider's own driver, under the run's compatible-server profile where the
provider has profiles: `profile_for`), the stream one request of a cassette client
yields (its SDK's `create` reader: what a wire fault row's adapter reads), the items of
a cassette as its adapter reads them (`harness._replay.direct.provider_items`), which
SDK a test's cassettes are recorded and replayed with (`cassette_sdk`: their headers',
else the marker's `sdk=`, any registered provider's SDK package) and the key that opts
in to recording them (`key_variable`, the variable that SDK's client reads), and what
the plugin does not record live (a cassette of a provider not recorded through its SDK,
from a marker's `request=` or for a `fault_variant`: `refuse_recording`).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness._exceptions import ANTHROPIC, InputError

if TYPE_CHECKING:
    from harness._providers.sdk import Sdk
    from harness._testing.fault_runs import Adapter

__all__ = [
    "adapter_items",
    "cassette_host",
    "cassette_provider",
    "cassette_sdk",
    "cassettes_host",
    "default_adapter",
    "hosted_sdk",
    "key_variable",
    "profile_for",
    "refuse_recording",
    "request_items",
]


def cassette_provider(path: str | os.PathLike[str]) -> str:
    """The provider a cassette's header names (a session folder's: its first turn's);
    the default one for a cassette that does not exist yet or names none."""
    found = _first_cassette(path)
    return ANTHROPIC if found is None else found.provider


def cassette_host(path: str | os.PathLike[str]) -> str | None:
    """The host a cassette's header names (a session folder's: its first turn's); None
    (the direct API) for a cassette that does not exist yet or names none."""
    found = _first_cassette(path)
    return None if found is None else found.host


def _first_cassette(path: str | os.PathLike[str]) -> Any:
    from harness._cassette.codec import Cassette

    found = Path(path)
    if found.is_dir():
        turns = sorted(found.glob("turn-*.jsonl"))
        if not turns:
            return None
        found = turns[0]
    return Cassette(found) if found.is_file() else None


def cassettes_host(paths: Iterable[Path]) -> str | None:
    """The host the headers of the cassettes that exist name, when they agree (a session
    folder's: its first turn's); None for none, or for several."""
    from harness._cassette.codec import Cassette

    named: set[str | None] = set()
    for path in paths:
        found = path
        if found.is_dir():
            found = next(iter(sorted(found.glob("turn-*.jsonl"))), found)
        if found.is_file():
            named.add(Cassette(found).host)
    return named.pop() if len(named) == 1 else None


def hosted_sdk(sdk: str, host: str) -> Sdk | None:
    """The SDK client reading the dialect of `sdk`'s cassettes on `host` (a provider's
    `hosted`: Anthropic's `AnthropicBedrock` on `bedrock`); None if none is served there."""
    from harness._providers import providers

    for found in providers():
        if found.sdk.package == sdk and host in found.hosted:
            return found.hosted[host]
    return None


def _sdk_of_provider(name: str) -> str:
    from harness._providers import provider

    return provider(name).sdk.package


def cassette_sdk(paths: Iterable[Path], wanted: object, where: str) -> str:
    """The SDK (its package: `anthropic`, `openai`) of a test's cassettes: the one their
    headers' provider is read with (a cassette not written yet has none), else the
    marker's `sdk=`, else the default provider's; `InputError` in one line for an `sdk=`
    no registered provider's SDK is, or that the headers contradict."""
    from harness._replay.clients import sdk_choices, sdk_named

    if wanted is not None and not _is_sdk(wanted):
        raise InputError(f"{where}: @pytest.mark.cassette sdk= takes {sdk_choices()}")
    found = {
        _sdk_of_provider(cassette_provider(path))
        for path in paths
        if path.is_file() or (path.is_dir() and any(path.glob("turn-*.jsonl")))
    }
    if len(found) > 1:
        named = " and ".join(sdk_named(package).named for package in sorted(found))
        raise InputError(f"{where}: the marked cassettes are {named} ones")
    sdk = found.pop() if found else str(wanted or _sdk_of_provider(ANTHROPIC))
    if wanted not in (None, sdk):
        raise InputError(
            f"{where}: @pytest.mark.cassette sdk={wanted!r}, but the cassettes are {sdk} ones"
        )
    return sdk


def _is_sdk(name: object) -> bool:
    """Whether `name` is a registered provider's SDK package (`sdk=` takes it)."""
    from harness._providers import sdks

    return any(name == sdk.package for sdk in sdks())


def key_variable(sdk: str) -> str:
    """The variable holding the key that records cassettes of `sdk` (`OPENAI_API_KEY`), as
    a message names it (`GEMINI_API_KEY or GOOGLE_API_KEY`: each is read)."""
    from harness._replay.clients import sdk_named

    return sdk_named(sdk).env.key_names


def default_adapter(provider: str, profile: str | None = None) -> Adapter:
    """The harness's own adapter of `provider`'s dialect (its `to_model_events` driver),
    reading its streams under the compatible server `profile` if given (`ValueError` for
    an unknown one, or a provider that has none)."""
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
    """A `Cassette`'s stream as its provider's adapter is fed it: what its SDK would hand
    it (the SDK's event objects for Anthropic, the lines' dicts, Chat's `done` line as its
    `[DONE]`, for OpenAI); raises as a live client would at an error line, a cut or a long
    stall."""
    from harness._replay.direct import sdk_events

    return sdk_events(cassette)


def request_items(client: Any, provider: str) -> Iterator[Any]:
    """The stream one minimal streaming request of `client` (a cassette client of
    `provider`'s SDK) yields through its `create` reader, as the provider's adapter is
    fed it; the SDK's errors raised as it raises them. A stream the reader consumes the
    end of (Chat's `[DONE]`, read to its end by the SDK's iteration) gets it back, so the
    adapter can complete. An error line the SDK raises mid-stream is handed on as its
    line (as direct replay feeds it), and its other errors told apart as a replay through
    the SDK tells them (`harness._replay.readers`)."""
    from harness._providers import provider as registered
    from harness._replay.clients import client_replayer
    from harness._replay.readers import _read

    found = registered(provider)
    reading = found.reading
    yield from _read(found, reading.create_items(client), client_replayer(client))
    if reading.DRIVER_OPTIONS.get("done_at_end"):
        yield found.module("adapter").DONE


def refuse_recording(paths: Iterable[Path], where: str, mode: object, sdk: str) -> None:
    """`InputError` in one line when cassettes of `sdk` are to be recorded in a way the
    plugin cannot: a cassette of a provider `harness record` records as plain HTTP (an
    OpenAI one) is recorded by the client fixtures alone, from the code's own requests
    (not from a marker's `request=`, nor for a `fault_variant`, whose rows are chosen at
    collection, before the cassette's provider is known)."""
    from harness._providers import providers
    from harness._replay.clients import sdk_named

    if any(found.recording == "sdk" and found.sdk.package == sdk for found in providers()):
        return
    names = ", ".join(str(path) for path in paths)
    named = sdk_named(sdk).named
    raise InputError(
        f"{where}: record mode {mode}: {names} is a cassette of {named}: the plugin "
        "records those through harness_client or harness_async_client alone (no request=, no "
        "fault_variant); record it so, or with harness record, then replay it"
    )
