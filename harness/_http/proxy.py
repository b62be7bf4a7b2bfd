"""`harness proxy`: a recording reverse proxy in front of the Messages API and OpenAI's.

Every request goes upstream as the client sent it (its own API key included: passed
on, never written), its path added to the upstream URL as it came, and the answer comes
back to the client as it arrives, piece by piece, never buffered: the first event
reaches the client while upstream still streams. Each answer to a recorded call is
also kept as a cassette in the output folder, written atomically once the answer has
ended. The recorded calls are Anthropic's `POST /v1/messages` and OpenAI's `POST`s whose
path ends in `/chat/completions` or `/responses` (`recorded_dialect`: `/v1/...` as an
OpenAI client's base URL has it, or none when `--upstream` ends in `/v1`), read as
`harness import` reads them (each provider's `interop`, through
`harness._record.answer`):

- a stream: every event, each after `{"harness": "at", "ms": N}` (its arrival offset
  from the request), Chat's `[DONE]` as `{"harness": "done"}`; a stream upstream broke
  off ends in `{"harness": "cut"}`;
- a non-streaming answer (a `Message`, a `chat.completion`, a `response`): the events a
  stream of it carries, the header's `synthesized_from: "message"` saying so;
- an HTTP error: one `{"harness": "http_error", ...}` line (status, the headers a
  client's retry logic reads, the error JSON).

A call at a host's path (`harness._hosts`: Bedrock's `/model/{id}/invoke-with-response-
stream` and `/invoke`, Vertex's `...:streamRawPredict` and `:rawPredict`) is recorded
as the direct API's call of the provider served there: its request with the model and
`stream` its path carries put back (`Hosted.direct_request`), the header's `host` naming
it, a stream in Bedrock's frames read into the dialect's events as the guard reads them
(`Host.frames`). Under `strict` such a stream is judged as the direct API's, and a
broken one ends in the error event in the host's framing (on Bedrock a chunk frame).
A dialect whose own wire is event-stream frames (Bedrock's ConverseStream, `POST
/model/{id}/converse-stream` and `/converse`: its `Recorded.frames`) is recorded as its
own provider's, each frame read into its line by its own decoder, the request as its
path says it (`request_of`: the model, and `stream` for the stream).

The header holds the request without credentials (`redact_request`) and, for OpenAI,
its `provider`. Each line is kept without credential-like fields, and with the
credentials the client's request carried (its key's header, a credential-like query
parameter, the upstream URL's userinfo, its JSON body's credential-like fields)
masked wherever upstream repeats them (`harness._redact.credentials`): an error
message quoting the key or the URL it received, in-band or in a 401's body, writes no
key. The same credentials are masked in every line the proxy logs and every message of
its own answers (`_SECRETS`). Files are named `turn-NN.jsonl` by request arrival
(`harness._cassette.sessions`), numbered after any turn already in the folder, so the
folder is a session `harness serve` answers turn by turn. Other endpoints, and the
Responses resume `GET`, pass through and are listed on the log, not recorded. A stop
(SIGINT/SIGTERM) or a client leaving mid-answer writes nothing for that answer.

With `strict=True` (`harness proxy --strict`) each streamed Messages answer also passes
the strict adapter on its way (`harness._strict.guard.StreamGuard`): each event reaches
the client once the adapter has accepted it, and at a violation the proxy ends the answer
with an SSE `error` event naming the code (`strict_error_event`) and closes the
connection, so the client's SDK raises, in any language. Upstream is asked for an
uncompressed answer then (the guard reads the bytes it forwards); the recording keeps
what upstream sent up to there, so it replays to the same error.

Under `strict` the OpenAI endpoints are guarded too (`harness._strict.dialects`: Chat
Completions and Responses, each read by its own provider's reader), the same way, and
recorded as without it: a broken stream ends in the same `error` event (the openai SDK
raises its API error for any data whose `error` is set), a broken non-streaming answer
is the same 502.

A non-streaming answer under `strict` is read whole (within `MAX_BODY_BYTES`, decoded
by `_Inflate` if upstream compressed it anyway) and checked as a `Message`
(`check_message`): a good one goes on as upstream sent it; a broken one is replaced by a
502 whose body is `strict_error_event`'s and whose `x-should-retry: false` stops every
SDK's retries, and its recording keeps upstream's `Message`, which replays to the same
error. What cannot be checked (a stream upstream compressed all the same, a `Message`
past the cap or one it cannot decode) gets the same kind of 502 saying why,
before any byte of it is sent, and is not recorded.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import time
from collections.abc import AsyncIterator, Callable, Collection
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import IO, TYPE_CHECKING, Any, Final, Literal

import aiohttp
import orjson
from aiohttp import web
from multidict import CIMultiDict

from harness._cassette.codec import MAX_BODY_BYTES, MAX_LINE_BYTES, make_header
from harness._cassette.sessions import last_turn, turn_path
from harness._directives import AT, CUT
from harness._exceptions import StreamProtocolError
from harness._files import atomic_write
from harness._hosts import Host, Hosted, hosted_at
from harness._http.bounds import INLINE_BYTES, off_loop, request_body
from harness._http.hosting import (
    MAX_BODY,
    TOO_DEEP,
    TOO_MANY_VALUES,
    api_error,
    harness_app,
    path_of,
)
from harness._inflate import DECODED_CODINGS, DecodeError, Inflater, normal_coding
from harness._json import (
    MAX_NESTING,
    MAX_VALUES,
    crowded,
    deeper_than_limit,
    dump_line,
    may_be_too_deep,
    too_many_values,
    values_at_most,
)
from harness._providers.recorded import Recorded
from harness._providers.sse import SSEFormatError, encode_event
from harness._record.answer import StreamLines, lines_of_answer, recorded_dialect
from harness._redact import credentials, excerpt, mask, mask_text, redact_answer, redact_uri
from harness._strict.policy import completing_stop_reasons

if TYPE_CHECKING:
    from harness._strict.dialects import AnswerCheck
    from harness._strict.guard import StreamGuard

__all__ = ["DEFAULT_UPSTREAM_TIMEOUT", "RecordingProxy"]


def messages_path() -> str:
    """The path the default provider's calls are POSTed to (Messages' `/v1/messages`,
    its framing's endpoint): the calls the proxy records as it always did."""
    from harness._exceptions import ANTHROPIC
    from harness._providers import provider

    [endpoint] = provider(ANTHROPIC).framing.endpoints
    return endpoint


