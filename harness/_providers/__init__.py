"""Providers: one wire dialect each, and everything that dialect decides.

A provider is a subpackage of its own, registered here by one line of `PACKAGES`:
`anthropic` (Messages `message_*` / `content_block_*` events), `openai_chat` (Chat
Completions chunks, ended by `data: [DONE]`), `openai_responses` (Responses `response.*`
events) and `gemini` (`GenerateContentResponse` chunks); or a package of another
distribution, laid out the same way and registered by an entry point of the group
`stream_harness.providers` (`name = package`), read the first time the registry is asked
(never by `import harness`), a bad one told in one logged line and left out. Everything
else (the cassette codec and directives, replay planning, sessions, the commands, trace,
coverage, diff, import, the guard, the server, the plugin) resolves a provider once,
where a cassette's header or a request names it (`provider(name)`, a `Provider`), and
asks that object for what differs, never spelling a provider's name, an event type, an
SDK or a variable itself.

What a provider supplies, one module each, under these names (docs/providers.md):
- `errors`: its error table as data (an `ErrorTable`: message prefix, code -> template,
  each field's pattern), registered with `harness._exceptions` when imported;
- `adapter`: the sans-IO adapter state machine, its `data` objects (dicts, or SDK objects
  read as their dicts) in, the three internal events out (`harness._events`), and its
  drivers `to_model_events(events, **policy)` / `ato_model_events(...)`, one machine
  under both (the policy keywords: the finish reasons it accepts, docs/openai-adapters.md);
- `events.schema.json`: the JSON Schema definitions of its event lines (`line` names the
  one they match), merged into the cassette schema when it is read;
- `framing`: its `FRAMING`, a `Framing` (from `wire`): SSE bytes, the non-streaming
  answer, endpoints, the request fields replay matches on, a resume, the error shape;
- `client`: its `SDK`, an `Sdk` (from `sdk`): the Python SDK its streams are read with
  (the package, its sync and async client classes, the pip extra that installs it, how
  a client is built around an HTTP client), the API's base URL and the environment the
  client reads (`ClientEnv`: `serve` and `proxy` print it), and how a live recording
  goes (`RECORDING`: through the SDK, or as plain HTTP, by `harness._record`);
- `reading`: the SDK's readers of one streamed request over a client (`READERS`, each
  `<name>_items(client)` and `a<name>_items(client)`), what the driver is then told,
  and what direct replay feeds the adapter (`direct_builders(sdk_objects)`);
- `faults`: its fault catalogue, rows of `fault_rows` (the row types and the
  provider-neutral wire rows; `harness.faults` is their public face);
- `guard`: what `harness.strict` reads of an answer: `answer_check(request, allowed,
  profile)`, an `AnswerCheck` (from `answers`) for a request of its own, None for any
  other, with an `AnswerReader` for a stream;
- `interop`: what import and export read and write of it, its `RECORDED` (a `Recorded`,
  from `recorded`): which calls are its, an SSE body and a plain answer as lines;
- `tracing`: how `harness replay --trace` and `diff --trace` read it, the same functions
  in each: `machine(**options)` a new adapter to feed, `open_items(machine, limit)` its open tool
  blocks (calls, items), `describe(data, nothing, short=...)` a line's event, index and
  text-form head and excerpt, `compared(data, ids=...)` what else of a line two traces
  must share, `shown_text(data)` the text a line carries (as a recording shows it).
A dialect the agent loop speaks adds `conversation` (the loop's request: the OpenAI
dialects', Converse's, Gemini's; what `harness record` builds an OpenAI one from), and
one `harness conform` checks adds `conform` (what it tells an adapter beside the lines,
and where its default cases are); Anthropic's `message` and `construct` are
its `Message` fold and the SDK's event objects.

Beside them, neutral: `sdk`, the `Sdk` a `client` module gives; `sse`, the one SSE
decoder, as the SDKs read a body (CR, LF or CRLF; no event without its blank line; an
event the SDK would drop silently told apart); `eventstream`, AWS event-stream frames
(Bedrock's framing) read as botocore reads them, and `frame_rows` the binary fault rows
of a stream in them (the same for every dialect so framed: `Framed`); `jsonarray`, a
streamed JSON array of objects (Gemini's framing without `alt=sse`) read as it arrives;
`openai_sse` what the openai SDK reads differently, and `openai_framing` the `data` both
OpenAI dialects send; `openai_shared` the little both OpenAI dialects have in common
(their message prefix, a call's arguments read as a JSON object, an `error` line as
`APIErrorEvent`, an SDK object read as its line's dict, the API's error answers).

The subpackages import the flat core and the provider-neutral modules here only, never
each other and never an SDK at import time; this module imports none of them until a
provider is asked for, so the core can load Anthropic's error table (`anthropic.errors`,
pure data) first.

Adding a fourth provider is one new subpackage with those modules and one line here, or
one entry point in another distribution (docs/providers.md).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import logging
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from types import ModuleType
from typing import TYPE_CHECKING, Any, Final, TypeVar

if TYPE_CHECKING:
    from harness._events import ModelEvent
    from harness._exceptions import ErrorTable
    from harness._providers.fault_rows import Fault
    from harness._providers.recorded import Recorded
    from harness._providers.sdk import Sdk
    from harness._providers.wire import ClientEnv, Framing

__all__ = [
    "ENTRY_POINT_GROUP",
    "PACKAGES",
    "Provider",
    "check_profile",
    "names",
    "provider",
    "providers",
    "refused",
    "registry_cache",
    "reset",
    "sdk_classes",
    "sdks",
]

#: built-in provider name (a cassette header's `provider`) -> its subpackage here: the
#: registry's own lines, first in its order (Anthropic's first: the default provider).
PACKAGES: Final[dict[str, str]] = {
    "anthropic": "anthropic",
    "openai-chat": "openai_chat",
    "openai-responses": "openai_responses",
    "bedrock-converse": "bedrock_converse",
    "gemini": "gemini",
}
#: The entry point group another distribution registers a provider in: `name = package`,
#: the import path of a package laid out as the subpackages here are.
ENTRY_POINT_GROUP: Final = "stream_harness.providers"
#: The modules a provider cannot do without (the others are asked for where needed).
REQUIRED: Final = ("adapter", "errors", "framing")

_log = logging.getLogger("harness.providers")


@dataclass(frozen=True, slots=True)
class Provider:
    """One registered provider: its name and the package its modules are in, each
    imported on first use. Resolved once where a cassette's header or a request names
    it, and passed on: everything a subsystem needs of a dialect is asked of it."""

    name: str
    #: the import path of its package (`harness._providers.anthropic`)
    package: str

    def module(self, part: str) -> ModuleType:
        """The provider's module `part` (`adapter`, `errors`, ...), imported once."""
        return importlib.import_module(f"{self.package}.{part}")

    def has(self, part: str) -> bool:
        """Whether the provider has a module `part` (`profiles`, `conform`, `faults`)."""
        return _found(f"{self.package}.{part}")

    @property
    def events_schema(self) -> dict[str, Any]:
        """Its `events.schema.json`: `line`, the definition its event lines match, and the
        `$defs` the cassette schema takes in (`harness._cassette.codec.schema`)."""
        text = resources.files(self.package).joinpath("events.schema.json")
        loaded: dict[str, Any] = json.loads(text.read_text(encoding="utf-8"))
        return loaded

    @property
    def framing(self) -> Framing:
        """How its lines go over the wire (its `framing` module's `FRAMING`)."""
        found: Framing = self.module("framing").FRAMING
        return found

    @property
    def sdk(self) -> Sdk:
        """The SDK its streams are read with in user code (its `client` module's `SDK`)."""
        found: Sdk = self.module("client").SDK
        return found

    @property
    def client_env(self) -> ClientEnv:
        """What its SDK's client reads from the environment: its base URL's and its key's
        variables, and what follows a server's address in that base URL."""
        return self.sdk.env

    @property
    def hosted(self) -> Mapping[str, Sdk]:
        """The hosts besides the direct API its dialect is served on, each with the `Sdk`
        its events are read with there (its `client` module's `HOSTED`; none without)."""
        if not self.has("client"):
            return {}
        found: Mapping[str, Sdk] = getattr(self.module("client"), "HOSTED", {})
        return found

    def not_served_on(self, host: str) -> str | None:
        """Why its streams are not served on `host` (`openai-chat streams are served on
        their own API alone (name no host)`), or None where they are (`hosted`)."""
        served = self.hosted
        if host in served:
            return None
        where = f"{', '.join(served)} or their own API" if served else "their own API alone"
        return f"{self.name} streams are served on {where} (name no host)"

    @property
    def recording(self) -> str:
        """How `harness record` records it: `"sdk"` (its SDK's own streamed call, its
        `client.RECORDING`) or `"http"` (a plain streamed POST: `harness._record`)."""
        return str(getattr(self.module("client"), "RECORDING", "http"))

    @property
    def reading(self) -> ModuleType:
        """Its SDK's readers of one streamed request (`READERS`, `create_items`, ...)."""
        return self.module("reading")

    @property
    def readers(self) -> tuple[str, ...]:
        """The names of its SDK's readers (`create` first: the default)."""
        found: tuple[str, ...] = tuple(self.reading.READERS)
        return found

    @property
    def recorded(self) -> Recorded:
        """What import and export read and write of it (its `interop` module's `RECORDED`)."""
        found: Recorded = self.module("interop").RECORDED
        return found

    @property
    def whole_answer(self) -> str:
        """What it answers a non-streaming request with, as a message names it (its
        `Recorded.answer`: `a Message`, `a chat completion`); a neutral name for a
        provider without `interop`."""
        return self.recorded.answer if self.has("interop") else "its whole answer"

    @property
    def guard(self) -> ModuleType:
        """What `harness.strict` reads of its answers (its `guard` module)."""
        return self.module("guard")

    @property
    def tracing(self) -> ModuleType:
        """How a trace names its rows (its `tracing` module)."""
        return self.module("tracing")

    @property
    def catalogue(self) -> tuple[Fault, ...]:
        """Its fault catalogue (its `faults` module's `CATALOGUE`); none without one."""
        if not self.has("faults"):
            return ()
        found: tuple[Fault, ...] = tuple(self.module("faults").CATALOGUE)
        return found

    @property
    def table(self) -> ErrorTable:
        """Its error table (`harness._exceptions.ERROR_TABLES[name]`), registered first."""
        from harness._exceptions import ERROR_TABLES

        self.module("errors")
        return ERROR_TABLES[self.name]

    @property
    def has_profiles(self) -> bool:
        """Whether its streams have compatible-server profiles (a `profiles` module)."""
        return self.has("profiles")

    def adapter_options(self, profile: str | None) -> dict[str, Any]:
        """The adapter keywords of its compatible-server profile `profile` (its `profiles`
        module, docs/profiles.md); none for None. `ValueError` (one line, naming the known
        ones) for a name it does not know, or for a provider that has no profiles."""
        if profile is None:
            return {}
        if not self.has_profiles:
            with_profiles = ", ".join(found.name for found in providers() if found.has_profiles)
            raise ValueError(
                f"profile {profile!r}: profiles are for {with_profiles} streams, not {self.name}"
            )
        return {"profile": self.module("profiles").profile(profile)}

    def request_options(self, header: Mapping[str, Any] | None) -> dict[str, Any]:
        """The adapter keywords a cassette header's request implies (its adapter module's
        `request_options`, where it has one: Chat's reads `tool_choice`, Responses' a
        resume's `starting_after`); none without. Every replay path asks here (direct,
        async, `--via sdk`, the trace), so that they read one cassette alike."""
        request = (header or {}).get("request")
        read = getattr(self.module("adapter"), "request_options", None)
        return read(request) if read is not None and isinstance(request, dict) else {}

    @property
    def to_model_events(self) -> Callable[..., Iterator[ModelEvent]]:
        """The sync driver: `data` objects in, internal events out."""
        driver: Callable[..., Iterator[ModelEvent]] = self.module("adapter").to_model_events
        return driver

    @property
    def ato_model_events(self) -> Callable[..., AsyncIterator[ModelEvent]]:
        """The async driver over the same state machine."""
        driver: Callable[..., AsyncIterator[ModelEvent]] = self.module("adapter").ato_model_events
        return driver


