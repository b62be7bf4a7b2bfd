"""Record a live Messages stream into a cassette: opt-in, and never with a credential.

The request is built from options or a request file, sent with the Anthropic SDK
(`stream=True`, no retries), and the raw SSE events are read as the API sent them
(`harness._providers.sse`, before any parsing). The cassette holds a header
(`source: recorded`, SDK version, model, the request without credentials, UTC time) and
every event in arrival order, each preceded by a directive `{"harness": "at", "ms": N}`:
its arrival offset in milliseconds from the request, which plain replay passes over and
`harness replay --realtime` sleeps to.

Each line goes to a temporary file beside the cassette as it arrives, so memory stays
within one event however long the stream (vcrpy, with a vcr path, holds the whole body
itself); the file takes the cassette's name only once a whole stream of events arrived,
and every file is left as it was otherwise: a refused request, a dropped connection, a
response that is not `text/event-stream`, an SSE `data:` field that is not a JSON event,
a stream with no event, `timeout` seconds without a byte, or a recording longer than
`max_duration`.
The output folders are checked writable before the (billed) request is sent. The key
is never written nor printed: each event is kept as `kept_line` keeps it (credential-like
fields removed, the key masked wherever the server repeats it) before it is shown or
written, and each message of a failure is masked too.

With a vcr path, the HTTP exchange is also saved as a vcrpy cassette; its request (URI,
headers, JSON body at any depth) and response headers go through the one redaction
(`harness._redact`), and the key is masked in the bodies it keeps. vcrpy reads the whole
response body before the SDK sees it, so with it the offsets all fall near the stream's
end and the text appears at once.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from types import FrameType
from typing import TYPE_CHECKING, Any, Final

import httpx2

from harness._cassette.codec import make_header, write_cassette
from harness._cassette.request import CapturedRequest, json_body
from harness._cassette.sessions import turn_path
from harness._directives import AT
from harness._exceptions import ANTHROPIC, InputError, OutputError, RecordError
from harness._files import atomic_write, check_can_create
from harness._hosts import hosted_at
from harness._providers import provider
from harness._providers.anthropic.tracing import shown_text
from harness._providers.recorded import Recorded
from harness._providers.sse import SSEFormatError, events_from_response
from harness._providers.wire import request_path
from harness._record.answer import lines_of_answer, recorded_dialect
from harness._redact import (
    credentials,
    is_secret_name,
    kept_line,
    mask,
    mask_text,
    redact,
    redact_uri,
)

if TYPE_CHECKING:
    from anthropic import Anthropic


__all__ = [
    "RecordingTransport",
    "api_key_from_environment",
    "build_request",
    "record",
]

#: Parameters of `messages.create` that are not fields of the request body.
NOT_BODY_FIELDS: Final = frozenset(
    {"extra_headers", "extra_query", "extra_body", "timeout", "stream"}
)
DEFAULT_MAX_TOKENS: Final = 1024
#: Seconds without a byte from the server before a recording is given up (`--timeout`).
DEFAULT_TIMEOUT: Final = 60.0
#: Seconds a whole recording may take (`--max-duration`): 30 minutes.
DEFAULT_MAX_DURATION: Final = 1800.0


def _load_json(path: str, what: str) -> Any:
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except OSError as error:
        raise InputError(f"{path}: cannot read {what}: {error.strerror}") from None
    except json.JSONDecodeError as error:
        raise InputError(f"{path}:{error.lineno}: {what} is not JSON: {error.msg}") from None


def build_request(
    *,
    request_file: str | None = None,
    model: str | None = None,
    prompt: str | None = None,
    system: str | None = None,
    max_tokens: int | None = None,
    tools: Sequence[str] = (),
) -> dict[str, Any]:
    """A Messages request body: the request file if given, then each option given over it.

    `tools` are `NAME=SCHEMA.json` specs; the file holds the tool's input JSON Schema.
    """
    request: dict[str, Any] = {}
    if request_file is not None:
        loaded = _load_json(request_file, "the request")
        if not isinstance(loaded, dict):
            raise InputError(f"{request_file}: the request must be a JSON object")
        request.update(loaded)
    if model is not None:
        request["model"] = model
    if system is not None:
        request["system"] = system
    if prompt is not None:
        request["messages"] = [{"role": "user", "content": prompt}]
    if max_tokens is not None or "max_tokens" not in request:
        request["max_tokens"] = max_tokens or DEFAULT_MAX_TOKENS
    for spec in tools:
        name, separator, schema_path = spec.partition("=")
        if not separator or not name or not schema_path:
            raise InputError(f"--tool {spec!r}: expected NAME=SCHEMA.json")
        schema = _load_json(schema_path, "the tool schema")
        if not isinstance(schema, dict):
            raise InputError(f"{schema_path}: a tool schema must be a JSON object")
        request.setdefault("tools", []).append({"name": name, "input_schema": schema})
    request.pop("stream", None)
    for required, option in (("model", "--model"), ("messages", "--prompt")):
        if required not in request:
            raise InputError(f"the request has no {required}: give {option} or --request")
    return request


def api_key_from_environment() -> str:
    """The default provider's key (`ANTHROPIC_API_KEY`), the opt-in to a live recording;
    `InputError` without it."""
    return provider(ANTHROPIC).sdk.live_key()


def _exists(path: str) -> InputError:
    return InputError(f"{path}: already exists (use --force to replace it)")


def _refuse_existing(path: str | None, force: bool) -> None:
    if path is not None and os.path.exists(path) and not force:
        raise _exists(path)


def check_base_url(url: str, named: str) -> None:
    """`InputError` (naming the option or variable `url` came from, the URL without its
    credentials) unless `url` is an http(s) URL with a host: every request to it would
    fail. `harness record --base-url` and `harness proxy --upstream` check it before any."""
    from yarl import URL

    problem = None
    if not url.startswith(("http://", "https://")):
        problem = "is not an http(s) URL"
    else:
        try:
            parsed = URL(url)
            parsed.port  # noqa: B018 (yarl checks the port when asked for it)
        except ValueError as error:
            problem = f"is not a URL: {error}"
        else:
            problem = None if parsed.host else "names no host"
    if problem is not None:
        raise InputError(f"{named} {redact_uri(url)!r} {problem}")


def _check_writable(path: str | None) -> None:
    """`InputError` unless a file can be created beside `path`: checked before billing."""
    if path is None:
        return
    if os.path.isdir(path):
        raise InputError(f"{path}: is a folder, not a file to write")
    folder = os.path.dirname(os.path.abspath(path))
    try:
        check_can_create(folder)
    except OSError as error:
        raise InputError(f"{path}: cannot write in {folder}: {error.strerror or error}") from None


class _TooLong(BaseException):
    """The recording passed `max_duration`; a BaseException, so no library wraps it."""


@contextlib.contextmanager
def _deadline(seconds: float) -> Iterator[float]:
    """Yield the monotonic deadline; in the main thread an alarm also raises `_TooLong` there,
    which interrupts even a read that vcrpy makes of the whole body. An alarm someone
    else set (pytest-timeout, the caller's own) is left alone: the chunk check remains."""
    deadline = time.monotonic() + seconds
    alarm_taken = signal.getsignal(signal.SIGALRM) not in (signal.SIG_DFL, None) or any(
        signal.getitimer(signal.ITIMER_REAL)
    )
    if alarm_taken or threading.current_thread() is not threading.main_thread():
        yield deadline
        return

    def expire(signum: int, frame: FrameType | None) -> None:
        raise _TooLong

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield deadline
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _within(chunks: Iterator[bytes], deadline: float) -> Iterator[bytes]:
    """The body's chunks, until the deadline: keep-alive comments do not extend it."""
    for chunk in chunks:
        if time.monotonic() > deadline:
            raise _TooLong
        yield chunk


class _AtomicVcrPersister:
    """vcrpy persister that never plays an old cassette and saves only a finished recording."""

    def __init__(self) -> None:
        self.finished = False

    def load_cassette(self, cassette_path: str, serializer: Any) -> Any:
        from vcr.persisters.filesystem import CassetteNotFoundError

        raise CassetteNotFoundError()

    def save_cassette(self, cassette_path: str, cassette_dict: Any, serializer: Any) -> None:
        from vcr.serialize import serialize

        if not self.finished:
            return
        data = serialize(cassette_dict, serializer)
        with atomic_write(cassette_path) as handle:
            handle.write(data.encode("utf-8"))


def _redact_vcr_request(request: Any, secrets: tuple[str, ...] = ()) -> Any:
    """The request as the vcr file keeps it: URI, headers and JSON body redacted, `secrets`
    masked in the body."""
    for name in [name for name in request.headers if is_secret_name(name)]:
        del request.headers[name]
    request.uri = redact_uri(request.uri)
    body = request.body_bytes if hasattr(request, "body_bytes") else request.body
    if body:
        try:
            request.body = json.dumps(mask(redact(json.loads(body)), secrets)).encode()
        except (ValueError, RecursionError):
            request.body = b"<not JSON: not kept>"
    return request


def _redact_vcr_response(response: dict[str, Any], secrets: tuple[str, ...] = ()) -> dict[str, Any]:
    """The answer as the vcr file keeps it: no credential-like header, `secrets` masked
    in its (decoded) body, wherever the server repeated them."""
    headers = response.get("headers", {})
    response["headers"] = {k: v for k, v in headers.items() if not is_secret_name(k)}
    body = response.get("body")
    if secrets and isinstance(body, dict):
        content = body.get("string")
        if isinstance(content, bytes):
            text = content.decode("utf-8", errors="surrogateescape")
            body["string"] = mask_text(text, secrets).encode("utf-8", errors="surrogateescape")
        elif isinstance(content, str):
            body["string"] = mask_text(content, secrets)
    return response


def _vcr_context(
    vcr_path: str | None, persister: _AtomicVcrPersister, secrets: tuple[str, ...] = ()
) -> Any:
    if vcr_path is None:
        return contextlib.nullcontext()
    import vcr

    recorder = vcr.VCR(
        serializer="json" if vcr_path.endswith(".json") else "yaml",
        record_mode="all",
        decode_compressed_response=True,
        before_record_request=lambda request: _redact_vcr_request(request, secrets),
        before_record_response=lambda response: _redact_vcr_response(response, secrets),
    )
    recorder.register_persister(persister)
    return recorder.use_cassette(vcr_path)


def _sdk_arguments(client: Anthropic, request: dict[str, Any]) -> dict[str, Any]:
    """Fields `messages.create` names go as arguments, any other in `extra_body`, as given."""
    named = set(inspect.signature(client.messages.create).parameters) - NOT_BODY_FIELDS
    arguments = {key: value for key, value in request.items() if key in named}
    extra = {key: value for key, value in request.items() if key not in named}
    return {**arguments, "extra_body": extra} if extra else arguments


def _stream_lines(
    client: Anthropic,
    request: dict[str, Any],
    show: Callable[[str], None],
    seen: list[int],
    deadline: float,
    secrets: tuple[str, ...],
) -> Iterator[dict[str, Any]]:
    """`at` directives and events as kept (`kept_line`), as they arrive; `seen[0]` counts
    the events; `SSEFormatError` at the end of a stream without events."""
    start = time.monotonic()
    with client.messages.create(**_sdk_arguments(client, request), stream=True) as stream:
        response = stream.response
        kind = response.headers.get("content-type", "")
        if not kind.startswith("text/event-stream"):
            raise SSEFormatError(f"content-type is {kind or 'missing'}, not text/event-stream")
        for event in events_from_response(response, _within(response.iter_bytes(), deadline)):
            yield {"harness": AT, "ms": round((time.monotonic() - start) * 1000)}
            kept = kept_line(event, secrets)
            yield kept
            seen[0] += 1
            text = shown_text(kept)
            if text:
                show(text)
    if not seen[0]:
        raise SSEFormatError("it held no event")


def record(
    request: dict[str, Any],
    out: str,
    *,
    api_key: str | None = None,
    base_url: str | None = None,
    force: bool = False,
    vcr_path: str | None = None,
    description: str | None = None,
    show: Callable[[str], None] = lambda text: None,
    timeout: float = DEFAULT_TIMEOUT,
    max_duration: float = DEFAULT_MAX_DURATION,
) -> int:
    """Stream `request` live and write the cassette at `out`; return the number of events.

    Raises `InputError` for a `base_url` that is no http(s) URL, without a key, on an
    existing file without `force` or an output folder that cannot be written (all before
    the request is sent), and `RecordError`
    on an API error status, a body that is not a stream of events, no event, a
    connection that fails or drops mid-stream, `timeout` seconds of silence, or more
    than `max_duration` seconds in all; either way nothing is written.
    """
    if base_url is not None:
        check_base_url(base_url, "base_url")
    key = api_key or api_key_from_environment()
    secrets = credentials(uri=base_url, values=[key])
    if not (timeout > 0 and max_duration > 0):
        raise InputError("--timeout and --max-duration must be more than 0 seconds")
    for path in (out, vcr_path):
        _refuse_existing(path, force)
        _check_writable(path)
    import anthropic

    header = make_header(
        description or f"Recorded from {request['model']}",
        "recorded",
        request=mask(request, secrets),
        recorded_at=datetime.now(UTC),
        model=str(request["model"]),
        sdk_version=anthropic.__version__,
    )
    client = anthropic.Anthropic(
        api_key=key, base_url=base_url, max_retries=0, timeout=httpx2.Timeout(timeout)
    )
    persister = _AtomicVcrPersister()
    seen = [0]
    try:
        with _deadline(max_duration) as deadline, _vcr_context(vcr_path, persister, secrets):
            lines = _stream_lines(client, request, show, seen, deadline, secrets)
            write_cassette(out, lines, header=header, overwrite=force)
            persister.finished = True
    except FileExistsError:
        raise _exists(out) from None
    except (SSEFormatError, ValueError) as error:  # a line nested past the limit, too
        raise RecordError(
            f"the response is not a stream of events: {mask_text(str(error), secrets)}; "
            "nothing written"
        ) from None
    except _TooLong:
        raise RecordError(
            f"the recording took longer than {max_duration:g} s (--max-duration) after "
            f"{seen[0]} events; nothing written"
        ) from None
    except anthropic.APIStatusError as error:
        said = mask_text(str(error), secrets)
        raise RecordError(f"the API refused the request: {error.status_code} {said}") from None
    except (anthropic.APITimeoutError, httpx2.TimeoutException):
        raise RecordError(
            f"no byte arrived for {timeout:g} s (--timeout) after {seen[0]} events; nothing written"
        ) from None
    except (anthropic.APIConnectionError, httpx2.TransportError) as error:
        cause = mask_text(str(error.__cause__ or error), secrets)
        raise RecordError(
            f"connection failed or dropped after {seen[0]} events ({cause}); nothing written"
        ) from None
    except OSError as error:
        raise OutputError(f"{out}: cannot write: {error.strerror or error}") from None
    finally:
        client.close()
    return seen[0]


# -- recording what a client sends: the cassette clients' record modes ---------------------------


def _sdk_version(request: httpx2.Request, dialect: Recorded | None) -> str | None:
    """The version of the SDK that sent `request`: Anthropic's package, imported already
    (its client sent it); for OpenAI's the `x-stainless-package-version` its client sends
    (as import keeps it), so recording never imports an SDK of its own."""
    if dialect is None:
        import anthropic

        return anthropic.__version__
    return request.headers.get("x-stainless-package-version")


class RecordingTransport(httpx2.BaseTransport, httpx2.AsyncBaseTransport):
    """An httpx2 transport that forwards each request live and writes its answer to the next
    cassette path, then hands the same bytes to the client (read whole, as vcrpy does).

    `paths[k]` receives the k-th answer; `session`, if given, is a folder receiving
    `turn-NN.jsonl` for answers beyond `paths` (a marker naming a session folder). Each
    request is also captured, redacted, in `requests`. A file is only written once its
    whole answer arrived. A call to a host (Bedrock's or Vertex's path: `harness._hosts`)
    is kept as the direct API's request, its events read out of the host's framing, and
    the header's `host` names it; SigV4's signature and a Google token are masked as any key.
    """

    def __init__(
        self,
        inner: httpx2.BaseTransport | httpx2.AsyncBaseTransport,
        paths: Sequence[str | os.PathLike[str]],
        *,
        session: str | os.PathLike[str] | None = None,
        description: str = "Recorded through a cassette client",
        requests: list[CapturedRequest] | None = None,
        written: list[str] | None = None,
    ) -> None:
        self.inner = inner
        self.paths = [os.fspath(path) for path in paths]
        self.session = None if session is None else os.fspath(session)
        self.description = description
        self.requests: list[CapturedRequest] = [] if requests is None else requests
        self.written: list[str] = [] if written is None else written
        #: what could not be recorded; each request it concerns got a 404 naming it
        self.errors: list[RecordError] = []

    def _path(self, number: int) -> str:
        if number <= len(self.paths):
            return self.paths[number - 1]
        if self.session is None:
            raise RecordError(
                f"the code sent request {number}, but the cassette marker names "
                f"{len(self.paths)} cassette(s): name more, or a session folder"
            )
        return os.fspath(turn_path(self.session, number))

    def _refusal(self, error: RecordError, request: httpx2.Request) -> httpx2.Response:
        """A 404 the SDK does not retry, carrying the error's line (an exception raised in a
        transport would reach the code as a retried, anonymous `APIConnectionError`); both
        SDKs read its `error.message`."""
        self.errors.append(error)
        body = {
            "type": "error",
            "error": {"type": "not_found_error", "message": f"stream-harness: {error}"},
        }
        return httpx2.Response(404, json=body, headers={"x-should-retry": "false"}, request=request)

    def _keep(
        self,
        request: httpx2.Request,
        body: bytes,
        response_body: bytes,
        response: httpx2.Response,
    ) -> None:
        # The provider is the endpoint's (Chat's or Responses' path under any prefix);
        # any other call is a Messages one, read as it always was: at a host's path
        # (Bedrock's, Vertex's) kept as the direct API's request, the header naming the host.
        kept_path = request_path(request.url.raw_path)
        dialect = recorded_dialect(request.method, kept_path)
        hosted = hosted_at(kept_path) if dialect is None else None
        sent = json_body(body)
        if hosted is not None:
            sent = hosted.direct_request(sent)
        elif dialect is not None and isinstance(sent, dict):
            # as the path says it too: the model Gemini's names (`request_of`)
            sent = dialect.request_of(request.method, request.url.raw_path.decode("ascii"), sent)
        captured = CapturedRequest.of(request.method, kept_path, request.headers, sent)
        self.requests.append(captured)
        path = self._path(len(self.requests))
        # The credentials the client sent are masked wherever the answer repeats them.
        secrets = credentials(request.headers, str(request.url), body=sent)
        try:
            read, metadata = lines_of_answer(
                response.status_code, response.headers, response_body, dialect, secrets
            )
            lines = [kept_line(line, secrets) for line in read]
        except ValueError as error:
            content_type = response.headers.get("content-type", "")
            raise RecordError(
                f"the API's answer ({response.status_code}, {content_type}) is not usable: "
                f"{mask_text(str(error), secrets)}"
            ) from None
        if dialect is not None:
            metadata["provider"] = dialect.provider
        if hosted is not None:
            metadata["host"] = hosted.host.name
        version = _sdk_version(request, dialect)
        if version:
            metadata["sdk_version"] = version
        header = make_header(
            self.description,
            "recorded",
            request=mask(captured.json, secrets),
            recorded_at=datetime.now(UTC),
            **metadata,
        )
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        write_cassette(path, lines, header=header)
        self.written.append(path)

    def _response(
        self, response: httpx2.Response, content: bytes, request: httpx2.Request
    ) -> httpx2.Response:
        """The answer as read (decoded), so its encoding and length headers are dropped."""
        headers = [
            (k, v)
            for k, v in response.headers.items()
            if k.lower() not in ("content-encoding", "content-length", "transfer-encoding")
        ]
        return httpx2.Response(
            response.status_code, headers=headers, content=content, request=request
        )

    def _check_room(self, request: httpx2.Request) -> httpx2.Response | None:
        """Refuse, before anything goes live, a request no cassette is named for."""
        try:
            self._path(len(self.requests) + 1)
        except RecordError as error:
            return self._refusal(error, request)
        return None

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        assert isinstance(self.inner, httpx2.BaseTransport)
        refused = self._check_room(request)
        if refused is not None:
            return refused
        body = request.read()
        response = self.inner.handle_request(request)
        try:
            content = response.read()
        finally:
            response.close()
        try:
            self._keep(request, body, content, response)
        except RecordError as error:
            return self._refusal(error, request)
        return self._response(response, content, request)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        assert isinstance(self.inner, httpx2.AsyncBaseTransport)
        refused = self._check_room(request)
        if refused is not None:
            return refused
        body = await request.aread()
        response = await self.inner.handle_async_request(request)
        try:
            content = await response.aread()
        finally:
            await response.aclose()
        try:
            self._keep(request, body, content, response)
        except RecordError as error:
            return self._refusal(error, request)
        return self._response(response, content, request)

    def close(self) -> None:
        if isinstance(self.inner, httpx2.BaseTransport):
            self.inner.close()

    async def aclose(self) -> None:
        if isinstance(self.inner, httpx2.AsyncBaseTransport):
            await self.inner.aclose()