#: Seconds upstream may take to accept a connection, and then stay silent (before its
#: answer's headers, or between two pieces of it): the SDK's own default timeout.
DEFAULT_UPSTREAM_TIMEOUT: Final = 600.0
#: Headers of one hop, never forwarded (RFC 9110 §7.6.1), plus those aiohttp sets itself.
HOP_HEADERS: Final = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "trailers",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
    }
)
#: Headers aiohttp would add to a request that lacks them: the request goes as it came.
AUTO_HEADERS: Final = ("Accept-Encoding", "User-Agent", "Content-Type")


#: Why an answer nested past the one nesting limit is not recorded.
TOO_DEEP_ANSWER: Final = f"the answer nests deeper than {MAX_NESTING} levels, the limit"
#: Why an answer holding a line past the cassette's line limit is not recorded.
TOO_LONG_LINE: Final = f"a line would be longer than {MAX_LINE_BYTES} bytes, the limit"
#: The credentials of the request being answered (`credentials`: its headers, its URL's
#: query and userinfo, its JSON body's credential-like fields), masked in every line the
#: proxy logs and every message of its own answers: set by `forward` in the task that
#: answers that request (aiohttp answers each in a task of its own).
_SECRETS: Final[ContextVar[tuple[str, ...]]] = ContextVar("harness_proxy_secrets", default=())


class _Unrecordable(Exception):
    """Why an answer is not recorded; the client still gets all of it, as upstream sent it."""


class _Inflate:
    """Bytes as sent (the client gets them so) to bytes as meant (the cassette keeps those),
    piece by piece (`Inflater`), at most `limit` bytes in all: a compression bomb is
    stopped at the cap, and never held expanded."""

    def __init__(self, encoding: str, limit: int) -> None:
        self._inflater = Inflater(encoding)
        self.coding = self._inflater.coding
        self.limit = limit
        self.size = 0

    def feed(self, piece: bytes | bytearray, out: Callable[[bytes], None]) -> None:
        """Hand `piece`, decompressed, to `out`; `_Unrecordable` past the cap or at a
        body that cannot be decoded, and whatever `out` raises."""
        try:
            for data in self._inflater.decode(piece):
                self.size += len(data)
                if self.size > self.limit:
                    raise _Unrecordable(f"the answer is over {self.limit} bytes, the limit")
                out(data)
        except DecodeError as error:
            raise _Unrecordable(f"the {self.coding} body cannot be decoded: {error}") from None


class _CassetteFile:
    """A cassette written line by line to its temporary file as the answer comes, linked
    into place once it has ended (`harness._files.atomic_write`), or removed."""

    def __init__(self, target: str) -> None:
        self.target = target
        self._writing: contextlib.AbstractContextManager[IO[bytes]] | None = None
        self._handle: IO[bytes] | None = None

    async def open(self) -> None:
        """Create the temporary file: before the request goes upstream, so that reading
        the answer waits for nothing (aiohttp drops what it holds once upstream breaks off)."""
        os.makedirs(os.path.dirname(self.target) or ".", exist_ok=True)
        writing = atomic_write(self.target, overwrite=False)
        # Entered in a worker thread: `atomic_write` puts its own SIGTERM handler in place
        # only in the main thread, and there it would replace the server's clean stop.
        self._handle = await asyncio.to_thread(writing.__enter__)
        self._writing = writing

    def write(self, line: dict[str, Any]) -> None:
        if self._handle is None:
            raise OSError("the cassette file is not open")
        encoded = dump_line(line)
        if len(encoded) > MAX_LINE_BYTES:
            raise _Unrecordable(TOO_LONG_LINE)
        self._handle.write(encoded + b"\n")

    async def close(self) -> None:
        writing, self._writing, self._handle = self._writing, None, None
        if writing is not None:
            await asyncio.to_thread(writing.__exit__, None, None, None)

    def discard(self) -> None:
        """Remove the temporary file: nothing is written for this answer."""
        writing, self._writing, self._handle = self._writing, None, None
        if writing is not None:
            with contextlib.suppress(Exception):
                writing.__exit__(_Unrecordable, _Unrecordable("discarded"), None)


