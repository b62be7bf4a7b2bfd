"""The SDK a ConverseStream is read with: boto3's `bedrock-runtime` client.

boto3 takes no HTTP client, so a client here is built over one through botocore's
documented `before-send` event: a handler registered on the client's own event system
answers every request with an `AWSResponse` whose body is the HTTP client's (the
harness's in-process `ReplayTransport`, or any httpx2 client), so the client's request
is signed, sent and read by botocore as ever, its event-stream parser included, and
nothing reaches a socket. The client is made from a botocore session of its own, with
the region and dummy credentials passed explicitly, `~/.aws/config` and
`~/.aws/credentials` set to the empty file, and its settings read from an empty
environment (`AWS_MAX_ATTEMPTS`, `AWS_RETRY_MODE` and every other variable botocore
reads a setting from): nothing is read from the user's AWS configuration or credential
chain, so a cassette's rows answer alike on every machine. `max_retries` and `timeout`
(the keywords replay passes every SDK) become botocore's `Config(retries=...,
read_timeout=...)`; `region_name` and `config` may be given too.

`SDK` says so (`Sdk.build` is `build`); boto3 has no async client (aioboto3 is another
project), so the async family is refused in one line. `harness serve` answers a boto3
client whose `endpoint_url=` is the server, or which reads
`AWS_ENDPOINT_URL_BEDROCK_RUNTIME` (the variable `serve` prints).

A live recording goes through boto3 itself (`RECORDING` is `sdk`), which signs it with
SigV4: `live_client` builds a `bedrock-runtime` client from the user's usual AWS
configuration and credential chain (environment, profile, SSO, instance role: the
harness holds none of them, and keeps none), `live_secrets` are its credentials' values
to mask wherever an answer repeats them, `live_request` the ConverseStream request the
options make, and `live_events` the events `converse_stream` yields for a request kept
as a cassette keeps it (`model` the `modelId`). `live_failure` says a failure of
boto3's in one line. `harness._record.through_sdk` writes the cassette.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Callable, Iterator
from functools import cache
from typing import Any, Final

from harness._exceptions import InputError
from harness._providers.sdk import Sdk
from harness._providers.wire import ClientEnv

__all__ = [
    "DUMMY_SECRET",
    "RECORDING",
    "REGION",
    "SDK",
    "build",
    "live_client",
    "live_events",
    "live_failure",
    "live_request",
    "live_secrets",
]

#: The region a client is made in unless `region_name=` is given.
REGION: Final = "us-east-1"
#: The dummy secret key every client signs with (the access key is the harness's dummy).
DUMMY_SECRET: Final = "harness-replay-no-secret"
#: The files a session of ours reads as `~/.aws/config` and `~/.aws/credentials`: the
#: empty one.
_NO_FILES: Final = {"config_file": os.devnull, "credentials_file": os.devnull}
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


@cache
def _session() -> tuple[Any, threading.Lock]:
    """One isolated botocore session for every client built here, and the lock its
    `create_client` is called under (a session is not thread-safe): it keeps the service
    model and the endpoint rules it read and its handlers, so a client after the first is
    made in about 25 ms, not 60-300 (`harness doctor` and the tests build one a row). A
    client copies the session's event hooks: what is registered on one stays its own."""
    import botocore.session

    session = botocore.session.Session()
    session.register_component("config_store", _settings_without_environment(session))
    for name, value in _NO_FILES.items():
        session.set_config_variable(name, value)
    return session, threading.Lock()


def _settings_without_environment(session: Any) -> Any:
    """`session`'s settings as botocore chains them (the session's own, the environment,
    the config file, the default), the environment read being an empty one: every
    variable botocore reads a setting from is left unread, whichever it is, so a user's
    `AWS_MAX_ATTEMPTS=1` or `AWS_RETRY_MODE=bogus` changes no cassette client."""
    from botocore import configprovider

    chains = configprovider.ConfigChainFactory(session=session, environ={})

    def chained(variables: dict[str, tuple[Any, ...]]) -> dict[str, Any]:
        return {
            name: chains.create_config_chain(
                instance_name=name,
                env_var_names=variable,
                config_property_names=key,
                default=default,
                conversion_func=convert,
            )
            for name, (key, variable, default, convert) in variables.items()
        }

    settings = chained(session.SESSION_VARIABLES)
    sections = {  # beside the session's variables, as botocore's default settings have
        "s3": configprovider.DEFAULT_S3_CONFIG_VARS,  # read by every client, S3's or not
        "proxies_config": configprovider.DEFAULT_PROXIES_CONFIG_VARS,
    }
    for section, variables in sections.items():
        settings[section] = configprovider.SectionConfigProvider(
            section, session, chained(variables)
        )
    return configprovider.ConfigValueStore(mapping=settings)


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
    session, lock = _session()
    with lock:
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
#: How `harness record` records it: through boto3's own `converse_stream` (module docstring).
RECORDING: Final = "sdk"


