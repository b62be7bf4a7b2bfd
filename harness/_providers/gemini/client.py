"""The SDK a Gemini stream is read with: `google-genai` (`google.genai.Client`).

One client class serves both ways (`client.aio` is its async face), so `SDK` names
`Client` twice, and an async client closes by `await client.aio.aclose()`
(`Sdk.aclose`). A client is built as google-genai's docs build one over an HTTP client
of one's own: `Client(api_key=..., http_options=HttpOptions(base_url=...,
httpx_client=...))` (`build`; `httpx_async_client` for the async face, which then uses it
rather than aiohttp). Pointed at a server of ours, its base URL is the server's address
itself (the SDK adds `/v1beta/models/...`, `/v1/...` from its release 3), read from
`GOOGLE_GEMINI_BASE_URL`, its key from `GOOGLE_API_KEY`, else `GEMINI_API_KEY` (the
SDK's own order, and its warning when both are set: `Sdk.live_key`). A live recording
is a plain streamed POST (`RECORDING`) to the path `streamed_post` gives, its key sent
as `auth_headers` says.

`harness.strict` puts the guard in the client's HTTP clients (`guarded_copy`): a copy
whose API client sends through the guarded twins of the two the original holds. Which
those are is google-genai's own (its `_api_client`, `_httpx_client`,
`_async_httpx_client`: documented nowhere, held to the release installed by
tests/test_strict_gemini.py).

`HOSTED` says the dialect is served on Vertex too, at its own paths
(`/{version}/projects/.../publishers/google/models/{model}:streamGenerateContent`), read
by the same `Client` built with `vertexai=True` (`build_vertex`): a cassette whose header
names `"host": "vertex"` is answered to that client, built with a dummy project, location
and access token (`DUMMY_VERTEX`), so nothing of the user's Google configuration is read.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, Final
from urllib.parse import quote

from harness._exceptions import InputError
from harness._providers.gemini.framing import ENDPOINTS
from harness._providers.sdk import Sdk
from harness._providers.wire import ClientEnv

__all__ = [
    "API_VERSION",
    "DUMMY_VERTEX",
    "HOSTED",
    "RECORDING",
    "SDK",
    "auth_headers",
    "build",
    "build_vertex",
    "guarded_copy",
    "streamed_post",
]


def build(
    client_class: Any, http_client: Any, *, base_url: str | None, api_key: str, options: Any
) -> Any:
    """A `Client` over `http_client` (sync or async: the SDK takes each under its own
    name), its `http_options` the user's (`http_options=` among `options`) with the base
    URL and the HTTP client set. The options every SDK's client takes are read as
    google-genai says them: `max_retries` N as `retry_options` of N + 1 attempts (0: the
    SDK's own default, no retry), `timeout` (seconds, or an HTTP client's `Timeout`: its
    read timeout) as `timeout` in milliseconds."""
    from google.genai import types

    options = dict(options)
    given = options.pop("http_options", None)
    update: dict[str, Any] = {}
    retries = options.pop("max_retries", None)
    if retries:
        update["retry_options"] = types.HttpRetryOptions(attempts=retries + 1)
    timeout = _seconds(options.pop("timeout", None))
    if timeout is not None:
        update["timeout"] = max(1, round(timeout * 1000))
    which = "httpx_async_client" if hasattr(http_client, "aclose") else "httpx_client"
    update[which] = http_client
    if base_url is not None:
        update["base_url"] = base_url
    if given is None:
        http_options = types.HttpOptions(**update)
    else:
        given = types.HttpOptions.model_validate(given) if isinstance(given, dict) else given
        http_options = given.model_copy(update=update)
    return client_class(api_key=api_key, http_options=http_options, **options)


def _seconds(timeout: Any) -> float | None:
    """A timeout in seconds: a number as it is, an HTTP client's `Timeout` its read's."""
    if timeout is None or isinstance(timeout, int | float):
        return timeout
    read = getattr(timeout, "read", None)
    return read if isinstance(read, int | float) else None


def guarded_copy(client: Any, wrap: Callable[[Any], Any]) -> Any:
    """A copy of a `Client` whose requests, sync and async, go through `wrap(...)` of the
    HTTP clients it holds: the user's own (`httpx_client=`, `httpx_async_client=`), or
    those google-genai built from the same `HttpOptions` (base URL, headers, timeout,
    retries and client args all stay). Its async face then runs on that httpx client,
    as google-genai runs it when given one, never on aiohttp: a client given its own
    `aiohttp_client=`, or on Vertex's mutual-TLS channel (google-auth's sessions), is
    refused (`InputError`), as neither can be guarded."""
    api = client._api_client
    options = api._http_options
    async_http = api._async_httpx_client
    if options.aiohttp_client is not None or async_http is None or api._use_google_auth_sync():
        raise InputError(
            "harness.strict guards a genai.Client's httpx clients: one that sends through "
            "aiohttp_client= or google-auth's mutual-TLS sessions cannot be guarded; "
            "give it httpx_client= and httpx_async_client= in its HttpOptions"
        )
    twin = copy.copy(api)
    twin._aiohttp_sessions = {}  # the original's: never closed by the copy
    # The original closes its own HTTP clients when collected: the copy keeps it alive
    # (`harness.strict(genai.Client(...))` holds no other reference to it).
    twin._harness_guarded = client
    twin._httpx_client = wrap(api._httpx_client)
    twin._async_httpx_client = wrap(async_http)
    twin._http_options = options.model_copy(
        update={"httpx_client": twin._httpx_client, "httpx_async_client": twin._async_httpx_client}
    )
    return _rewired(client, api, twin)


def _rewired(holder: Any, old: Any, new: Any) -> Any:
    """A shallow copy of `holder` (a `Client`, its `aio` face, its `models`, ...) with
    every reference to the API client `old` now to `new`, in it and in what it holds."""
    twin = copy.copy(holder)
    for name, value in vars(holder).items():
        if value is old:
            setattr(twin, name, new)
        elif getattr(value, "_api_client", None) is old:
            setattr(twin, name, _rewired(value, old, new))
    return twin


SDK: Final = Sdk(
    package="google.genai",
    clients=("Client", "Client"),
    base_url="https://generativelanguage.googleapis.com",
    # google-genai's own order (`_api_client.get_env_api_key`): GOOGLE_API_KEY first
    env=ClientEnv(
        "GOOGLE_GEMINI_BASE_URL", "GEMINI_API_KEY", preferred_key_variables=("GOOGLE_API_KEY",)
    ),
    extra="gemini",
    label="Gemini",
    build=build,
    guard_http=guarded_copy,
    aclose=lambda client: client.aio.aclose(),
)
#: How `harness record` records it: a plain streamed POST, no SDK.
RECORDING: Final = "http"


def auth_headers(key: str) -> dict[str, str]:
    """The header the API reads its key from (never `?key=`: a URL is too often shown)."""
    return {"x-goog-api-key": key}


#: The API version a live recording calls: google-genai 2's default (3 calls `v1`; the API
#: serves both).
API_VERSION: Final = "v1beta"


def streamed_post(request: dict[str, Any], base_url: str) -> tuple[str, dict[str, Any]]:
    """The URL and body a live recording POSTs `request` (a header's request: its `model`
    in it) with: the model in the streamed path, as SSE (`alt=sse`, what google-genai
    asks for), the rest as the body. A model named `models/...` is that model."""
    body = dict(request)
    model = str(body.pop("model")).removeprefix("models/")
    path = ENDPOINTS[0].format(version=API_VERSION, model=quote(model, safe=""))
    return f"{base_url}{path}?alt=sse", body


#: The dummy project, location and access token a Vertex cassette client is built with.
DUMMY_VERTEX: Final = {"project": "stream-harness", "location": "us-central1"}
_DUMMY_TOKEN: Final = "harness-replay-no-token"


def build_vertex(
    client_class: Any, http_client: Any, *, base_url: str | None, api_key: str, options: Any
) -> Any:
    """A `Client(vertexai=True, ...)` over `http_client`, as `build` builds one, with a
    dummy project, location and access token (a token already given is never refreshed,
    so no Google credentials are looked for); the caller's own settings win."""
    from google.oauth2.credentials import Credentials

    given = {
        "vertexai": True,
        "credentials": Credentials(token=_DUMMY_TOKEN),  # type: ignore[no-untyped-call]
        **DUMMY_VERTEX,
        **dict(options),
    }

    def vertex_client(api_key: str, **rest: Any) -> Any:  # Vertex takes no API key here
        return client_class(**rest)

    return build(vertex_client, http_client, base_url=base_url, api_key=api_key, options=given)


#: Where else the dialect is served, and the client reading it there (module docstring).
HOSTED: Final = {
    "vertex": Sdk(
        package="google.genai",
        clients=("Client", "Client"),
        base_url="https://us-central1-aiplatform.googleapis.com",
        env=ClientEnv("GOOGLE_VERTEX_BASE_URL", "GOOGLE_CLOUD_PROJECT"),
        extra="gemini",
        label="Gemini on Vertex",
        build=build_vertex,
        aclose=SDK.aclose,  # the same `Client`: its async face closes as the direct API's
    ),
}