class _Answer:
    """One Messages answer as it passes through, on its way to a cassette.

    A stream's events go to the temporary cassette as they complete, never held whole;
    any other answer (a `Message`, an HTTP error) is held until it ends, within the same
    cap. Past a cap, or at anything that cannot be a cassette, recording stops for this
    answer (`unusable` says why) while the client still gets every byte.
    """

    def __init__(
        self,
        status: int,
        headers: Any,
        start: float,
        file: _CassetteFile,
        header: dict[str, Any],
        streamed: bool,
        dialect: Recorded | None = None,
        secrets: tuple[str, ...] = (),
        host: Host | None = None,
    ) -> None:
        self.status = status
        #: the credentials the request carried, masked wherever the answer repeats them
        self.secrets = secrets
        #: the OpenAI API the answer is of (None: Anthropic's Messages)
        self.dialect = dialect
        self.headers = {name.lower(): value for name, value in headers.items()}
        self.start = start
        #: a 200 to a request for a stream: read as one, as the SDK reads it
        self.streamed = streamed
        self._inflate = _Inflate(self.headers.get("content-encoding", ""), MAX_BODY_BYTES)
        self._sse = StreamLines(dialect, max_line=MAX_LINE_BYTES, secrets=secrets, host=host)
        self._body: bytes | bytearray = bytearray()
        self._first: dict[str, Any] | None = None
        self.file = file
        self.header = header
        self.events = 0
        self.unusable: str | None = None
        if self.streamed:
            self._write(header)

    def _at(self) -> dict[str, Any]:
        return {"harness": AT, "ms": round((time.monotonic() - self.start) * 1000)}

    def _write(self, line: dict[str, Any]) -> None:
        try:
            self.file.write(line)
        except OSError as error:
            self.stop(f"{self.file.target}: {error.strerror or error}")

    def feed(self, piece: bytes) -> None:
        if self.unusable is not None:
            return
        try:
            self._inflate.feed(piece, self._events if self.streamed else self._hold)
        except (_Unrecordable, SSEFormatError, ValueError, OSError) as error:
            self.stop(str(error))

    def _hold(self, data: bytes) -> None:
        self.arrived()
        self._body += data

    def arrived(self) -> None:
        """A piece of the answer arrived: the first one's offset is the answer's."""
        self._first = self._first or self._at()

    def keep(self, body: bytes | bytearray) -> None:
        """Keep the whole answer as meant, `body`, read by the caller (no copy of ours)."""
        if self.unusable is None:
            self._body = body

    def _events(self, data: bytes) -> None:
        self._write_events(self._sse.feed(data))

    def _write_events(self, lines: list[dict[str, Any]]) -> None:
        for line in lines:
            if "harness" in line:  # Chat's `[DONE]`, as the `done` directive
                self.file.write(line)
                continue
            self.file.write(self._at())
            self.file.write(_kept(line, self.secrets))
            self.events += 1

    def stop(self, reason: str) -> None:
        """Record nothing of this answer, for `reason`; the client's answer goes on."""
        if self.unusable is None:
            self.unusable = reason
        self._body = bytearray()  # what was held goes now, not when the answer ends
        self.file.discard()

    async def finish(self, cut: bool) -> None:
        """End the cassette (`cut`: upstream broke off) and put it in place; `ValueError`
        when it cannot be one, `OSError` when it cannot be written."""
        if self.unusable is not None:
            raise ValueError(self.unusable)
        try:
            # a large answer read into lines and redacted while the loop answers others
            await off_loop(self._end, cut, size=self._inflate.size)
        except (_Unrecordable, SSEFormatError) as error:
            self.stop(str(error))
            raise ValueError(str(error)) from None
        except BaseException:
            self.stop("not written")
            raise
        await self.file.close()

    def _end(self, cut: bool) -> None:
        """Write the rest of the cassette: a whole answer's lines, a stream's last ones."""
        if not self.streamed:
            lines, extra = lines_of_answer(
                self.status, self.headers, self._body, self.dialect, self.secrets
            )
            kept = [
                *([self._first] if self._first else []),
                *(_kept(line, self.secrets) for line in lines),
            ]
            self.events = sum(1 for line in kept if "harness" not in line)
            for line in [{**self.header, **extra}, *kept]:
                self.file.write(line)
            return
        if not cut:
            self._write_events(self._sse.finish())
        if self.events == 0:
            raise ValueError("the stream held no event")
        if cut:
            self.file.write({"harness": CUT})


def _kept(line: dict[str, Any], secrets: tuple[str, ...]) -> dict[str, Any]:
    """A line of an answer as a cassette keeps it: credential-like fields removed,
    `secrets` masked. A line past the nesting limit, past `MAX_LINE_BYTES` as upstream
    sent it (redacting makes no line longer) or past `MAX_VALUES` is `_Unrecordable`,
    told by orjson's encoder at C speed before any walk: such an event costs no
    redaction, and the answer's recording stops there."""
    try:
        encoded = orjson.dumps(line)
    except orjson.JSONEncodeError:  # nested too deep, or a value orjson refuses
        if deeper_than_limit(line):
            raise _Unrecordable(TOO_DEEP_ANSWER) from None
        encoded = b""  # its writing tells its length (`_CassetteFile.write`)
    if len(encoded) > MAX_LINE_BYTES:
        raise _Unrecordable(TOO_LONG_LINE)
    if too_many_values(encoded):  # millions of `{}` within the line limit
        raise _Unrecordable(crowded("a line"))
    kept: dict[str, Any] = redact_answer(line, secrets)
    return kept


