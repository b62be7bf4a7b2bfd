"""Record a live stream through a provider's own SDK, which signs the call itself: a
provider whose `client` module gives `live_client`, `live_events` and the rest (Bedrock's
ConverseStream, through boto3's `converse_stream`, SigV4-signed with the user's usual
AWS credentials).

`harness record --provider bedrock-converse` builds the request from the same options
as for the other providers (`--model`, `--prompt`, `--system`, `--max-tokens`, `--tool`,
through the client module's `live_request`, the one place its request shape is spelled)
or takes a request file of the API's fields, and asks the SDK for the stream: the client
(`live_client`) is built from the user's own configuration, never from a key the harness
holds, and the credentials it signs with are written nowhere and masked wherever an
answer repeats them (`live_secrets`). Each event the SDK yields is kept as `kept_line`
keeps it, after an `{"harness": "at", "ms": N}` line; an exception the stream ended in
is the line of its name. The request kept in the header is the API's fields with the
model as `model`, without credentials (`make_header`).

The guarantees are `harness._record.live`'s, through its helpers: the lines go to a
temporary file beside the cassette as they arrive, which takes the cassette's name only
once the stream ended (a refusal, a dropped connection, no event, `timeout` seconds of
silence or more than `max_duration` in all each raise `RecordError` and leave the old
file as it was); the output folder is checked before the billed request. `--vcr` is
not taken: the SDK sends through no HTTP client vcrpy records here.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from importlib.metadata import version
from types import ModuleType
from typing import Any

from harness._cassette.codec import make_header, write_cassette
from harness._directives import AT
from harness._exceptions import InputError, OutputError, RecordError
from harness._providers import Provider, provider
from harness._record.live import (
    _check_writable,
    _deadline,
    _exists,
    _load_json,
    _refuse_existing,
    _TooLong,
)
from harness._redact import credentials, kept_line, mask, mask_text
from harness._terminal import printable

__all__ = ["build_sdk_request", "record_through_sdk", "records_itself"]


def records_itself(found: Provider) -> bool:
    """Whether `harness record` records `found` through its own SDK, which signs the call
    (its `client` module's `live_events`)."""
    return found.recording == "sdk" and hasattr(found.module("client"), "live_events")


def _client(name: str) -> ModuleType:
    return provider(name).module("client")


def build_sdk_request(
    name: str,
    *,
    request_file: str | None = None,
    model: str | None = None,
    prompt: str | None = None,
    system: str | None = None,
    max_tokens: int | None = None,
    tools: Sequence[str] = (),
) -> dict[str, Any]:
    """A request of provider `name`: the request file's fields if given (its model as
    `model` or the SDK's own name for it), then each option given over them."""
    request: dict[str, Any] = {}
    if request_file is not None:
        loaded = _load_json(request_file, "the request")
        if not isinstance(loaded, dict):
            raise InputError(f"{request_file}: the request must be a JSON object")
        request.update(loaded)
    defined = []
    for spec in tools:
        tool, separator, schema_path = spec.partition("=")
        if not separator or not tool or not schema_path:
            raise InputError(f"--tool {spec!r}: expected NAME=SCHEMA.json")
        schema = _load_json(schema_path, "the tool schema")
        if not isinstance(schema, dict):
            raise InputError(f"{schema_path}: a tool schema must be a JSON object")
        defined.append((tool, schema))
    given = _client(name).live_request(
        model=model, prompt=prompt, system=system, max_tokens=max_tokens, tools=defined
    )
    request.update(given)
    if "model" not in request and "modelId" in request:
        request["model"] = request.pop("modelId")
    for required, option in (("model", "--model"), ("messages", "--prompt")):
        if required not in request:
            raise InputError(f"the request has no {required}: give {option} or --request")
    return request


def _secrets(
    client_module: ModuleType, client: Any, known: tuple[str, ...] = ()
) -> tuple[str, ...]:
    """The credentials the client signs with and the headers it sent carry (SigV4's
    `Credential` and `Signature`, the session token), beside those `known`."""
    values, sent = client_module.live_secrets(client)
    found = [*known, *values]
    for headers in sent:
        found += credentials(headers)
    return credentials(values=found)


def _stream_lines(
    client_module: ModuleType,
    client: Any,
    request: dict[str, Any],
    show: Callable[[str], None],
    text_of: Callable[[dict[str, Any]], str],
    seen: list[int],
    deadline: float,
    secrets: tuple[str, ...],
) -> Iterator[dict[str, Any]]:
    start = time.monotonic()
    events: Iterator[dict[str, Any]] = client_module.live_events(client, request)
    for event in events:
        if time.monotonic() > deadline:
            raise _TooLong
        if not seen[0]:  # the request went: its signature is known now
            secrets = _secrets(client_module, client, secrets)
        yield {"harness": AT, "ms": round((time.monotonic() - start) * 1000)}
        kept = kept_line(event, secrets)
        yield kept
        seen[0] += 1
        text = text_of(kept)
        if text:
            show(text)
    if not seen[0]:
        raise ValueError("it held no event")


def record_through_sdk(
    name: str,
    request: dict[str, Any],
    out: str,
    *,
    api_key: str | None = None,
    base_url: str | None = None,
    force: bool = False,
    vcr_path: str | None = None,
    description: str | None = None,
    show: Callable[[str], None] = lambda text: None,
    timeout: float,
    max_duration: float,
) -> int:
    """Stream `request` live through provider `name`'s SDK and write the cassette at `out`;
    the number of events. Raises as `harness._record.live.record` does; `api_key` is not
    used (the SDK signs with the user's own credentials)."""
    if vcr_path is not None:
        raise InputError(f"--vcr is not taken with --provider {name}: its SDK sends the call")
    if not (timeout > 0 and max_duration > 0):
        raise InputError("--timeout and --max-duration must be more than 0 seconds")
    _refuse_existing(out, force)
    _check_writable(out)
    found = provider(name)
    module = found.module("client")
    client = module.live_client(base_url, timeout)
    secrets = _secrets(module, client, credentials(uri=base_url))
    header = make_header(
        description or f"Recorded from {request['model']}",
        "recorded",
        request=mask(request, secrets),
        recorded_at=datetime.now(UTC),
        model=str(request["model"]),
        provider=name,
        sdk_version=version(found.sdk.package),
    )
    seen = [0]
    text_of = found.tracing.shown_text
    try:
        with _deadline(max_duration) as deadline:
            lines = _stream_lines(module, client, request, show, text_of, seen, deadline, secrets)
            write_cassette(out, lines, header=header, overwrite=force)
    except FileExistsError:
        raise _exists(out) from None
    except _TooLong:
        raise RecordError(
            f"the recording took longer than {max_duration:g} s (--max-duration) after "
            f"{seen[0]} events; nothing written"
        ) from None
    except OSError as error:
        raise OutputError(f"{out}: cannot write: {error.strerror or error}") from None
    except Exception as error:
        secrets = _secrets(module, client, secrets)
        failure = module.live_failure(error)
        said = printable(mask_text(str(failure[1] if failure else error), secrets))
        if failure is not None and failure[0] == "refused":
            raise RecordError(f"the API refused the request: {said}") from None
        if failure is not None and failure[0] == "timeout":
            raise RecordError(
                f"no byte arrived for {timeout:g} s (--timeout) after {seen[0]} events; "
                "nothing written"
            ) from None
        if failure is not None:
            raise RecordError(
                f"connection failed or dropped after {seen[0]} events ({said}); nothing written"
            ) from None
        if isinstance(error, ValueError):  # no event, a line nested past the limit
            raise RecordError(
                f"the response is not a stream of events: {said}; nothing written"
            ) from None
        raise
    finally:
        client.close()
    return seen[0]
