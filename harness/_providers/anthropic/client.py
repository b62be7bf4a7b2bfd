"""The SDK a Messages stream is read with: `anthropic`, its `Anthropic` and `AsyncAnthropic`.

`SDK` says which package and client classes, the API's base URL (its paths start with
`/v1` below it), the variables the client reads (`ANTHROPIC_BASE_URL`,
`ANTHROPIC_API_KEY`); a dependency of the harness, so no extra installs it. A live
recording goes through the SDK itself (`RECORDING`: `harness._record.live`).

`HOSTED` says where else the dialect is served (`harness._hosts`) and which of the SDK's
clients reads it there: `AnthropicBedrock` (Bedrock, its events in AWS event-stream
frames) and `AnthropicVertex` (Vertex, the same SSE). A cassette client of those is
built with dummy credentials passed explicitly (a Bedrock API key and region, a Google
access token, project and region), so nothing is read from the user's AWS or Google
configuration; its base URL is the server's address (Bedrock's paths start at the root,
Vertex's below `/v1`). A live one (a recording) is built as the user builds theirs with
no credentials given: the SDK finds them where the cloud's own tools do (`live_bedrock`:
a Bedrock API key, else AWS's credential chain; `live_vertex`: Google's application
default credentials), and nothing of them is written (the recording masks what it sends).
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable
from typing import Any, Final

from harness._exceptions import InputError
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


#: The dummy credentials a hosted cassette client is built with (never the user's): on
#: Bedrock a dummy API key (the bearer token `AnthropicBedrock` takes since Bedrock's API
#: keys), so no AWS session is made, which would read the user's profile and config
#: (`AWS_PROFILE`, `~/.aws/config`); an SDK too old to take one signs with a dummy key
#: pair. On Vertex, a dummy access token, project and region: no Google credentials.
DUMMY_AWS: Final = {"aws_region": "us-east-1"}
DUMMY_AWS_TOKEN: Final = {"api_key": "harness-replay-no-key"}
DUMMY_AWS_KEYS: Final = {
    "aws_access_key": "AKIDSTREAMHARNESS",
    "aws_secret_key": "stream-harness-dummy-secret",
}
DUMMY_GOOGLE: Final = {
    "region": "us-east5",
    "project_id": "stream-harness",
    "access_token": "dummy",
}


def _bedrock_credentials(client_class: Callable[..., Any]) -> dict[str, str]:
    takes_key = "api_key" in inspect.signature(client_class).parameters
    return {**DUMMY_AWS, **(DUMMY_AWS_TOKEN if takes_key else DUMMY_AWS_KEYS)}


def _hosted_build(
    credentials: Callable[[Callable[..., Any]], dict[str, str]],
) -> Callable[..., Any]:
    def build(
        client_class: Callable[..., Any],
        http_client: Any,
        *,
        base_url: str | None,
        api_key: str,
        options: dict[str, Any],
    ) -> Any:
        given = {**credentials(client_class), **options}  # the caller's own settings win
        return client_class(base_url=base_url, http_client=http_client, **given)

    return build


#: What a live call to a host costs: said with what is missing, so the user knows the opt-in.
_BILLED: Final = "a recording calls {} live (and is billed)"
#: The extra that installs what the hosts' clients need (`anthropic[bedrock,vertex]`), as
#: every missing-extra message names it (`Sdk.module`).
_HOSTS_EXTRA: Final = "bedrock"


def live_bedrock() -> dict[str, str]:
    """`AnthropicBedrock`'s keywords for a live call: the region alone, once a Bedrock API
    key (`AWS_BEARER_TOKEN_BEDROCK`) or AWS credentials are found (the client then reads
    and signs with them itself); `InputError` naming what to set otherwise."""
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    if not os.environ.get("AWS_BEARER_TOKEN_BEDROCK"):
        try:
            from botocore.session import get_session
        except ImportError:
            raise InputError(
                f'botocore is not installed: pip install "stream-harness[{_HOSTS_EXTRA}]"'
            ) from None
        session = get_session()  # what boto3, and so the SDK's signing, reads
        if session.get_credentials() is None:
            raise InputError(
                f"no AWS credentials found: {_BILLED.format('Bedrock')}; set "
                "AWS_BEARER_TOKEN_BEDROCK, or credentials the AWS CLI finds (AWS_ACCESS_KEY_ID "
                "and AWS_SECRET_ACCESS_KEY, AWS_PROFILE), to opt in"
            )
        region = region or session.get_config_variable("region")
    if not region:
        raise InputError("no AWS region for Bedrock: set AWS_REGION")
    return {"aws_region": region}


def live_vertex() -> dict[str, Any]:
    """`AnthropicVertex`'s keywords for a live call: the region (`CLOUD_ML_REGION`), the
    project (`ANTHROPIC_VERTEX_PROJECT_ID`, else the credentials') and Google's application
    default credentials; `InputError` naming what to set otherwise."""
    region = os.environ.get("CLOUD_ML_REGION")
    if not region:
        raise InputError(
            f"CLOUD_ML_REGION is not set: {_BILLED.format('Vertex')}; set it to opt in"
        )
    try:
        import google.auth
        from google.auth.exceptions import DefaultCredentialsError
    except ImportError:
        raise InputError(
            f'google-auth is not installed: pip install "stream-harness[{_HOSTS_EXTRA}]"'
        ) from None
    scope = "https://www.googleapis.com/auth/cloud-platform"
    try:
        credentials, project = google.auth.default(scopes=[scope])
    except DefaultCredentialsError:
        raise InputError(
            f"no Google credentials found: {_BILLED.format('Vertex')}; run gcloud auth "
            "application-default login, or set GOOGLE_APPLICATION_CREDENTIALS, to opt in"
        ) from None
    project = os.environ.get("ANTHROPIC_VERTEX_PROJECT_ID") or project
    if not project:
        raise InputError("no Google Cloud project for Vertex: set ANTHROPIC_VERTEX_PROJECT_ID")
    return {"region": region, "project_id": project, "credentials": credentials}


#: Where else Messages is served, and the client reading it there (module docstring).
HOSTED: Final = {
    "bedrock": Sdk(
        "anthropic",
        ("AnthropicBedrock", "AsyncAnthropicBedrock"),
        "https://bedrock-runtime.us-east-1.amazonaws.com",
        ClientEnv("ANTHROPIC_BEDROCK_BASE_URL", "AWS_BEARER_TOKEN_BEDROCK"),
        extra=_HOSTS_EXTRA,
        requires=("botocore",),
        label="Anthropic on Bedrock",
        build=_hosted_build(_bedrock_credentials),
        live_credentials=live_bedrock,
    ),
    "vertex": Sdk(
        "anthropic",
        ("AnthropicVertex", "AsyncAnthropicVertex"),
        "https://us-east5-aiplatform.googleapis.com/v1",
        ClientEnv("ANTHROPIC_VERTEX_BASE_URL", "ANTHROPIC_VERTEX_PROJECT_ID", "/v1"),
        extra=_HOSTS_EXTRA,
        label="Anthropic on Vertex",
        build=_hosted_build(lambda client_class: dict(DUMMY_GOOGLE)),
        live_credentials=live_vertex,
    ),
}
