"""Running an HTTP app of the harness (`serve`, `proxy`): bind, announce, answer errors, stop.

Both commands are aiohttp applications (docs/server.md says why aiohttp). This module
holds what they share: the API's own error JSON (`{"type": "error", "error": {...}}`)
for anything the app does not answer itself, so a client's SDK raises its usual typed
error and never sees a traceback; binding to 127.0.0.1 by default; the base URL line
(one variable an SDK served: `base_url_line`); a request's path as paths are matched
(`path_of`: a Bedrock ARN's `/` kept `%2F`); a clean stop on SIGINT/SIGTERM
(in-flight responses are cancelled, so their connections close unfinished and nothing
half-done is written); `LineLog`, the
request log that never holds up the event loop (`harness._http.bounds`, with the
descriptor limit and the loop's errors under a burst, and the time and memory a request
may take); and `ServerThread`, the same server in
a background thread for tests and benchmarks. No access log is kept: a request's
headers, and so its API key, are never logged.

"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import ipaddress
import re
import signal
import threading
from collections.abc import Awaitable, Callable, Collection
from types import TracebackType
from typing import Any, Final
from urllib.parse import urlsplit

from aiohttp import web
from aiohttp.http_exceptions import BadHttpMethod, HttpProcessingError, LineTooLong
from aiohttp.web_protocol import RequestHandler
from aiohttp.web_request import BaseRequest
from aiohttp.web_server import Server

from harness._exceptions import InputError
from harness._http.bounds import (
    BODIES_AT_ONCE,
    BUDGET,
    HEAD_TIMEOUT,
    BodyBudget,
    LoopErrors,
    raise_descriptor_limit,
)
from harness._json import MAX_NESTING, MAX_VALUES
from harness._providers.wire import request_path

__all__ = [
    "CONTROL_PREFIX",
    "LOCALHOST",
    "MAX_BODY",
    "MAX_FIELD_BYTES",
    "MAX_HEADERS",
    "TOO_DEEP",
    "TOO_MANY_VALUES",
    "ErrorAnswer",
    "ServerThread",
    "api_error",
    "api_errors",
    "base_url_line",
    "control_refusal",
    "harness_app",
    "path_of",
    "run_until_signal",
]

LOCALHOST: Final = "127.0.0.1"
#: The Messages API's own request size limit (32 MB); larger bodies get its 413.
MAX_BODY: Final = 32 * 1024 * 1024
#: A request line or header line may hold at most this many bytes (aiohttp's default),
#: a request at most `MAX_HEADERS` headers: beyond, 414 or 431 in the API's error shape.
MAX_FIELD_BYTES: Final = 8190
MAX_HEADERS: Final = 128
#: Why a request body nested past the one nesting limit (`harness._json`) gets a 400.
TOO_DEEP: Final = f"the request body nests deeper than {MAX_NESTING} levels, the limit"
#: Why a request body that may hold too many values (`harness._json.values_at_most`), in
#: bytes within the size limit, is not parsed.
TOO_MANY_VALUES: Final = (
    f"the request body may hold more than {MAX_VALUES} JSON values (commas and opening"
    " brackets), the limit"
)
#: How long in-flight responses may run on after a stop is asked before they are cancelled.
SHUTDOWN_GRACE: Final = 0.25
#: Seconds the rest of a body left unread (a 413, a 408) is read and dropped for, so that
#: the client reads the answer, before the connection closes (aiohttp's `lingering_time`).
LINGER: Final = 10.0


#: The `error.type` the API gives with each status (its "Errors" page).
ERROR_TYPE_OF_STATUS: Final = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    405: "invalid_request_error",
    408: "timeout_error",
    413: "request_too_large",
    414: "invalid_request_error",
    415: "invalid_request_error",
    429: "rate_limit_error",
    431: "invalid_request_error",
    500: "api_error",
    502: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}


def api_error(status: int, message: str) -> web.Response:
    """An error answer in the API's shape: `{"type": "error", "error": {"type", "message"}}`."""
    kind = ERROR_TYPE_OF_STATUS.get(status, "api_error")
    return web.json_response(
        {"type": "error", "error": {"type": kind, "message": message}}, status=status
    )


def path_of(request: web.Request) -> str:
    """`request`'s path as paths are matched and kept (`request_path`): a model id sent
    as one segment (a Bedrock ARN, its `/` as `%2F`) one segment still."""
    return request_path(request.rel_url.raw_path)