class RecordingProxy:
    """The proxy's aiohttp app: `RecordingProxy(upstream, out, log=print).app()`."""

    def __init__(
        self,
        upstream: str,
        out: str | os.PathLike[str],
        *,
        log: Callable[[str], None] = lambda line: None,
        max_body: int = MAX_BODY,
        timeout: float = DEFAULT_UPSTREAM_TIMEOUT,
        strict: bool = False,
        allow_stop_reasons: Collection[str] = (),
        profile: str | None = None,
    ) -> None:
        self.upstream = upstream.rstrip("/")
        self.strict = strict
        #: The compatible server whose Chat deviations `strict` reads (docs/profiles.md).
        self.profile = profile
        #: What completes a message under `strict` (`allow_stop_reasons` adds to the default).
        self.stop_reasons = completing_stop_reasons(allow_stop_reasons)
        #: What `strict` accepts besides each provider's own (OpenAI's reasons too).
        self.allowed = frozenset(allow_stop_reasons)
        #: Seconds upstream may take to accept the connection, and be silent after.
        self.timeout = timeout
        self.out = os.fspath(out)
        self._log = log
        self.max_body = max_body
        self.written: list[str] = []
        self._turn = last_turn(self.out)
        self._session: aiohttp.ClientSession | None = None

    def log(self, line: str) -> None:
        """Log `line` with the credentials of the request it is about masked (`_SECRETS`):
        upstream may have repeated them in what a line quotes (a frame's header)."""
        self._log(mask_text(line, _SECRETS.get()))

    @property
    def providers(self) -> tuple[str, ...]:
        """The providers whose clients it forwards for: every one registered."""
        from harness._providers import names

        return names()

    def app(self) -> web.Application:
        app = harness_app(self.log, max_body=self.max_body)
        app.router.add_route("*", "/{tail:.*}", self.forward)
        app.on_startup.append(self._open)
        app.on_cleanup.append(self._close)
        return app

    async def _open(self, app: web.Application) -> None:
        self._session = aiohttp.ClientSession(
            auto_decompress=False,
            timeout=aiohttp.ClientTimeout(
                total=None, sock_connect=self.timeout, sock_read=self.timeout
            ),
            connector=aiohttp.TCPConnector(limit=0),
        )

    async def _close(self, app: web.Application) -> None:
        if self._session is not None:
            await self._session.close()

    def _next_path(self) -> str:
        self._turn += 1
        return os.fspath(turn_path(self.out, self._turn))

    async def forward(self, request: web.Request) -> web.StreamResponse:
        """Send the request upstream and stream the answer back; keep a Messages answer.
        Its body is read within the bounds (`request_body`), and counts among the bodies
        held until the answer has ended."""
        async with request_body(request) as body:
            return await self._forward_body(request, body)

    def _read(self, request: web.Request, body: bytes) -> _Read:
        """What the proxy reads of a request before it goes upstream (by a worker thread
        for a large body: `off_loop`): see `_Read`."""
        where = f"{request.method} {request.path}"
        try:
            request_json, dialect, hosted = _recorded_request(request, body)
        except _Unrecordable as error:  # upstream still gets it, unchecked
            self.log(f"{where}: not recorded: {error}")
            request_json, dialect, hosted, check = None, None, None, None
        else:
            check = self._check(request, body, request_json)
        #: the SDK reads the answer as a stream if it asked for one, whatever it is labelled
        streams = request_json is not None and request_json.get("stream") is True
        if check is not None:
            streams = check.stream
        if request_json is not None and may_be_too_deep(body) and deeper_than_limit(request_json):
            self.log(f"{where}: not recorded: {TOO_DEEP}")  # upstream still gets it
            request_json = None
        # What the client sends upstream: masked wherever the answer or a message repeats it.
        target = self.upstream + request.rel_url.raw_path_qs
        secrets = credentials(request.headers, target, body=request_json)
        header = None
        if request_json is not None:
            header = self._header(mask(request_json, secrets), dialect, hosted, path_of(request))
        return _Read(header, dialect, hosted, check, streams, secrets)

    async def _forward_body(self, request: web.Request, body: bytes) -> web.StreamResponse:
        assert self._session is not None
        start = time.monotonic()
        where = f"{request.method} {request.path}"
        # a large body parsed, checked and redacted while the event loop answers others
        read = await off_loop(self._read, request, body, size=len(body))
        guard = None if read.check is None else _guard(read.check)
        file = _CassetteFile(self._next_path()) if read.header is not None else None
        told = _SECRETS.set(read.secrets)
        try:
            if file is not None:
                try:
                    await file.open()
                except OSError as error:
                    self.log(f"{where}: not recorded: {file.target}: {error.strerror or error}")
                    file = None
            return await self._forward(
                request,
                body,
                where,
                start,
                read.header,
                file,
                guard,
                read.streams,
                read.check,
                read.dialect,
                read.hosted,
            )
        finally:
            _SECRETS.reset(told)
            if file is not None:
                file.discard()  # unless written: a stop, a client gone, a cap passed

    async def _forward(
        self,
        request: web.Request,
        body: bytes,
        where: str,
        start: float,
        header: dict[str, Any] | None,
        file: _CassetteFile | None,
        guard: StreamGuard | None,
        streams: bool,
        check: AnswerCheck | None = None,
        dialect: Recorded | None = None,
        hosted: Hosted | None = None,
    ) -> web.StreamResponse:
        assert self._session is not None
        headers = CIMultiDict(
            (name, value)
            for name, value in request.headers.items()
            if name.lower() not in HOP_HEADERS
        )
        if guard is not None:
            headers["Accept-Encoding"] = "identity"
        shown = redact_uri(self.upstream)
        try:
            upstream = await self._session.request(
                request.method,
                self.upstream + request.rel_url.raw_path_qs,
                headers=headers,
                data=io.BytesIO(body) if len(body) > INLINE_BYTES else body,  # sent in pieces
                allow_redirects=False,
                skip_auto_headers=AUTO_HEADERS,
            )
        except TimeoutError as error:  # aiohttp's connect and read timeouts are ones
            silent = f"no answer from upstream {shown} within {self.timeout:g} s"
            self.log(f"{where} -> 504 ({silent}: {type(error).__name__})")
            return api_error(504, f"harness proxy: {silent} (--upstream-timeout)")
        except (aiohttp.ClientError, OSError) as error:
            self.log(f"{where} -> 502 (upstream unreachable: {type(error).__name__})")
            said = mask_text(_unreachable(error), _SECRETS.get())
            return api_error(502, f"harness proxy: upstream {shown} unreachable: {said}")
        answer = None
        if file is not None and header is not None:
            secrets = _SECRETS.get()  # what the client forwarded to upstream
            streamed = streams and upstream.status == 200
            host = None if hosted is None else hosted.host
            answer = _Answer(
                upstream.status,
                upstream.headers,
                start,
                file,
                header,
                streamed,
                dialect,
                secrets,
                host,
            )
        return await self._relay(request, upstream, where, answer, guard, streams, check)

    async def _relay(
        self,
        request: web.Request,
        upstream: aiohttp.ClientResponse,
        where: str,
        answer: _Answer | None,
        guard: StreamGuard | None,
        streams: bool,
        check: AnswerCheck | None = None,
    ) -> web.StreamResponse:
        """Stream upstream's answer to the client as it comes, recording it alongside."""
        async with upstream:
            response = web.StreamResponse(status=upstream.status, reason=upstream.reason)
            for name, value in upstream.headers.items():
                if name.lower() not in HOP_HEADERS:
                    response.headers.add(name, value)
            checked = None if guard is None else _checked_kind(upstream.status, streams)
            if checked == "message":
                return await self._relay_message(upstream, where, answer, response.headers, check)
            encoding = _encoding(upstream.headers)
            if checked == "stream" and normal_coding(encoding) != "identity":
                reason = f"upstream compressed the stream (content-encoding: {_told(encoding)})"
                return self._uncheckable(where, answer, f"{reason} although asked for identity")
            if checked is None:
                guard = None  # an HTTP error, another endpoint's answer: passed as it is
            await response.prepare(request)
            broke_off = False
            sent = False  # whether any of the answer went on to the client
            refused = ""  # what --strict refused, said on the answer's one line
            received = 0
            async for piece in _body(upstream):
                if isinstance(piece, _Ended) and piece.error is None:
                    silent = f"upstream sent nothing for {self.timeout:g} s"
                    self.log(f"{where} -> {upstream.status}, {silent}: cut, not recorded")
                    _drop(request)
                    return response
                if isinstance(piece, _Ended):
                    broke_off = True  # the client will see the same drop, the cassette a cut
                    break
                received += len(piece)
                # an event of megabytes is read while the loop answers others
                read = 0 if answer is None and guard is None else received
                released = await off_loop(_fed, piece, answer, guard, size=read)
                try:
                    if released:
                        await response.write(released)
                        sent = True
                except (ConnectionResetError, aiohttp.ClientConnectionError):
                    return self._client_left(where, upstream.status, response)
                if guard is not None and guard.unreadable is not None:
                    # bytes no SDK reads, after the good events before them (just sent)
                    self.log(f"{where}: --strict: {guard.unreadable}: the connection is closed")
                    broke_off = True  # the client sees a drop: there is no event to end with
                    break
                if guard is not None and guard.failure is not None:
                    break
            if guard is not None and not broke_off:
                try:
                    ended, refused = await self._end_strictly(
                        where, response, guard, hosted_at(path_of(request)), check, sent, received
                    )
                except (ConnectionResetError, aiohttp.ClientConnectionError):
                    return self._client_left(where, upstream.status, response)
                broke_off = not ended
        # The cassette is on disk before the client's answer ends: once a client has its
        # answer, its recording can be read.
        status = f"{upstream.status}{refused}"
        if answer is not None:
            await self._write(where, answer, broke_off, status=status)
        else:
            self.log(f"{where} -> {status} (passed through, not recorded)")
        if broke_off:
            _drop(request)
        else:
            # A client may close as soon as it has read the last event (the openai SDK
            # does at `[DONE]`): its answer was whole, and its line is logged above.
            with contextlib.suppress(ConnectionResetError):
                await response.write_eof()
        return response

    def _client_left(
        self, where: str, status: int, response: web.StreamResponse
    ) -> web.StreamResponse:
        """The client closed its connection before the answer's end: nothing is recorded."""
        self.log(f"{where} -> {status}, the client left before the answer ended: not recorded")
        return response

    async def _relay_message(
        self,
        upstream: aiohttp.ClientResponse,
        where: str,
        answer: _Answer | None,
        headers: CIMultiDict[str],
        check: AnswerCheck | None = None,
    ) -> web.StreamResponse:
        """A non-streaming answer under `strict`: read whole (within `MAX_BODY_BYTES`),
        checked as a `Message` (`check_message`), then sent as upstream sent it, or
        replaced by the API's 502 error naming the code (`x-should-retry: false`)."""
        raw = bytearray()
        async for piece in _body(upstream):
            if isinstance(piece, _Ended) and piece.error is None:
                silent = f"upstream sent nothing for {self.timeout:g} s"
                self.log(f"{where} -> 504 ({silent}: not recorded)")
                if answer is not None:
                    answer.stop(silent)
                return api_error(504, f"harness proxy: {silent} (--upstream-timeout)")
            if isinstance(piece, _Ended):
                broke = "upstream broke off the answer"
                self.log(f"{where} -> 502 ({broke}: {piece.error}; not recorded)")
                if answer is not None:
                    answer.stop(broke)
                return api_error(502, f"harness proxy: {broke}")
            raw += piece
            if len(raw) > MAX_BODY_BYTES:
                over = f"the answer is over {MAX_BODY_BYTES} bytes, the limit"
                return self._uncheckable(where, answer, over)
            if answer is not None:
                answer.arrived()
        content_type = str(upstream.headers.get("content-type", ""))
        try:
            # One copy as sent (for the client), one as meant (the same one, unless it was
            # compressed), read by the check and kept by the recording alike.
            judged = (_encoding(upstream.headers), raw, content_type, self.stop_reasons, check)
            # a large one decoded, read and checked while the event loop answers others
            meant, failure = await off_loop(_judged, *judged, size=len(raw))
        except _Unrecordable as error:
            return self._uncheckable(where, answer, str(error))
        if isinstance(failure, str):
            return self._uncheckable(where, answer, failure)
        if answer is not None:
            answer.keep(meant)
        del meant
        if failure is not None:
            from harness._strict.guard import strict_error_event

            what = "the Message" if check is None else check.answer
            status = f"502 (--strict: {failure.code}: {what} breaks the rules)"
            if answer is not None:  # kept as upstream sent it: it replays to the same error
                await self._write(where, answer, False, status=status)
            else:
                self.log(f"{where} -> {status}")
            refusal = strict_error_event(_masked(failure))
            return _no_retry(web.json_response(refusal, status=502))
        passed = web.Response(
            status=upstream.status, reason=upstream.reason, headers=headers, body=raw
        )
        if answer is not None:
            await self._write(where, answer, False)
        else:
            self.log(f"{where} -> {upstream.status} (passed through, not recorded)")
        return passed

    def _uncheckable(self, where: str, answer: _Answer | None, reason: str) -> web.Response:
        """The 502 (not retried) for an answer `strict` cannot check; nothing is recorded."""
        if answer is not None:
            answer.stop(reason)
        self.log(f"{where} -> 502 (--strict: {reason}: it cannot be checked; not recorded)")
        message = f"harness proxy --strict: {reason}: it cannot be checked"
        return _no_retry(api_error(502, mask_text(message, _SECRETS.get())))

    def _check(
        self, request: web.Request, body: bytes, request_json: dict[str, Any] | None
    ) -> AnswerCheck | None:
        """How `strict` checks the answer to `request` (`harness._strict.dialects`, its
        status judged when it comes): a Messages call with a JSON body, an OpenAI Chat
        Completions or Responses call (the resume GET too); None for any other, or
        without `strict`."""
        if not self.strict:
            return None
        from harness._strict.dialects import answer_check

        check = answer_check(
            request.method,
            path_of(request),
            request.query,
            body,
            200,
            self.allowed,
            profile=self.profile,
        )
        if check is not None and check.needs_json_request and request_json is None:
            return None
        return check

    async def _end_strictly(
        self,
        where: str,
        response: web.StreamResponse,
        guard: StreamGuard,
        hosted: Hosted | None = None,
        check: AnswerCheck | None = None,
        sent: bool = False,
        received: int | None = None,
    ) -> tuple[bool, str]:
        """The rest of a guarded answer, or the `error` event ending a broken one (in the
        framing of the host it was asked of: Bedrock's, a chunk frame; or in the dialect's
        own, `check.refusal`: ConverseStream's exception frame, Gemini's error chunk,
        told whether any of the answer was `sent` before), and what the
        answer's line says of the refusal ("" for none); False when the answer cannot be
        ended so (the client's connection is cut instead). The guard's last reading (an
        event the body ended in, up to the line limit) leaves the event loop once
        `received` bytes are past `INLINE_BYTES`, as each piece's did."""
        from harness._strict.guard import strict_error_event

        if guard.failure is None:
            try:
                rest = await off_loop(guard.finish, size=received)
            except ValueError as error:  # the decoder's: a last line, frame or array end
                # no SDK reads (`SSEFormatError`, `FrameError`, `ArrayError`), as in `feed`
                self.log(f"{where}: --strict: {error}: the connection is closed")
                return False, ""
            if rest:
                await response.write(rest)
        if guard.failure is None:
            return True, ""
        failure = guard.failure
        told = _masked(failure)  # what the error event quotes of the answer
        if check is not None and check.refusal is not None:  # the dialect's own framing
            await response.write(check.refusal(told, sent))
        else:
            framed = None if hosted is None else hosted.host.encode
            await response.write((framed or encode_event)(strict_error_event(told)))
        response.force_close()
        why = "".join(f"; {note}" for note in getattr(failure, "__notes__", ()))
        return True, f" (--strict: {failure.code}: the answer ends in an error event{why})"

    def _header(
        self,
        request: dict[str, Any],
        dialect: Recorded | None,
        hosted: Hosted | None = None,
        path: str = "",
    ) -> dict[str, Any]:
        model = str(request.get("model", "unknown model"))
        named = {} if dialect is None else {"provider": dialect.provider}
        if hosted is not None:
            named["host"] = hosted.host.name
        elif dialect is not None and dialect.host_of is not None:
            found = dialect.host_of(path)  # where its own path says it is served
            if found is not None:
                named["host"] = found
        return make_header(
            f"Recorded by harness proxy from {model}",
            "recorded",
            request=request,
            recorded_at=datetime.now(UTC),
            model=model,
            **named,
        )

    async def _write(
        self, where: str, answer: _Answer, broke_off: bool, *, status: str | None = None
    ) -> None:
        """Put the cassette of `answer` in place and log one line for the answer;
        `status` is what the client got, when it is not upstream's status."""
        target = answer.file.target
        status = status or str(answer.status)
        try:
            await answer.finish(broke_off)
        except ValueError as error:
            self.log(f"{where} -> {status}, not recorded: {error}")
            return
        except RecursionError:  # a Message or error JSON nested past what Python reads
            self.log(f"{where} -> {status}, not recorded: {TOO_DEEP_ANSWER}")
            return
        except OSError as error:
            reason = error.strerror or error
            self.log(f"{where} -> {status}, not recorded: {target}: {reason}")
            return
        except Exception as error:  # a Message of a shape no cassette holds
            reason = f"the answer cannot be a cassette ({type(error).__name__})"
            self.log(f"{where} -> {status}, not recorded: {reason}")
            return
        self.written.append(target)
        cut = ", upstream broke off" if broke_off else ""
        self.log(f"{where} -> {status}, {answer.events} events{cut}: wrote {target}")