#: The functions whose answers derive from the registry (`registry_cache`): `reset`
#: clears them with it.
_CLEARED: list[Callable[[], None]] = []

F = TypeVar("F", bound=Callable[..., Any])


def registry_cache(function: F) -> F:
    """`functools.cache` for a function whose answer derives from the registry (the
    cassette schema, the server's routes): `reset` forgets its answers too."""
    cached = cache(function)
    _CLEARED.append(cached.cache_clear)
    return cached  # type: ignore[return-value]


@registry_cache
def _found(module: str) -> bool:
    """Whether `module` (a provider's part) exists, looked for once."""
    return importlib.util.find_spec(module) is not None


def _entry_points() -> list[Any]:
    """The entry points of `ENTRY_POINT_GROUP`, of every distribution on the path."""
    from importlib.metadata import entry_points

    return list(entry_points(group=ENTRY_POINT_GROUP))


def _problem(name: str, value: str) -> str | None:
    """Why the entry point `name = value` registers no provider, or None: it must name a
    package (no `:object`), one that is found and holds the required modules, under a
    name no provider has yet."""
    if name in PACKAGES:
        return f"{name!r} is a built-in provider's name"
    if not value or ":" in value:
        return f"{value!r} is not a package's import path (package.name, no :object)"
    try:
        spec = importlib.util.find_spec(value)
    except (ImportError, ValueError) as error:
        return f"cannot find {value}: {error}"
    if spec is None or spec.submodule_search_locations is None:
        return f"no package {value} is installed"
    missing = [part for part in REQUIRED if importlib.util.find_spec(f"{value}.{part}") is None]
    if missing:
        return f"{value} has no {', '.join(missing)} module: not a provider's package"
    return None


