"""Record a live stream over plain HTTP, no SDK: a provider whose `client.RECORDING` is
`"http"` (OpenAI's Chat Completions and Responses, Gemini).

`harness record --provider openai-chat|openai-responses|gemini` builds the request from
the same options as for Anthropic (through the provider's `conversation.request_params`,
the one place its request shape is spelled) or takes a request file, POSTs it to the
base URL (`--base-url`, else the variable its SDK reads, `OPENAI_BASE_URL`,
`GOOGLE_GEMINI_BASE_URL`, else the API's own: `Provider.sdk`) plus the path the
provider says: by default the dialect's one endpoint below the SDK's base path (`/v1`),
the body with `"stream": true`; a provider whose path names the model and says it
streams gives its `client.streamed_post(request, base)` (Gemini's
`/v1beta/models/{model}:streamGenerateContent?alt=sse`, the body without `model`).
The key goes as its `client` module's `auth_headers` say (`Authorization: Bearer`,
Gemini's `x-goog-api-key`), read as its SDK reads it (`Sdk.live_key`). The answer is
read as it arrives, as the proxy and import read it
(`harness._record.answer.StreamLines`): each event after an `{"harness": "at", "ms":
N}`, Chat's `[DONE]` as `{"harness": "done"}`. The SDK is not imported (seconds cold):
httpx2 sends the request, so vcrpy records it alike. The cassette's header keeps the
request with its `model`, whatever the wire carries it in.

The guarantees are `harness._record.live`'s, through its helpers: each line goes to a
temporary file beside the cassette as it arrives (memory stays within one event, the
whole stream is never held), which takes the cassette's name only once a whole stream
arrived (an HTTP error, a dropped connection, a body that is not SSE, a stream without
events, `timeout` seconds of silence or more than `max_duration` in all each raise
`RecordError` and leave the old file as it was); the output folders are checked before
the billed request; the key is never written, and never printed: each event is kept as
`kept_line` keeps it (the key masked wherever the server repeats it) before it is
shown or written, and every message is masked too.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from typing import Any, Final

import httpx2
import orjson

from harness._cassette.codec import MAX_LINE_BYTES, make_header, write_cassette
from harness._directives import AT
from harness._exceptions import InputError, OutputError, RecordError
from harness._providers import Provider, provider
from harness._providers.recorded import Recorded
from harness._providers.sse import SSEFormatError
from harness._record.answer import StreamLines
from harness._record.live import (
    _AtomicVcrPersister,
    _check_writable,
    _deadline,
    _exists,
    _load_json,
    _refuse_existing,
    _TooLong,
    _vcr_context,
    _within,
)
from harness._redact import credentials, kept_line, mask, mask_text
from harness._terminal import printable

__all__ = ["build_http_request", "record_over_http"]

#: How much of a refusal's body is read, to say why in one line.
_ERROR_BODY_BYTES: Final = 64 * 1024


def _conversation_field(name: str) -> str:
    """The request field a dialect's conversation goes in (`messages`, `input`), as its
    own `request_params` names it."""
    params = provider(name).module("conversation").request_params
    [field] = set(params(model="", system="", messages=[], tools=[])) - {"model"}
    return str(field)


def build_http_request(
    name: str,
    *,
    request_file: str | None = None,
    model: str | None = None,
    prompt: str | None = None,
    system: str | None = None,
    max_tokens: int | None = None,
    tools: Sequence[str] = (),
) -> dict[str, Any]:
    """A request body of provider `name`: the request file if given, then each option
    given over it (`--tool` adds to its tools, `--max-tokens` to Gemini's
    `generationConfig`). Chat's system prompt is a message, so
    there `--system` needs `--prompt`."""
    request: dict[str, Any] = {}
    if request_file is not None:
        loaded = _load_json(request_file, "the request")
        if not isinstance(loaded, dict):
            raise InputError(f"{request_file}: the request must be a JSON object")
        request.update(loaded)
    conversation = _conversation_field(name)
    if system is not None and prompt is None and conversation == "messages":
        raise InputError(f"--system needs --prompt with --provider {name}: it is a message")
    defined = []
    for spec in tools:
        tool, separator, schema_path = spec.partition("=")
        if not separator or not tool or not schema_path:
            raise InputError(f"--tool {spec!r}: expected NAME=SCHEMA.json")
        schema = _load_json(schema_path, "the tool schema")
        if not isinstance(schema, dict):
            raise InputError(f"{schema_path}: a tool schema must be a JSON object")
        defined.append({"name": tool, "description": "", "input_schema": schema})
    said = [{"role": "user", "content": [{"type": "text", "text": prompt or ""}]}]
    given = (
        provider(name)
        .module("conversation")
        .request_params(
            model=model or "",
            system=system or "",
            messages=said if prompt is not None else [],
            tools=defined,
            max_tokens=max_tokens,
        )
    )
    if model is None:
        given.pop("model")
    if prompt is None:
        given.pop(conversation)
    request.setdefault("tools", []).extend(given.pop("tools", []))
    if not request["tools"]:
        request.pop("tools")
    for field, value in given.items():  # an option adds to an object the file gives
        kept = request.get(field)
        request[field] = (
            {**kept, **value} if isinstance(kept, dict) and isinstance(value, dict) else value
        )
    request.pop("stream", None)
    for required, option in (("model", "--model"), (conversation, "--prompt")):
        if required not in request:
            raise InputError(f"the request has no {required}: give {option} or --request")
    return request


def _post(found: Provider, request: dict[str, Any], base_url: str | None) -> tuple[str, Any]:
    """The URL and body a streamed `request` is POSTed with: its `client` module's
    `streamed_post(request, base)` where the provider gives one (Gemini's: the model in
    the path, `?alt=sse`), else the dialect's one endpoint below its SDK's base path
    (`/v1`) under the base URL (the API's own: OpenAI's `.../v1`), the body with
    `"stream": true`."""
    sdk = found.sdk
    base = (base_url or sdk.base_url).rstrip("/")
    streamed_post = getattr(found.module("client"), "streamed_post", None)
    if streamed_post is not None:
        url, body = streamed_post(request, base)
        return str(url), body
    [endpoint] = found.framing.endpoints
    return base + endpoint.removeprefix(sdk.env.base_path), {**request, "stream": True}


def _refusal(response: httpx2.Response, secrets: tuple[str, ...]) -> RecordError:
    """The one line an HTTP error answer becomes: its status and the API's message."""
    body = b""
    for chunk in response.iter_bytes():
        body += chunk
        if len(body) > _ERROR_BODY_BYTES:
            break
    try:
        answer = orjson.loads(body)
        if isinstance(answer, list) and answer:  # a streamed JSON array's one element
            answer = answer[0]
        error = answer.get("error")
        said = error.get("message") if isinstance(error, dict) else None
    except (orjson.JSONDecodeError, AttributeError):
        said = None
    said = mask_text(str(said or response.reason_phrase or "no message"), secrets)
    return RecordError(f"the API refused the request: {response.status_code} {printable(said)}")