def live_client(base_url: str | None, timeout: float) -> Any:
    """A `bedrock-runtime` client signing with the user's own AWS credentials (their usual
    chain), no retries, `timeout` seconds of silence at most; `base_url` as its endpoint
    (else boto3's own: `AWS_ENDPOINT_URL_BEDROCK_RUNTIME`, or the region's). `InputError`
    in one line when the chain holds no credentials: the opt-in to a billed call."""
    import botocore.session
    from botocore.config import Config

    session = botocore.session.Session()  # boto3's: the user's configuration and chain
    if session.get_credentials() is None:
        raise InputError(
            "no AWS credentials found (AWS_ACCESS_KEY_ID, AWS_PROFILE, SSO or a role): "
            "recording calls Bedrock (and is billed); set them to opt in"
        )
    config = Config(
        retries={"total_max_attempts": 1, "mode": "standard"},
        read_timeout=timeout,
        connect_timeout=timeout,
    )
    region = session.get_config_variable("region") or REGION
    client = session.create_client(
        "bedrock-runtime", region_name=region, endpoint_url=base_url, config=config
    )
    sent: list[dict[str, str]] = []
    _SENT[client] = sent

    def keep(request: Any, **_: Any) -> None:
        sent.append(
            {
                str(k): v.decode() if isinstance(v, bytes) else str(v)
                for k, v in request.headers.items()
            }
        )

    client.meta.events.register("before-send.bedrock-runtime", keep)
    return client


#: The headers each live client signed and sent (its SigV4 `Authorization`, its token).
_SENT: Final[weakref.WeakKeyDictionary[Any, list[dict[str, str]]]] = weakref.WeakKeyDictionary()


def live_secrets(client: Any) -> tuple[list[str], list[dict[str, str]]]:
    """The values of the client's credentials (access key, secret, session token), and the
    headers it has sent so far (SigV4's `Authorization`, which holds the signature)."""
    frozen = client._request_signer._credentials.get_frozen_credentials()
    values = [value for value in (frozen.access_key, frozen.secret_key, frozen.token) if value]
    return values, list(_SENT.get(client, []))


def live_request(
    *,
    model: str | None,
    prompt: str | None,
    system: str | None,
    max_tokens: int | None,
    tools: list[tuple[str, dict[str, Any]]],
) -> dict[str, Any]:
    """The ConverseStream fields the options give, as a cassette keeps a request (`model`
    for boto3's `modelId`)."""
    request: dict[str, Any] = {}
    if model is not None:
        request["model"] = model
    if prompt is not None:
        request["messages"] = [{"role": "user", "content": [{"text": prompt}]}]
    if system is not None:
        request["system"] = [{"text": system}]
    if max_tokens is not None:
        request["inferenceConfig"] = {"maxTokens": max_tokens}
    if tools:
        specs = [
            {"toolSpec": {"name": name, "inputSchema": {"json": schema}}} for name, schema in tools
        ]
        request["toolConfig"] = {"tools": specs}
    return request


def live_events(client: Any, request: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The events `converse_stream` yields for `request` (its `model` as `modelId`); an
    exception frame raised mid-stream is yielded as the line it was, then the stream ends."""
    from harness._providers.bedrock_converse.reading import error_line

    arguments = {key: value for key, value in request.items() if key not in ("model", "stream")}
    if "modelId" not in arguments:
        arguments["modelId"] = request.get("model")
    stream = client.converse_stream(**arguments)["stream"]
    try:
        yield from stream
    except Exception as error:
        line = error_line(error)
        if line is None:
            raise
        yield line
    finally:
        stream.close()


def live_failure(error: BaseException) -> tuple[str, str] | None:
    """A boto3 failure as (`refused`, `timeout` or `connection`, what it said); None for
    an error of no AWS SDK's."""
    name = type(error).__name__
    module = type(error).__module__
    if not module.startswith(("botocore", "urllib3")):
        return None
    if name in ("ReadTimeoutError", "ConnectTimeoutError"):
        return "timeout", str(error)
    response = getattr(error, "response", None)
    if isinstance(response, dict) and "Error" in response:
        status = (response.get("ResponseMetadata") or {}).get("HTTPStatusCode", "")
        details = response["Error"]
        return "refused", f"{status} {details.get('Code')}: {details.get('Message')}".strip()
    return "connection", str(error)