@dataclass(frozen=True, slots=True)
class _Read:
    """What the proxy reads of a request before it goes upstream (`RecordingProxy._read`)."""

    #: its cassette's header, the request in it without credentials (None: not recorded)
    header: dict[str, Any] | None
    dialect: Recorded | None
    hosted: Hosted | None
    #: how `strict` checks its answer (None: it does not)
    check: AnswerCheck | None
    #: whether the client reads the answer as a stream
    streams: bool
    #: the credentials it carries (`credentials`), masked wherever upstream repeats them
    secrets: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Ended:
    """Upstream's body did not end cleanly: it fell silent for the timeout (`error`
    None), or its connection dropped (`error`: the exception's type name)."""

    error: str | None


async def _body(upstream: aiohttp.ClientResponse) -> AsyncIterator[bytes | _Ended]:
    """Upstream's body as it comes; at an end that is not clean, an `_Ended` last."""
    pieces = upstream.content.iter_any().__aiter__()
    while True:
        try:
            piece = await pieces.__anext__()
        except StopAsyncIteration:
            return
        except TimeoutError:
            yield _Ended(None)
            return
        except (aiohttp.ClientError, OSError) as error:
            yield _Ended(type(error).__name__)
            return
        yield piece


def _fed(piece: bytes, answer: _Answer | None, guard: StreamGuard | None) -> bytes:
    """`piece` of upstream's answer fed to its recording and its guard: what the guard
    lets go on to the client (all of it without one)."""
    if answer is not None:
        answer.feed(piece)
    return piece if guard is None else guard.feed(piece)