@cache
def _registry() -> tuple[dict[str, Provider], dict[str, str]]:
    """(name -> provider, in order; name -> why its entry point was refused), read once:
    the built-in providers, then each entry point of `ENTRY_POINT_GROUP` (the first of a
    name kept), a bad one logged in one line and left out."""
    found = {name: Provider(name, f"{__name__}.{package}") for name, package in PACKAGES.items()}
    bad: dict[str, str] = {}
    for point in _entry_points():
        name, value = str(point.name), str(point.value).strip()
        if name in found and name not in PACKAGES:
            continue  # a second distribution's entry of the name: the first one stands
        problem = _problem(name, value)
        if problem is None:
            found[name] = Provider(name, value)
            continue
        bad.setdefault(name, problem)
        _log.warning(
            "stream-harness: entry point %s = %s (group %s) left out: %s",
            name,
            value,
            ENTRY_POINT_GROUP,
            problem,
        )
    return found, bad


def reset() -> None:
    """Read the registry again at its next use (a distribution installed since, or a
    test's), and forget what was derived from it."""
    _registry.cache_clear()
    for clear in _CLEARED:
        clear()


def names() -> tuple[str, ...]:
    """Every registered provider's name, in the registry's order (built-in ones first)."""
    return tuple(_registry()[0])


