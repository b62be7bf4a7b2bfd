"""The SDK a Gemini stream is read with: `google-genai` (`google.genai.Client`).

One client class serves both ways (`client.aio` is its async face), so `SDK` names
`Client` twice. A client is built as google-genai's docs build one over an HTTP client
of one's own: `Client(api_key=..., http_options=HttpOptions(base_url=...,
httpx_client=...))` (`build`). Pointed at a server of ours, its base URL is the
server's address itself (the SDK adds `/v1beta/models/...`), read from
`GOOGLE_GEMINI_BASE_URL`, its key from `GEMINI_API_KEY`. A live recording is a plain
streamed POST (`RECORDING`), its key sent as `auth_headers` says.
"""

from __future__ import annotations

from typing import Any, Final

from harness._providers.sdk import Sdk
from harness._providers.wire import ClientEnv

__all__ = ["RECORDING", "SDK", "auth_headers", "build"]


def build(
    client_class: Any, http_client: Any, *, base_url: str | None, api_key: str, options: Any
) -> Any:
    """A `Client` over `http_client` (sync or async: the SDK takes each under its own name)."""
    from google.genai import types

    which = "httpx_async_client" if hasattr(http_client, "aclose") else "httpx_client"
    http_options = types.HttpOptions(base_url=base_url, **{which: http_client})
    return client_class(api_key=api_key, http_options=http_options, **options)


SDK: Final = Sdk(
    package="google.genai",
    clients=("Client", "Client"),
    base_url="https://generativelanguage.googleapis.com",
    env=ClientEnv("GOOGLE_GEMINI_BASE_URL", "GEMINI_API_KEY"),
    extra="gemini",
    label="Gemini",
    build=build,
)
#: How `harness record` records it: a plain streamed POST, no SDK.
RECORDING: Final = "http"


def auth_headers(key: str) -> dict[str, str]:
    """The header the API reads its key from."""
    return {"x-goog-api-key": key}