#: Where an app keeps the log its bad requests are told on (`harness_app`).
LOG: Final[web.AppKey[Callable[[str], None]]] = web.AppKey("harness-log")


#: An app's error answer for a request's path, a status and a message (`harness_app`).
ErrorAnswer = Callable[[str, int, str], web.Response]


def _messages_error(path: str, status: int, message: str) -> web.Response:
    return api_error(status, message)


def harness_app(
    log: Callable[[str], None],
    *,
    max_body: int = MAX_BODY,
    host: str = LOCALHOST,
    error_answer: ErrorAnswer = _messages_error,
) -> web.Application:
    """An app answering every failure in the API's error shape (`error_answer` picks it by
    path; by default the Messages API's), told on `log` in one line; its control
    endpoints answer this machine only (`local_control`, `host` listened on); the bodies
    it reads held within `BODIES_AT_ONCE` bytes (`harness._http.bounds.request_body`)."""
    begun: dict[int, web.StreamResponse | None] = {}  # by request, while its handler runs

    async def note_begun(request: web.Request, response: web.StreamResponse) -> None:
        if id(request) in begun:
            begun[id(request)] = response

    middlewares = [api_errors(log, error_answer, begun), local_control(host, log)]
    app = web.Application(client_max_size=max_body, middlewares=middlewares)
    app.on_response_prepare.append(note_begun)
    app[LOG] = log
    app[BUDGET] = BodyBudget(BODIES_AT_ONCE)
    return app


#: The path prefix of the harness's own endpoints (`/_harness/requests`, `/_harness/reset`).
CONTROL_PREFIX: Final = "/_harness/"


def _host_name(authority: str) -> str:
    """The host of a `Host` header (`name:port`, `[v6]:port`), lower-cased, brackets off."""
    authority = authority.strip().lower()
    if authority.startswith("["):
        return authority[1 : authority.find("]")] if "]" in authority else authority
    return authority.rpartition(":")[0] if authority.count(":") == 1 else authority


def _is_this_machine(name: str | None, host: str) -> bool:
    if not name:
        return False
    if name in ("localhost", host.lower().strip("[]")):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def control_refusal(request: web.BaseRequest, host: str = LOCALHOST) -> str | None:
    """Why a request to the control endpoints is refused (None: it is not).

    They answer only a request whose `Host` names this machine by a loopback address,
    `localhost` or the address listened on (`--host`), and whose `Origin`, if any, does
    too: a web page the developer visits reaches 127.0.0.1 only under its own name (DNS
    rebinding) or with its own origin, and may neither read the captured prompts nor
    reset the server.
    """
    named = _host_name(request.headers.get("Host", ""))
    if not _is_this_machine(named, host):
        return f"Host {named!r} is not this machine"
    origin = request.headers.get("Origin")
    if origin is not None:
        try:
            origin_host = urlsplit(origin).hostname
        except ValueError:
            origin_host = None
        if not _is_this_machine(origin_host, host):
            return f"Origin {origin!r} is not this machine"
    return None


