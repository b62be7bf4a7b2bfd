"""Providers: one wire dialect each, and everything that dialect decides.

A provider is a private subpackage of its own, registered here by one line of
`PACKAGES`: `anthropic` (Messages `message_*` / `content_block_*` events),
`openai_chat` (Chat Completions chunks, ended by `data: [DONE]`) and `openai_responses`
(Responses `response.*` events). Everything else (the cassette codec and directives,
replay planning, sessions, the commands, trace, coverage, diff, import) takes a provider
name and asks `provider(name)` for what differs, never spelling an event type itself.

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
  answer, endpoints, the request fields replay matches on, a resume, the error shape,
  the environment its SDK's client reads (`ClientEnv`: `serve` and `proxy` print it);
- `faults`: its fault catalogue, rows of `fault_rows` (the row types and the
  provider-neutral wire rows; `harness.faults` is their public face);
- `guard`: what `harness.strict` reads of an answer, an `AnswerReader` (from `answers`);
- `interop`: what import and export read and write of it, its `RECORDED` (a `Recorded`,
  from `recorded`): which calls are its, an SSE body and a plain answer as lines;
- `tracing`: how `harness replay --trace` and `diff --trace` read it, the same functions
  in each: `machine(**options)` a new adapter to feed, `open_items(machine, limit)` its open tool
  blocks (calls, items), `describe(data, nothing, short=...)` a line's event, index and
  text-form head and excerpt, `compared(data, ids=...)` what else of a line two traces
  must share, `shown_text(data)` the text a line carries (as a recording shows it).
An OpenAI dialect adds `reading` (the SDK's readers, driven over a client),
`conversation` (the agent loop's request) and `conform` (what `harness conform` tells an
adapter beside the lines); Anthropic's `message` and `construct` are its `Message` fold
and the SDK's event objects.

Beside them, neutral: `sse`, the one SSE decoder, as the SDKs read a body (CR, LF or
CRLF; no event without its blank line; an event the SDK would drop silently told
apart); `eventstream`, AWS event-stream frames (Bedrock's framing) read as botocore
reads them; `openai_sse` what the openai SDK reads differently, and `openai_framing` the
`data` both OpenAI dialects send; `openai_shared` the little both OpenAI dialects have in
common (their message prefix, a call's arguments read as a JSON object, an `error` line
as `APIErrorEvent`, an SDK object read as its line's dict, the API's error answers).

The subpackages import the flat core and the provider-neutral modules here only, never
each other and never an SDK at import time; this module imports none of them until a
provider is asked for, so the core can load Anthropic's error table (`anthropic.errors`,
pure data) first.

Adding a fourth provider is one new subpackage with those modules and one line here.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from types import ModuleType
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from harness._events import ModelEvent
    from harness._exceptions import ErrorTable
    from harness._providers.wire import Framing

__all__ = ["PACKAGES", "Provider", "provider"]

#: provider name (a cassette header's `provider`) -> its subpackage: the registry.
PACKAGES: Final[dict[str, str]] = {
    "anthropic": "anthropic",
    "openai-chat": "openai_chat",
    "openai-responses": "openai_responses",
}


@dataclass(frozen=True, slots=True)
class Provider:
    """One registered provider: its name and where its modules are, each imported on
    first use."""

    name: str
    package: str

    def module(self, part: str) -> ModuleType:
        """The provider's module `part` (`adapter`, `errors`, ...), imported once."""
        return importlib.import_module(f"{__name__}.{self.package}.{part}")

    @property
    def events_schema(self) -> dict[str, Any]:
        """Its `events.schema.json`: `line`, the definition its event lines match, and the
        `$defs` the cassette schema takes in (`harness._cassette.codec.schema`)."""
        text = resources.files(f"{__name__}.{self.package}").joinpath("events.schema.json")
        loaded: dict[str, Any] = json.loads(text.read_text(encoding="utf-8"))
        return loaded

    @property
    def framing(self) -> Framing:
        """How its lines go over the wire (its `framing` module's `FRAMING`)."""
        found: Framing = self.module("framing").FRAMING
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
        return importlib.util.find_spec(f"{__name__}.{self.package}.profiles") is not None

    def adapter_options(self, profile: str | None) -> dict[str, Any]:
        """The adapter keywords of its compatible-server profile `profile` (its `profiles`
        module, docs/profiles.md); none for None. `ValueError` (one line, naming the known
        ones) for a name it does not know, or for a provider that has no profiles."""
        if profile is None:
            return {}
        if not self.has_profiles:
            with_profiles = ", ".join(name for name in PACKAGES if provider(name).has_profiles)
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


@cache
def provider(name: str) -> Provider:
    """The provider registered as `name`; `KeyError` (naming the known ones) if none is."""
    try:
        return Provider(name, PACKAGES[name])
    except KeyError:
        known = ", ".join(PACKAGES)
        raise KeyError(f"no provider {name!r} (known: {known})") from None
