"""The SDK a Messages stream is read with: `anthropic`, its `Anthropic` and `AsyncAnthropic`.

`SDK` says which package and client classes, the API's base URL (its paths start with
`/v1` below it), the variables the client reads (`ANTHROPIC_BASE_URL`,
`ANTHROPIC_API_KEY`); a dependency of the harness, so no extra installs it. A live
recording goes through the SDK itself (`RECORDING`: `harness._record.live`).

`HOSTED` says where else the dialect is served (`harness._hosts`) and which of the SDK's
clients reads it there: `AnthropicBedrock` (Bedrock, its events in AWS event-stream
frames) and `AnthropicVertex` (Vertex, the same SSE). A cassette client of those is
built with dummy credentials passed explicitly (an AWS key pair and region, a Google
access token, project and region), so nothing is read from the user's AWS or Google
configuration; its base URL is the server's address (Bedrock's paths start at the root,
Vertex's below `/v1`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from harness._providers.sdk import ClientEnv, Sdk

__all__ = ["HOSTED", "RECORDING", "SDK"]

SDK: Final = Sdk(
    "anthropic",
    ("Anthropic", "AsyncAnthropic"),
    "https://api.anthropic.com",
    ClientEnv("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"),
    label="Anthropic",
)
#: How `harness record` records a Messages stream: through the SDK's own streamed call.
RECORDING: Final = "sdk"


#: The dummy credentials a hosted cassette client is built with (never the user's).
DUMMY_AWS: Final = {
    "aws_access_key": "AKIDSTREAMHARNESS",
    "aws_secret_key": "stream-harness-dummy-secret",
    "aws_region": "us-east-1",
}
DUMMY_GOOGLE: Final = {
    "region": "us-east5",
    "project_id": "stream-harness",
    "access_token": "dummy",
}


def _hosted_build(credentials: dict[str, str]) -> Callable[..., Any]:
    def build(
        client_class: Callable[..., Any],
        http_client: Any,
        *,
        base_url: str | None,
        api_key: str,
        options: dict[str, Any],
    ) -> Any:
        given = {**credentials, **options}  # the caller's own credentials win
        return client_class(base_url=base_url, http_client=http_client, **given)

    return build


#: Where else Messages is served, and the client reading it there (module docstring).
HOSTED: Final = {
    "bedrock": Sdk(
        "anthropic",
        ("AnthropicBedrock", "AsyncAnthropicBedrock"),
        "https://bedrock-runtime.us-east-1.amazonaws.com",
        ClientEnv("ANTHROPIC_BEDROCK_BASE_URL", "AWS_ACCESS_KEY_ID"),
        label="Anthropic on Bedrock",
        build=_hosted_build(DUMMY_AWS),
    ),
    "vertex": Sdk(
        "anthropic",
        ("AnthropicVertex", "AsyncAnthropicVertex"),
        "https://us-east5-aiplatform.googleapis.com/v1",
        ClientEnv("ANTHROPIC_VERTEX_BASE_URL", "GOOGLE_APPLICATION_CREDENTIALS", "/v1"),
        label="Anthropic on Vertex",
        build=_hosted_build(DUMMY_GOOGLE),
    ),
}
