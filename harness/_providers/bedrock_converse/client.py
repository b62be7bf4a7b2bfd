"""The SDK a ConverseStream is read with: boto3's `bedrock-runtime` client.

boto3 takes no HTTP client, so a client here is built over one through botocore's
documented `before-send` event: a handler registered on the client's own event system
answers every request with an `AWSResponse` whose body is the HTTP client's (the
harness's in-process `ReplayTransport`, or any httpx2 client), so the client's request
is signed, sent and read by botocore as ever, its event-stream parser included, and
nothing reaches a socket. The client is made from a botocore session of its own, with
the region and dummy credentials passed explicitly, and `~/.aws/config` and
`~/.aws/credentials` set to the empty file: nothing is read from the user's AWS
configuration or credential chain. `max_retries` and `timeout` (the keywords replay
passes every SDK) become botocore's `Config(retries=..., read_timeout=...)`; `region_name`
and `config` may be given too.

`SDK` says so (`Sdk.build` is `build`); boto3 has no async client (aioboto3 is another
project), so the async family is refused in one line. `harness serve` answers a boto3
client whose `endpoint_url=` is the server, or which reads
`AWS_ENDPOINT_URL_BEDROCK_RUNTIME` (the variable `serve` prints). `RECORDING` is `http`,
but a live recording is not done yet (SigV4 signing): `auth_headers` refuses it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any, Final

from harness._exceptions import InputError
from harness._providers.sdk import Sdk
from harness._providers.wire import ClientEnv

__all__ = ["DUMMY_SECRET", "RECORDING", "REGION", "SDK", "auth_headers", "build"]

#: The region a client is made in unless `region_name=` is given.
REGION: Final = "us-east-1"
#: The dummy secret key every client signs with (the access key is the harness's dummy).
DUMMY_SECRET: Final = "harness-replay-no-secret"
#: The session variables read from no environment variable and no file: no profile,
#: and the empty file as `~/.aws/config` and `~/.aws/credentials` (botocore's
#: `session_vars`: name -> (config key, environment variable, default, converter)).
_ISOLATED: Final = {
    "profile": (None, None, None, None),
    "config_file": (None, None, os.devnull, None),
    "credentials_file": (None, None, os.devnull, None),
}
#: botocore's default read timeout, used when none is given.
_READ_TIMEOUT: Final = 60.0


class _Body:
    """An HTTP client's streamed response as botocore reads a raw body: `stream()`."""

    def __init__(self, response: Any) -> None:
        self._response = response

    def stream(self, amt: int | None = None, decode_content: bool | None = None) -> Iterator[bytes]:
        try:
            yield from self._response.iter_raw()
        finally:
            self._response.close()

    def read(self, amt: int | None = None, decode_content: bool | None = None) -> bytes:
        return b"".join(self.stream())

    def close(self) -> None:
        self._response.close()


def _sender(http_client: Any, timeout: float) -> Callable[..., Any]:
    """The `before-send` handler answering each prepared request through `http_client`."""
    from botocore.awsrequest import AWSResponse

    def send(request: Any, **_: Any) -> Any:
        body = request.body
        if hasattr(body, "read"):
            body = body.read()
        if isinstance(body, str):
            body = body.encode()
        headers = {
            str(name): value.decode() if isinstance(value, bytes) else str(value)
            for name, value in request.headers.items()
        }
        sent = http_client.build_request(
            request.method, request.url, headers=headers, content=body or b"", timeout=timeout
        )
        response = http_client.send(sent, stream=True)
        return AWSResponse(
            request.url, response.status_code, dict(response.headers), _Body(response)
        )

    return send


def build(
    client_class: Any,
    http_client: Any,
    *,
    base_url: str | None,
    api_key: str,
    options: dict[str, Any],
) -> Any:
    """A `bedrock-runtime` client answered through `http_client` (module docstring)."""
    if callable(getattr(http_client, "aclose", None)):
        raise InputError(
            "boto3 has no async client: a bedrock-converse cassette is read with the sync one"
        )
    import botocore.session
    from botocore.config import Config

    given = dict(options)
    retries = given.pop("max_retries", None)
    timeout = given.pop("timeout", None)
    region = given.pop("region_name", REGION)
    config = given.pop("config", None)
    if given:
        raise InputError(
            f"a bedrock-runtime cassette client takes no {', '.join(sorted(given))}: "
            "give region_name=, config=, max_retries= or timeout="
        )
    read_timeout = float(timeout) if isinstance(timeout, int | float) else _READ_TIMEOUT
    settings: dict[str, Any] = {"read_timeout": read_timeout}
    if retries is not None:
        settings["retries"] = {"total_max_attempts": int(retries) + 1, "mode": "standard"}
    made = Config(**settings)
    session = botocore.session.Session(session_vars=_ISOLATED)
    client = session.create_client(
        "bedrock-runtime",
        region_name=region,
        endpoint_url=base_url,
        aws_access_key_id=api_key,
        aws_secret_access_key=DUMMY_SECRET,
        config=made.merge(config) if config is not None else made,
    )
    client.meta.events.register("before-send.bedrock-runtime", _sender(http_client, read_timeout))
    return client


#: boto3, its `bedrock-runtime` client: built by `build`, never by `client_class`.
SDK: Final = Sdk(
    "boto3",
    ("client", "client"),
    "https://bedrock-runtime.us-east-1.amazonaws.com",
    ClientEnv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", "AWS_ACCESS_KEY_ID"),
    extra="bedrock",
    label="Bedrock Converse",
    build=build,
)
#: How `harness record` records it: not yet (`auth_headers` says so).
RECORDING: Final = "http"


def auth_headers(api_key: str) -> dict[str, str]:
    """A live recording would sign with SigV4: not done yet, refused in one line."""
    raise InputError(
        "harness record does not record bedrock-converse yet: record with boto3 "
        "(converse_stream) and write the events it yields as the cassette's lines"
    )