def local_control(host: str, log: Callable[[str], None]) -> Any:
    """Middleware refusing the control endpoints (`CONTROL_PREFIX`) to another Host or
    Origin with the API's 403 (`control_refusal`)."""

    @web.middleware
    async def middleware(
        request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        if request.path.startswith(CONTROL_PREFIX):
            refusal = control_refusal(request, host)
            if refusal is not None:
                log(f"{request.method} {request.path} -> 403: {refusal}")
                return api_error(
                    403, f"harness: {CONTROL_PREFIX} answers this machine only: {refusal}"
                )
        return await handler(request)

    return middleware


def api_errors(
    log: Callable[[str], None],
    error_answer: ErrorAnswer = _messages_error,
    begun: dict[int, web.StreamResponse | None] | None = None,
) -> Any:
    """Middleware turning aiohttp's HTTP exceptions and any failure into the API's error
    JSON (`error_answer`'s for the request's path).

    `begun` holds, by request while its handler runs, the answer whose headers went out
    (`harness_app` notes each as it is prepared): a failure after that is told with the
    status that was sent, never as a 500 nobody received; a client gone mid-answer as
    gone, anything else as an internal error that closes the connection there (a second
    answer cannot follow the first).
    """
    running: dict[int, web.StreamResponse | None] = {} if begun is None else begun

    @web.middleware
    async def middleware(
        request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        running[id(request)] = None
        try:
            return await handler(request)
        except web.HTTPException as error:
            if error.status < 400:
                raise
            if error.status == 413:
                message = "Request exceeds the maximum allowed number of bytes."
            elif error.status == 404:
                message = f"Not found: {request.method} {request.path}"
            elif error.status == 408:  # the body came too slowly (`request_body`)
                message = error.text or error.reason
            else:
                message = error.reason
            log(f"{request.method} {request.path} -> {error.status}")
            answer = error_answer(path_of(request), error.status, message)
            if error.status == 408:
                answer.force_close()  # once aiohttp has read the rest `LINGER` s at most
            return answer
        except Exception as error:  # one line, never a traceback
            sent = running.get(id(request))
            if sent is not None:
                return _ended_after_begun(request, sent, error, log)
            log(f"{request.method} {request.path} -> 500 ({type(error).__name__}: {error})")
            internal = f"harness: internal error: {type(error).__name__}"
            return error_answer(path_of(request), 500, internal)
        finally:
            del running[id(request)]

    return middleware


def _ended_after_begun(
    request: web.Request, sent: web.StreamResponse, error: Exception, log: Callable[[str], None]
) -> web.StreamResponse:
    """A handler failed after its answer began: told with the status sent; the answer
    (`sent`) is returned for aiohttp to end, which finds the connection gone or closed."""
    where = f"{request.method} {request.path} -> {sent.status}"
    if isinstance(error, ConnectionError):
        log(f"{where}, the client left before the answer ended")
    else:
        log(f"{where}, then an internal error ({type(error).__name__}: {error}): cut")
        if request.transport is not None:
            request.transport.close()
    return sent


_REQUEST_LINE: Final = re.compile(rb"/|[A-Z]+ ")


def _bad_request(error: BaseException | None) -> tuple[int, str]:
    """The status and a fixed reason for a request aiohttp could not parse.

    The reason never quotes the request: aiohttp's own message quotes the offending
    line, which may be an API key's header.
    """
    if isinstance(error, LineTooLong):
        line = error.args[0] if error.args else b""
        if isinstance(line, str):
            line = line.encode("utf-8", errors="replace")
        if isinstance(line, bytes | bytearray) and _REQUEST_LINE.match(line):
            return 414, f"the request line is longer than {MAX_FIELD_BYTES} bytes"
        return 431, f"a header is longer than {MAX_FIELD_BYTES} bytes"
    if isinstance(error, HttpProcessingError) and error.message.startswith("Too many headers"):
        return 431, f"more than {MAX_HEADERS} headers"
    if isinstance(error, BadHttpMethod):
        return 400, "not an HTTP request (a bad method)"
    if isinstance(error, HttpProcessingError):
        return 400, f"malformed HTTP ({type(error).__name__})"
    return 500, f"internal error ({type(error).__name__})"


class _Handler(RequestHandler):
    """aiohttp's connection handler, telling a failure in one line and the API's error JSON.

    aiohttp logs a request it cannot parse with a traceback quoting the offending line
    (an `x-api-key` header cut at 8190 bytes, say), and answers it in plain text.
    """

    def __init__(self, manager: Server, log: Callable[[str], None], **options: Any) -> None:
        super().__init__(manager, **options)
        self._log = log

    def handle_error(
        self,
        request: BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        code, reason = _bad_request(exc)
        self._log(f"bad request from {request.remote} -> {code}: {reason}")
        if request.writer.output_size > 0:  # the answer had begun: the connection is broken
            raise ConnectionError("the answer had begun: the connection is closed")
        response = api_error(code, f"harness: {reason}")
        response.force_close()
        return response

    def log_exception(self, *args: Any, **kw: Any) -> None:
        error = kw.get("exc_info")
        name = type(error).__name__ if isinstance(error, BaseException) else "error"
        self._log(f"{args[0] if args else 'error'} ({name})")


class _Server(Server):
    def __init__(self, log: Callable[[str], None], made: Server) -> None:
        super().__init__(
            made.request_handler,
            request_factory=made.request_factory,
            handler_cancellation=made.handler_cancellation,
            loop=made._loop,
            **made._kwargs,
        )
        self._harness_log = log

    def __call__(self) -> RequestHandler:
        return _Handler(self, self._harness_log, loop=self._loop, **self._kwargs)


class _Runner(web.AppRunner):
    """`AppRunner` whose connections are `_Handler`s telling failures on the app's log."""

    async def _make_server(self) -> Server:
        made = await super()._make_server()
        return _Server(self.app.get(LOG, _nowhere), made)


def _nowhere(line: str) -> None:
    """The log of an app built without `harness_app`: lines go nowhere."""


def _base_url(site: web.TCPSite) -> str:
    server = site._server
    assert isinstance(server, asyncio.base_events.Server)
    host, port = server.sockets[0].getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


async def _start(app: web.Application, host: str, port: int) -> tuple[web.AppRunner, str]:
    asyncio.get_running_loop().set_exception_handler(LoopErrors(app.get(LOG, _nowhere)))
    runner = _Runner(
        app,
        access_log=None,
        handle_signals=False,
        shutdown_timeout=SHUTDOWN_GRACE,
        keepalive_timeout=HEAD_TIMEOUT,  # also how long a request's head may take to come
        lingering_time=LINGER,
        max_line_size=MAX_FIELD_BYTES,
        max_field_size=MAX_FIELD_BYTES,
        max_headers=MAX_HEADERS,
    )
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    try:
        await site.start()
    except OSError as error:
        await runner.cleanup()
        if error.errno == errno.EADDRINUSE:
            raise InputError(f"port {port} on {host} is in use") from None
        raise InputError(f"cannot listen on {host}:{port}: {error.strerror or error}") from None
    return runner, _base_url(site)


def base_url_line(server: str, providers: Collection[str]) -> str:
    """The line `serve` and `proxy` start with: `VARIABLE=URL` for each SDK client that
    reaches one of `providers` at `server` (each provider's `client_env`, from its SDK,
    then the clients of the hosts it is served on, from its `hosted`: the Anthropic SDK's
    `ANTHROPIC_BEDROCK_BASE_URL` and `ANTHROPIC_VERTEX_BASE_URL`), once a variable, in
    the registry's order, separated by spaces: `export $(head -n 1 LOG)` sets them all
    (`ANTHROPIC_BASE_URL=http://HOST:PORT ... OPENAI_BASE_URL=http://HOST:PORT/v1`)."""
    from harness._providers import providers as registered

    served = dict.fromkeys(
        env
        for found in registered()
        if found.name in providers and found.has("client")
        for env in (found.client_env, *(sdk.env for sdk in found.hosted.values()))
    )
    return " ".join(env.assignment(server) for env in served)


async def run_until_signal(
    app: web.Application, host: str, port: int, on_ready: Callable[[str], None]
) -> str:
    """Serve `app` until SIGINT or SIGTERM; return that signal's name.

    `on_ready` gets the base URL once the socket listens. A port in use, or any address
    that cannot be bound, raises `InputError` in one line. The soft limit of open
    descriptors is raised first (`raise_descriptor_limit`).
    """
    raise_descriptor_limit()
    runner, url = await _start(app, host, port)
    loop = asyncio.get_running_loop()
    stopped: asyncio.Future[str] = loop.create_future()

    def stop(sig: signal.Signals) -> None:
        if not stopped.done():
            stopped.set_result(sig.name)

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop, sig)
    try:
        on_ready(url)
        return await stopped
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        await runner.cleanup()


class ServerThread:
    """An app served on 127.0.0.1 (a free port by default) by a background thread.

    `with ServerThread(app) as url:` gives the base URL; leaving the block stops the
    server and joins the thread. For tests and benchmarks that call it from sync code.
    """

    def __init__(self, app: web.Application, *, host: str = LOCALHOST, port: int = 0) -> None:
        self._app = app
        self._host = host
        self._port = port
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self.url = ""
        self._thread = threading.Thread(target=self._run, name="harness-server", daemon=True)

    def _run(self) -> None:
        asyncio.run(self._serve())  # which also ends the tasks a stop left cancelled

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        try:
            runner, self.url = await _start(self._app, self._host, self._port)
        except BaseException as error:
            self._error = error
            self._ready.set()
            return
        self._ready.set()
        try:
            await self._stop.wait()
        finally:
            await runner.cleanup()

    def __enter__(self) -> str:
        self._thread.start()
        self._ready.wait()
        if self._error is not None:
            self._thread.join()
            raise self._error
        return self.url

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop serving (in-flight responses are cut) and wait for the thread."""
        loop, stop = self._loop, self._stop
        if loop is not None and stop is not None and self._thread.is_alive():
            with contextlib.suppress(RuntimeError):  # the loop already closed
                loop.call_soon_threadsafe(stop.set)
        self._thread.join()

    def __repr__(self) -> str:
        return f"ServerThread({self.url or 'not started'})"