def _stream_lines(
    client: httpx2.Client,
    url: str,
    body: Any,
    headers: dict[str, str],
    reader: StreamLines,
    show: Callable[[str], None],
    text_of: Callable[[dict[str, Any]], str],
    deadline: float,
    secrets: tuple[str, ...],
) -> Iterator[dict[str, Any]]:
    """`at` directives, events as kept (`kept_line`) and the `done` directive, as they
    arrive; `SSEFormatError` at the end of a stream without events."""
    start = time.monotonic()
    with client.stream("POST", url, json=body, headers=headers) as response:
        if response.status_code != 200:
            raise _refusal(response, secrets)
        kind = response.headers.get("content-type", "")
        if not kind.startswith("text/event-stream"):
            raise SSEFormatError(f"content-type is {kind or 'missing'}, not text/event-stream")
        for chunk in _within(response.iter_bytes(), deadline):
            for line in reader.feed(chunk):
                if "harness" not in line:
                    yield {"harness": AT, "ms": round((time.monotonic() - start) * 1000)}
                    line = kept_line(line, secrets)
                    text = text_of(line)
                    if text:
                        show(text)
                yield line
        for line in reader.finish():
            yield line if "harness" in line else kept_line(line, secrets)
    if not reader.events:
        raise SSEFormatError("it held no event")


def record_over_http(
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
    """Stream `request` live from provider `name` and write the cassette at `out`; return
    the number of events. Raises as `harness._record.live.record` does."""
    found = provider(name)
    key = api_key or found.sdk.live_key()
    secrets = credentials(uri=base_url, values=[key])
    if not (timeout > 0 and max_duration > 0):
        raise InputError("--timeout and --max-duration must be more than 0 seconds")
    for path in (out, vcr_path):
        _refuse_existing(path, force)
        _check_writable(path)
    dialect: Recorded = found.recorded
    header = make_header(
        description or f"Recorded from {request['model']}",
        "recorded",
        request=mask(request, secrets),
        recorded_at=datetime.now(UTC),
        model=str(request["model"]),
        provider=name,
    )
    text_of = found.tracing.shown_text
    reader = StreamLines(dialect, max_line=MAX_LINE_BYTES, secrets=secrets)
    persister = _AtomicVcrPersister()
    client = httpx2.Client(timeout=httpx2.Timeout(timeout))
    url, body = _post(found, request, base_url)
    headers = {**found.module("client").auth_headers(key), "accept": "text/event-stream"}
    try:
        with _deadline(max_duration) as deadline, _vcr_context(vcr_path, persister, secrets):
            lines = _stream_lines(
                client, url, body, headers, reader, show, text_of, deadline, secrets
            )
            write_cassette(out, lines, header=header, overwrite=force)
            persister.finished = True
    except FileExistsError:
        raise _exists(out) from None
    except ValueError as error:  # SSEFormatError, or a `data` that is no JSON object
        raise RecordError(
            f"the response is not a stream of events: {mask_text(str(error), secrets)}; "
            "nothing written"
        ) from None
    except _TooLong:
        raise RecordError(
            f"the recording took longer than {max_duration:g} s (--max-duration) after "
            f"{reader.events} events; nothing written"
        ) from None
    except httpx2.TimeoutException:
        raise RecordError(
            f"no byte arrived for {timeout:g} s (--timeout) after {reader.events} events; "
            "nothing written"
        ) from None
    except httpx2.TransportError as error:
        cause = mask_text(str(error), secrets)
        raise RecordError(
            f"connection failed or dropped after {reader.events} events ({cause}); nothing written"
        ) from None
    except OSError as error:
        raise OutputError(f"{out}: cannot write: {error.strerror or error}") from None
    finally:
        client.close()
    return reader.events