def _drop(request: web.Request) -> None:
    """Close the client's connection before the body ends: it sees the connection cut."""
    if request.transport is not None:
        request.transport.close()


def _checked_kind(status: int, streams: bool) -> str | None:
    """How `strict` checks a Messages answer (`answer_kind`): a 200 one only (an HTTP
    error passes as it is), as a stream if the request asked for one."""
    from harness._strict.transport import answer_kind

    return answer_kind("POST", messages_path(), status, stream=streams) if status == 200 else None


def _encoding(headers: Any) -> str:
    """An answer's `content-encoding` as upstream sent it ("" for none)."""
    return str(headers.get("content-encoding", ""))


def _told(encoding: str) -> str:
    """Upstream's `content-encoding` as a message quotes it (`excerpt`): as sent, never
    lower-cased (`normal_coding`) nor cut, so that masking finds a credential upstream
    repeated in it; past `EXCERPT_LENGTH` characters, only its length."""
    return excerpt(encoding.strip())


def _decoded(encoding: str, body: bytearray) -> bytearray:
    """`body` decoded from upstream's `encoding` (`_Inflate`, in chunks, at most
    `MAX_BODY_BYTES`); `_Unrecordable` past the cap, for a body that cannot be decoded
    or a coding unknown."""
    coding = normal_coding(encoding)
    if coding == "identity":
        return body
    if coding not in DECODED_CODINGS:
        raise _Unrecordable(f"upstream's content-encoding {_told(encoding)} cannot be decoded")
    decoded = bytearray()
    _Inflate(coding, MAX_BODY_BYTES).feed(body, decoded.extend)
    return decoded