def providers() -> tuple[Provider, ...]:
    """Every registered provider, in the registry's order."""
    return tuple(_registry()[0].values())


def refused() -> dict[str, str]:
    """The entry points left out, name -> why (`harness doctor` lists them)."""
    return dict(_registry()[1])


def provider(name: str) -> Provider:
    """The provider registered as `name`; `KeyError` (naming the known ones, or why its
    entry point was left out) if none is."""
    registered, bad = _registry()
    found = registered.get(name)
    if found is not None:
        return found
    if name in bad:
        raise KeyError(f"no provider {name!r}: its entry point was left out: {bad[name]}")
    raise KeyError(f"no provider {name!r} (known: {', '.join(registered)})")


@registry_cache
def sdks() -> tuple[Sdk, ...]:
    """The SDKs the registered providers are read with (those that have a `client`
    module), each once, in the registry's order."""
    found: dict[str, Sdk] = {}
    for each in providers():
        if each.has("client"):
            found.setdefault(each.sdk.package, each.sdk)
    return tuple(found.values())


def sdk_classes(name: str, *, flat_error_body: bool | None = None) -> tuple[type[Any], ...]:
    """The class `name` (`APIError`, `APIStatusError`) of each registered SDK that is
    loaded already (nothing is imported: an SDK's error exists only once it is), of those
    whose API error's body is the error itself if `flat_error_body` says so."""
    return tuple(
        found
        for sdk in sdks()
        if flat_error_body is None or sdk.flat_error_body == flat_error_body
        if (found := sdk.loaded_class(name)) is not None
    )


def check_profile(profile: str | None) -> None:
    """`ValueError` (one line, naming the known ones) unless `profile` is None or a
    compatible-server profile of a provider that has them (docs/profiles.md)."""
    if profile is None:
        return
    with_profiles = [found for found in providers() if found.has_profiles]
    problem: ValueError | None = None
    for found in with_profiles:
        try:
            found.adapter_options(profile)
        except ValueError as error:
            problem = problem or error
        else:
            return
    raise problem or ValueError(f"profile {profile!r}: no provider has profiles")
