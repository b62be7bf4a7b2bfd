"""What a provider's `client` module says of the SDK its streams are read with: `Sdk`.

The package and its client classes (sync and async), the pip extra that installs it
(None: a dependency of the harness), the API's base URL (the client's default), the
environment the client reads (`ClientEnv`: its key's and base URL's variables, and what
follows a server's address in the base URL), and how a client is built around an HTTP
client, as the SDK's docs show users building one (`http_client=`, `base_url=`,
`api_key=`): every client the harness makes (a cassette client, a replay's, a recording
one) is built here, with the transport `harness._replay` gives it. Two providers may
share one SDK (OpenAI's Chat Completions and Responses: one `OpenAI` calls both).

Nothing here imports an SDK until a client class is asked for; the SDK's errors are
looked up only in a package already loaded (a client of it means it is).
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import os
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from harness._exceptions import InputError
from harness._providers.wire import ClientEnv

__all__ = ["ClientEnv", "Sdk", "with_http_client"]

_log = logging.getLogger("harness.providers")


def with_http_client(
    client_class: Callable[..., Any],
    http_client: Any,
    *,
    base_url: str | None,
    api_key: str,
    options: dict[str, Any],
) -> Any:
    """A client built as the Anthropic and OpenAI SDKs' docs build one over a custom HTTP
    client: `Client(api_key=..., base_url=..., http_client=..., **options)`."""
    return client_class(api_key=api_key, base_url=base_url, http_client=http_client, **options)


@dataclass(frozen=True, slots=True)
class Sdk:
    """The SDK one provider's streams are read with in user code (module docstring)."""

    #: the package's import name (`anthropic`), what `sdk=` names it by
    package: str
    #: the names of its client classes: sync, then async
    clients: tuple[str, str]
    #: the API's base URL, as the client calls it without one
    base_url: str
    #: the variables the client reads, and what follows a server's address in its base URL
    env: ClientEnv
    #: the pip extra of stream-harness that installs it; None: the harness depends on it
    extra: str | None = None
    #: what else its clients import when built (`botocore`, `AnthropicBedrock`'s signer),
    #: which the extra installs too
    requires: tuple[str, ...] = ()
    #: how a message names its cassettes (`a cassette of OpenAI`); the package's name if empty
    label: str = ""
    #: whether its API error's `body` is the error object itself (the `openai` SDK's),
    #: not the whole answer (`{"error": {...}}`, the `anthropic` SDK's)
    flat_error_body: bool = False
    #: (client class, HTTP client, base_url=, api_key=, options=) -> a client
    build: Callable[..., Any] = with_http_client
    #: a live client's credentials where the SDK and its cloud's own tools find them, as
    #: the client's keywords (`InputError` in one line saying what to set when there are
    #: none); None: the key variable's key (`live_key`). A host's client (Bedrock's,
    #: Vertex's) signs with the user's cloud credentials, never a key of the SDK's own.
    live_credentials: Callable[[], dict[str, Any]] | None = None
    #: (client, wrap) -> a copy of the client sending through `wrap(http_client)` for each
    #: HTTP client it holds (`harness.strict` without middleware: the guard in the HTTP
    #: client); None: `client.with_options(http_client=wrap(client._client))`, the openai
    #: SDK's way (`harness._strict.http_client`)
    guard_http: Callable[[Any, Callable[[Any], Any]], Any] | None = None
    #: (async client) -> the awaitable that closes it; None: `client.close()`, as the
    #: Anthropic and OpenAI SDKs' async clients close (google-genai's: `aio.aclose()`)
    aclose: Callable[[Any], Awaitable[None]] | None = None

    @property
    def named(self) -> str:
        """How a message names its cassettes: `OpenAI`, `Anthropic`."""
        return self.label or self.package

    def module(self) -> ModuleType:
        """The package, imported now; without it (or a parent of it: `google` for
        `google.genai`), or without what its clients require, `InputError` naming the extra
        to install."""
        extra = f'"stream-harness[{self.extra}]"' if self.extra else self.package
        try:
            module = importlib.import_module(self.package)
        except ModuleNotFoundError as error:
            if error.name is None or not f"{self.package}.".startswith(f"{error.name}."):
                raise
            raise InputError(
                f"{self.package}: the SDK is not installed; pip install {extra}"
            ) from None
        for name in self.requires:
            if importlib.util.find_spec(name) is None:
                raise InputError(f"{self.named} needs {name}, not installed; pip install {extra}")
        return module

    def live_key(self) -> str:
        """The key a live client records with, read as the client reads it (the first of
        `env.key_variables` set: a warning, as the SDK's, when more are): the opt-in to a
        billed recording; `InputError` in one line naming the variables without one."""
        env = self.env
        found = [name for name in env.key_variables if os.environ.get(name)]
        if not found:
            raise InputError(
                f"{env.key_names} is not set: recording calls the live API (and is billed); "
                "set it to opt in"
            )
        if len(found) > 1:
            said = " and ".join(found)
            _log.warning("%s are set: using %s, as %s does", said, found[0], self.package)
        return os.environ[found[0]]

    def has_live_key(self) -> bool:
        """Whether one of the variables the client reads its key from is set."""
        return any(os.environ.get(name) for name in self.env.key_variables)

    def live_options(self) -> dict[str, Any]:
        """A live client's credentials, as its keywords: `api_key` from the key variable
        (`live_key`), or a host's `live_credentials`: the opt-in to a billed call;
        `InputError` in one line saying what to set without them."""
        if self.live_credentials is None:
            return {"api_key": self.live_key()}
        return self.live_credentials()

    def live_client(
        self,
        http_client: Any,
        *,
        asynchronous: bool,
        base_url: str | None,
        credentials: dict[str, Any],
        **options: Any,
    ) -> Any:
        """A live client (sync or async) over `http_client` with `credentials`
        (`live_options()`): a host's built as its users build one, no dummy in it."""
        if self.live_credentials is None:
            return self.client(
                http_client, asynchronous=asynchronous, base_url=base_url, **credentials, **options
            )
        client_class = self.client_class(asynchronous=asynchronous)
        return client_class(http_client=http_client, base_url=base_url, **credentials, **options)

    def client_class(self, *, asynchronous: bool) -> Any:
        """Its sync or async client class (the SDK imported here)."""
        return getattr(self.module(), self.clients[1 if asynchronous else 0])

    def loaded(self) -> ModuleType | None:
        """The package if it is loaded already (nothing imported here)."""
        return sys.modules.get(self.package)

    def loaded_class(self, name: str) -> type[Any] | None:
        """Its class `name` (`APIError`, `OpenAI`) if the package is loaded and has one."""
        module = self.loaded()
        found = getattr(module, name, None) if module is not None else None
        return found if isinstance(found, type) else None

    def is_client(self, client: object) -> bool:
        """Whether `client` is one of its clients (told without importing the SDK)."""
        classes = tuple(found for name in self.clients if (found := self.loaded_class(name)))
        return bool(classes) and isinstance(client, classes)

    async def close_async(self, client: Any) -> None:
        """Close an async client of the SDK (`aclose`, else its own `close()`)."""
        await (client.close() if self.aclose is None else self.aclose(client))

    def client(
        self,
        http_client: Any,
        *,
        asynchronous: bool,
        api_key: str,
        base_url: str | None,
        **options: Any,
    ) -> Any:
        """A client of the SDK (sync or async) over `http_client`."""
        client_class = self.client_class(asynchronous=asynchronous)
        return self.build(
            client_class, http_client, base_url=base_url, api_key=api_key, options=options
        )