def _guard(check: AnswerCheck) -> StreamGuard:
    """A guard for an answer `strict` checks, reading it as its provider's SDK does."""
    from harness._strict.guard import StreamGuard

    return StreamGuard(reader=check.reader())


def _judged(
    encoding: str,
    raw: bytearray,
    content_type: str,
    stop_reasons: Collection[str],
    check: AnswerCheck | None,
) -> tuple[bytearray, StreamProtocolError | str | None]:
    """A non-streaming answer as meant (`_decoded`) and what is wrong with it
    (`_message_failure`), unless it may hold more than `MAX_VALUES` values (counted
    first, it is never parsed); `_Unrecordable` when it cannot be decoded."""
    meant = _decoded(encoding, raw)
    if too_many_values(meant):
        return meant, crowded("the answer")
    return meant, _message_failure(meant, content_type, stop_reasons, check)


def _message_failure(
    body: bytes | bytearray,
    content_type: str,
    stop_reasons: Collection[str],
    check: AnswerCheck | None = None,
) -> StreamProtocolError | str | None:
    """What is wrong with a non-streaming answer by the adapter's rules (`check_answer`,
    as in-process; `check`'s for another provider): the violation, or why it cannot be
    checked; None for a good one, or a body the client reports it cannot read."""
    from harness._strict.dialects import check_whole
    from harness._strict.guard import check_answer

    try:
        if check is None:
            check_answer(body, content_type, stop_reasons=stop_reasons)
        else:
            check_whole(check, body, content_type)
    except StreamProtocolError as error:
        return error
    except SSEFormatError as error:
        return f"the answer cannot be read as a stream ({error})"
    except Exception as error:  # a tool input nested past what json.dumps writes
        return f"the Message cannot be read by the adapter ({type(error).__name__})"
    return None


