"""`harness.strict` for an SDK client without middleware (openai): the guard in its HTTP client.

The openai SDK has no middleware hook; it sends every request through the `httpx2` (or
`httpx`) client it holds, and takes another through `http_client=`. `strict_openai`
copies the SDK client (`with_options(http_client=...)`) with `GuardedClient` in place of
its HTTP client: a client of the same library and kind (sync, async) that hands
`build_request` and `send` to the original HTTP client, so its transport, proxies,
mounts, hooks, auth, headers and limits all stay, and puts the guard in front of each
answer `send` returns (`transport.guard_response`) before the SDK reads a byte of it. A
`StreamProtocolError` raised there, or from the body, is also the SDK's `APIError`
(`harness._strict.sdk_errors`), which the SDK hands its caller as it is, neither retried
nor wrapped.

The SDK documents no way to read the HTTP client it holds: it is read from the client's
`_client` attribute, the one place it keeps it (openai 3.x); `tests/test_strict_openai.py`
holds that to the version installed. Another SDK without middleware says how its
copy is made around the guarded HTTP clients (`Sdk.guard_http`: google-genai holds two,
sync and async); `strict_http` asks it.
"""

from __future__ import annotations

import sys
from collections.abc import Collection
from functools import cache
from typing import TYPE_CHECKING, Any, TypeVar

from harness._strict.transport import aguard_response, check_for, guard_response, http_library

if TYPE_CHECKING:
    from openai import AsyncOpenAI, OpenAI

    from harness._providers.sdk import Sdk

__all__ = ["guarded_http_client", "strict_http", "strict_openai"]

OpenAIClient = TypeVar("OpenAIClient", "OpenAI", "AsyncOpenAI")


@cache
def _classes(module_name: str) -> tuple[type[Any], type[Any]]:
    """The guarded sync and async clients of `httpx2` or `httpx`, each a client of that
    library (the SDK accepts either, and reads which it was given)."""
    module: Any = sys.modules[module_name]

    class GuardedClient(module.Client):  # type: ignore[misc]
        """An HTTP client that sends through `inner` and guards each answer."""

        def __init__(self, inner: Any, allowed: Collection[str], profile: str | None) -> None:
            # Its own transport is never used: `inner` sends.
            super().__init__(transport=module.BaseTransport(), trust_env=False)
            self.inner = inner
            self.allowed = frozenset(allowed)
            self.profile = profile

        def build_request(self, *args: Any, **kwargs: Any) -> Any:
            return self.inner.build_request(*args, **kwargs)

        def send(self, request: Any, *, stream: bool = False, **kwargs: Any) -> Any:
            response = self.inner.send(request, stream=True, **kwargs)
            try:
                check = check_for(request, response, self.allowed, self.profile)
                if check is not None:
                    guard_response(response, check)
                if not stream:
                    response.read()
            except BaseException:
                response.close()
                raise
            return response

        @property
        def is_closed(self) -> bool:
            return bool(self.inner.is_closed)

        def close(self) -> None:
            self.inner.close()

    class AsyncGuardedClient(module.AsyncClient):  # type: ignore[misc]
        """An async HTTP client that sends through `inner` and guards each answer."""

        def __init__(self, inner: Any, allowed: Collection[str], profile: str | None) -> None:
            super().__init__(transport=module.AsyncBaseTransport(), trust_env=False)
            self.inner = inner
            self.allowed = frozenset(allowed)
            self.profile = profile

        def build_request(self, *args: Any, **kwargs: Any) -> Any:
            return self.inner.build_request(*args, **kwargs)

        async def send(self, request: Any, *, stream: bool = False, **kwargs: Any) -> Any:
            response = await self.inner.send(request, stream=True, **kwargs)
            try:
                check = check_for(request, response, self.allowed, self.profile)
                if check is not None:
                    await aguard_response(response, check)
                if not stream:
                    await response.aread()
            except BaseException:
                await response.aclose()
                raise
            return response

        @property
        def is_closed(self) -> bool:
            return bool(self.inner.is_closed)

        async def aclose(self) -> None:
            await self.inner.aclose()

    return GuardedClient, AsyncGuardedClient


def guarded_http_client(
    inner: Any, allowed: Collection[str] = (), profile: str | None = None
) -> Any:
    """An HTTP client like `inner` (an `httpx2` or `httpx` client, sync or async, the SDK's
    own default one included) that sends through it and guards each answer (Chat answers
    under `profile`, if given)."""
    name = http_library(inner)
    sync, async_ = _classes(name)
    return (
        async_(inner, allowed, profile)
        if isinstance(inner, sys.modules[name].AsyncClient)
        else sync(inner, allowed, profile)
    )


def strict_http(client: Any, sdk: Sdk, allowed: Collection[str], profile: str | None = None) -> Any:
    """A copy of a client of `sdk` whose answers pass the guard: through `sdk.guard_http`
    (google-genai's: each HTTP client it holds wrapped), else as `strict_openai`."""
    if sdk.guard_http is None:
        return strict_openai(client, allowed, profile)
    return sdk.guard_http(client, lambda http: guarded_http_client(http, allowed, profile))


def strict_openai(
    client: OpenAIClient, allowed: Collection[str], profile: str | None = None
) -> OpenAIClient:
    """A copy of an `openai.OpenAI` or `AsyncOpenAI` whose answers pass the guard."""
    http = client._client  # undocumented: where the SDK holds its HTTP client (see module)
    return client.with_options(http_client=guarded_http_client(http, allowed, profile))