def _no_retry(response: web.Response) -> web.Response:
    """`response` with `x-should-retry: false`, which the SDKs obey before their status rules."""
    response.headers["x-should-retry"] = "false"
    return response


def _masked(failure: StreamProtocolError) -> StreamProtocolError:
    """`failure` as an error event of ours tells it: the request's credentials (`_SECRETS`)
    masked in what its message quotes of the answer (an upstream that repeated the key
    as a `stop_reason`)."""
    secrets = _SECRETS.get()
    if not secrets:
        return failure
    reduced: Any = failure.__reduce__()  # the error's own way to build it again
    rebuild, (code, fields) = reduced
    told = {name: mask_text(v, secrets) if isinstance(v, str) else v for name, v in fields.items()}
    masked: StreamProtocolError = rebuild(code, told)
    return masked


def _unreachable(error: aiohttp.ClientError | OSError) -> str:
    """Why upstream could not be reached, without the URL aiohttp's errors quote whole (the
    upstream's userinfo, the client's query): an answer it could not read, by its status
    and reason; a URL it refuses, by what is wrong with it."""
    if isinstance(error, aiohttp.ClientResponseError):
        return f"{error.status}, {error.message}"
    if isinstance(error, aiohttp.InvalidURL):
        return f"{type(error).__name__}: {error.description or 'the URL is not valid'}"
    return str(error)


def _recorded_request(
    request: web.Request, body: bytes
) -> tuple[dict[str, Any] | None, Recorded | None, Hosted | None]:
    """The JSON body of a call the proxy records, its OpenAI dialect (None: a Messages
    call, `POST /v1/messages`) and the host it is a call of (None: the direct API's);
    (None, None, None) for any other request, passed through; `_Unrecordable` for a call
    whose body may hold more than `MAX_VALUES` values. A host's call (Bedrock's,
    Vertex's) is kept as the direct API's request (`Hosted.direct_request`: the model and
    `stream` its path carries put back in the body), of the provider served there."""
    dialect = None
    hosted = None
    nothing = None, None, None
    if request.method != "POST":
        return nothing
    path = path_of(request)
    if path.rstrip("/") != messages_path():
        dialect = recorded_dialect(request.method, path)
        hosted = hosted_at(path) if dialect is None else None
        if dialect is None and hosted is None:
            return nothing
    if values_at_most(body) > MAX_VALUES:  # counted on the bytes: it is never parsed
        raise _Unrecordable(TOO_MANY_VALUES)
    try:
        parsed = orjson.loads(body)
    except orjson.JSONDecodeError:
        return nothing
    if not isinstance(parsed, dict):
        return nothing
    if hosted is not None:
        served = _served_at(hosted, parsed)
        if served is False:
            return nothing  # no dialect's call: another model's, at a shared path
        dialect = served
        parsed = hosted.direct_request(parsed)
    elif dialect is not None:
        parsed = dialect.request_of("POST", str(request.rel_url), parsed)
    return parsed, dialect, hosted


def _served_at(hosted: Hosted, request: dict[str, Any]) -> Recorded | Literal[False] | None:
    """The dialect of the provider served at `hosted`'s host whose call `request` is
    (`hosted_provider`): None for the default provider's (Messages, read as it always
    was), False for none (another model's call, passed through unrecorded)."""
    from harness._exceptions import ANTHROPIC
    from harness._strict.dialects import hosted_provider

    found = hosted_provider(hosted, request)
    if found is None:
        return False
    return None if found.name == ANTHROPIC else found.recorded
