"""`harness serve`: cassettes answered over a real socket, to any client of the APIs replayed.

`POST /v1/messages` (Anthropic), `POST /v1/chat/completions` (OpenAI Chat Completions),
`POST /v1/responses` and its resume `GET /v1/responses/{id}?stream=true&starting_after=N`
(OpenAI Responses), and the same dialects at the hosts they are served on (Bedrock's
`POST /model/{id}/invoke-with-response-stream` in AWS event-stream frames and
`/model/{id}/invoke`, Vertex's `...:streamRawPredict` and `:rawPredict`:
`harness._hosts`) are answered as the in-process clients answer (`harness._replay.plan`),
each from the cassettes of the provider its path is for (`harness._http.dialects`):
SSE or the non-streaming JSON as the request's `stream` asks, cut into chunks, paced, with
the cassette's HTTP errors, cuts and stalls. This module only picks the cassette and
executes the planned answer on an aiohttp `StreamResponse`: each piece written as it
comes, a stall slept (without holding up other clients), a cut made by closing the
connection before the chunked body ends, so the client sees what a dropped connection
looks like live.

Which cassette answers a POST, first rule that applies (a resume GET: the cassette
holding the response it names, its events after the cursor):
1. the one named by an `x-harness-cassette` header (its path relative to the folder
   served, or its file name for a file served, `.jsonl` optional); a header naming a
   session folder among those served gets its turns, one a request, in turn order;
2. the first one, not yet played, whose header's recorded request matches the request
   on the match fields (`model`, `messages`, `system`, `tools`);
3. the next of the request's provider in order: files as given, a session folder turn
   by turn, any other folder every `*.jsonl` below it, sorted (a folder holding several
   providers' cassettes answers each provider's requests from its own, in that order).

A request the cassettes cannot answer (none named so, used up, a mismatch, a provider
none of whose cassettes is served) gets a 404 in its provider's error shape, which the
SDKs do not retry. `GET /_harness/requests` lists the requests received (headers and
body without credentials); `POST /_harness/reset` starts over. Any API key is accepted;
none is logged or kept.

Bounded whatever arrives: a POST to an API endpoint must say its body is JSON
(`content-type: application/json`, or any `application/...+json`), else it gets a 415
before its body is read: what a web page can send without a CORS preflight
(`text/plain`, a form, no content type) never reaches the server's state. (At a host's
path a body with no content type is taken as JSON when the request is signed, its
`Authorization` header one no page can send unpreflighted: boto3's `invoke_model*` sends
no content type.) A body is at most `MAX_BODY` bytes (the 413), read within the time and
among the bodies held at once that `harness._http.bounds` allows (`request_body`), and
may hold at most `MAX_VALUES` JSON values (the 413 too, before it is parsed): a large one
is parsed and redacted by a worker thread (`off_loop`), while the event loop answers
other clients. `/_harness/requests` keeps the latest `KEPT_REQUESTS` requests, dropping
the oldest while they hold more than `KEPT_REQUEST_BYTES` bytes, their headers and bodies
as held in memory (`harness._json.held_bytes`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, is_dataclass
from typing import Any, Final

import orjson
from aiohttp import web

from harness._cassette.codec import Cassette, KeptCassette, expand_paths, path_list
from harness._cassette.sessions import is_session_folder, turn_files, turn_number
from harness._exceptions import HarnessError, ReplayError
from harness._hosts import hosted_at
from harness._http.bounds import off_loop, request_body
from harness._http.dialects import (
    error_json,
    host_routes,
    post_routes,
    provider_of_path,
    resume_routes,
)
from harness._http.hosting import (
    LOCALHOST,
    MAX_BODY,
    TOO_DEEP,
    TOO_MANY_VALUES,
    harness_app,
    path_of,
)
from harness._json import (
    MAX_NESTING,
    MAX_VALUES,
    deeper_than_limit,
    held_bytes,
    may_be_too_deep,
    values_at_most,
)
from harness._providers import Provider
from harness._redact import excerpt
from harness._replay.plan import (
    Chunking,
    Cut,
    PlannedResponse,
    Stall,
    replay_error_response,
)
from harness._replay.replayer import (
    DEFAULT_MATCH_ON,
    CapturedRequest,
    Replayer,
    answered_as,
    cassettes_from,
)

__all__ = [
    "CASSETTE_HEADER",
    "KEPT_REQUESTS",
    "KEPT_REQUEST_BYTES",
    "CassetteServer",
    "is_json_type",
]

#: The request header naming the cassette to answer from.
CASSETTE_HEADER: Final = "x-harness-cassette"
#: `/_harness/requests` lists at most this many of the latest requests...
KEPT_REQUESTS: Final = 1000
#: ...and drops the oldest while they hold more bytes than this, headers and bodies as held
#: in memory (`Replayer.keep`).
KEPT_REQUEST_BYTES: Final = 64 * 1024 * 1024


def is_json_type(content_type: str) -> bool:
    """Whether a `content-type` says JSON: `application/json` or `application/...+json`,
    any parameters (`; charset=utf-8`) aside."""
    kind = content_type.partition(";")[0].strip().lower()
    return kind == "application/json" or (
        kind.startswith("application/") and kind.endswith("+json")
    )


def _names(served: Sequence[tuple[str, str]], cassettes: Sequence[Cassette]) -> dict[str, Cassette]:
    """Each cassette under the names a header may give: relative to its folder served (or
    its file name), with and without `.jsonl`; the path as given works too."""
    names: dict[str, Cassette] = {}
    for (given, root), cassette in zip(served, cassettes, strict=True):
        relative = os.path.relpath(given, root) if root else os.path.basename(given)
        for name in (relative, os.path.normpath(given)):
            for key in (name, name.removesuffix(".jsonl")):
                names.setdefault(key, cassette)
    return names


def _sessions(names: dict[str, Cassette]) -> dict[str, list[Cassette]]:
    """Each session folder a header may name (as its turns' names, less the file name),
    with its turns in turn order."""
    turns: dict[str, dict[int, Cassette]] = {}
    for name, cassette in names.items():
        folder, _, file = name.rpartition(os.sep)
        number = turn_number(file)
        if folder and number is not None:
            turns.setdefault(folder, {})[number] = cassette
    return {folder: [found[n] for n in sorted(found)] for folder, found in turns.items()}


def _inside(path: str, root: str) -> bool:
    return os.path.commonpath([path, root]) == root


def _opened_at(path: str) -> str:
    """Where a cassette is read from: its real path if a link leads there, else as found."""
    real = os.path.realpath(path)
    return path if real == os.path.abspath(path) else real


def _served(
    paths: Sequence[str], left_out: list[str]
) -> tuple[list[Cassette], list[tuple[str, str]]]:
    """The cassettes in answer order, and for each the path found and the folder served
    ("" for a file given): a session folder (`turn-NN.jsonl`) turn by turn, any other
    folder every `*.jsonl` below it, sorted, so that its subfolders can be named too,
    of every provider.

    Symlinks are resolved now, once: a cassette reached through a link is read at its
    real path, and one whose real path lies outside the real path of its folder is left
    out, the reason added to `left_out`.
    """
    found: list[tuple[str, str, str]] = []  # as found, its folder, where it is read
    for path in path_list(paths):
        if not os.path.isdir(path):
            found.append((path, "", _opened_at(path)))
            continue
        session = is_session_folder(path)
        files = [str(file) for file in turn_files(path)] if session else expand_paths([path])
        root = os.path.realpath(path)
        inside = []
        for file in files:
            real = os.path.realpath(file)
            if _inside(real, root):
                inside.append((file, path, _opened_at(file)))
            else:
                left_out.append(f"left out {file}: it links to {real}, outside {path}")
        if not inside:
            raise ReplayError(f"{path}: no cassettes (*.jsonl) in the folder")
        found += inside
    # Each read, checked and encoded once, now: every answer is built from the kept form.
    cassettes = cassettes_from([real for _, _, real in found], KeptCassette)
    return cassettes, [(given, root) for given, root, _ in found]


def _jsonable(value: Any) -> Any:
    """A captured request as JSON: dataclasses as objects, bytes as text."""
    if is_dataclass(value) and not isinstance(value, type):
        return _jsonable(asdict(value))
    if isinstance(value, dict):
        return {str(key): _jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(item) for item in value]
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return value


def _listing(kept: list[CapturedRequest]) -> bytes:
    """JSON of the requests kept, written by orjson from the requests themselves, no copy
    made: a body at the nesting limit is two levels deeper once listed, past orjson's
    encoder; the standard library takes those."""
    try:
        return orjson.dumps(kept)
    except orjson.JSONEncodeError:
        return json.dumps(_jsonable(kept)).encode()


class _Refused(Exception):
    """A request body refused before any cassette is read: its status, the reason the log
    gives, the message the client gets."""

    def __init__(self, status: int, told: str, message: str) -> None:
        super().__init__(message)
        self.status, self.told, self.message = status, told, message


def _too_deep(error: orjson.JSONDecodeError) -> bool:
    """Whether orjson refused a body for its nesting ("depth limit exceeded")."""
    return "depth limit" in str(error)


class CassetteServer:
    """The serve app's state: the cassettes, their names, and the replayer answering in order."""

    def __init__(
        self,
        paths: Sequence[str],
        *,
        chunking: Chunking = Chunking(),
        realtime: bool = False,
        match_on: Sequence[str] | None = DEFAULT_MATCH_ON,
        log: Callable[[str], None] = lambda line: None,
        max_body: int = MAX_BODY,
        host: str = LOCALHOST,
        stall_ms: int | None = None,
    ) -> None:
        #: Files found in a folder served but left out, each with the reason.
        self.left_out: list[str] = []
        # A bad cassette is told now, in one line, not at a request (`KeptCassette`).
        self.cassettes, served = _served(paths, self.left_out)
        self.names = _names(served, self.cassettes)
        self._first_names = {id(found): name for name, found in reversed(self.names.items())}
        self.sessions = _sessions(self.names)
        self._turns_answered: dict[str, int] = {}
        self.replayer = Replayer(
            self.cassettes,
            match_on=match_on,
            chunking=chunking,
            realtime=realtime,
            keep_requests=KEPT_REQUESTS,
            keep_request_bytes=KEPT_REQUEST_BYTES,
        )
        self.log = log
        self.max_body = max_body
        self.host = host
        #: The longest a `stall` line may last; past it, the connection is closed there.
        self.stall_ms = stall_ms
        self._played: set[int] = set()
        #: each provider's cassettes (their numbers), in answer order
        self._of: dict[str, list[int]] = {}
        for number, cassette in enumerate(self.cassettes):
            self._of.setdefault(cassette.provider, []).append(number)
        #: the one provider served, whose clients read a refusal at a path of no provider's
        #: (google-genai's `countTokens`); None when several are
        self._only = self.cassettes[0].dialect if len(self._of) == 1 else None
        self._numbers = {id(cassette): number for number, cassette in enumerate(self.cassettes)}
        self._in_order: dict[str, int] = {}  # provider -> how many of its own were answered
        #: the cassettes answered from, by number, the latest last (one entry a cassette)
        self._recent: dict[int, None] = {}
        self._count = 0

    @property
    def providers(self) -> tuple[str, ...]:
        """The providers whose cassettes it serves: whose clients it answers."""
        return tuple(self._of)

    def app(self) -> web.Application:
        app = harness_app(
            self.log, max_body=self.max_body, host=self.host, error_answer=self._error_answer
        )
        for path, found in [*post_routes().items(), *host_routes().items()]:
            app.router.add_post(path, self._handler(found))
        for path, found in resume_routes().items():
            app.router.add_get(path, self._resume_handler(found))
        app.router.add_get("/_harness/requests", self.requests)
        app.router.add_post("/_harness/reset", self.reset)
        return app

    def _name(self, cassette: Cassette) -> str:
        # a file served twice is two cassettes, the names the first one's
        return self._first_names.get(id(cassette)) or os.path.basename(cassette.path)

    def _error_answer(self, path: str, status: int, message: str) -> web.Response:
        """An error answer in the shape the client of `path`'s provider reads (at a path of
        no provider's, the one provider served, if one is: its client sent it)."""
        found = provider_of_path("POST", path) or provider_of_path("GET", path) or self._only
        body = error_json(found, status, message, path)
        return web.json_response(body, status=status)

    def _handler(self, found: Provider) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        async def handler(request: web.Request) -> web.StreamResponse:
            return await self.answer(request, found)

        return handler

    def _resume_handler(
        self, found: Provider
    ) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        async def handler(request: web.Request) -> web.StreamResponse:
            return await self.resume(request, found)

        return handler

    def _matching(self, sent: CapturedRequest, name: str) -> int | None:
        """The first cassette of provider `name` not yet played whose recorded request
        matches `sent`."""
        if self.replayer.match_on is None:
            return None
        for number in self._of.get(name, []):
            cassette = self.cassettes[number]
            recorded = (cassette.header or {}).get("request")
            if number in self._played or not isinstance(recorded, dict):
                continue
            if self.replayer.matches(cassette, sent):
                return number
        return None

    def _plan(
        self, request: web.Request, sent: CapturedRequest, size: int, found: Provider
    ) -> tuple[PlannedResponse, str]:
        """The planned answer to `sent` and which cassette gives it, by the selection
        order; `sent` is kept (`size` bytes held) once it names no unknown cassette."""
        named = request.headers.get(CASSETTE_HEADER)
        chosen = turn = None
        if named is not None:
            key = os.path.normpath(named.strip())
            chosen = self.names.get(key)
            if chosen is None:
                turn = self._next_turn(key)
                chosen = None if turn is None else self.sessions[key][turn]
            if chosen is None:
                raise LookupError(f"no cassette named {named!r} is served")
        self.replayer.keep(sent, size)
        # An answer is taken (a session's turn, the next in order) once it is given: a
        # refused request (a mismatch) consumes nothing, as `Replayer.respond_to` has it.
        if chosen is not None:
            planned = self._answer(chosen, sent)
            if turn is not None:
                self._turns_answered[key] = turn + 1
            return planned
        name = found.name
        number = self._matching(sent, name)
        if number is not None:
            self._played.add(number)
            return self._answer(self.cassettes[number], sent)
        ours = self._of.get(name, [])
        answered = self._in_order.get(name, 0)
        while answered < len(ours) and ours[answered] in self._played:  # taken by a match
            answered += 1
        if answered == len(ours):
            raise ReplayError(self._used_up(name, len(ours), request))
        planned = self._answer(self.cassettes[ours[answered]], sent)
        self._in_order[name] = answered + 1
        self._played.add(ours[answered])
        return planned

    def _answer(self, cassette: Cassette, sent: CapturedRequest) -> tuple[PlannedResponse, str]:
        """`cassette`'s answer to `sent`, noted as the latest answered (for a resume)."""
        planned = self.replayer.answer_with(cassette, sent)
        number = self._numbers[id(cassette)]
        self._recent.pop(number, None)
        self._recent[number] = None
        return planned, self._name(cassette)

    def _used_up(self, name: str, held: int, request: web.Request) -> str:
        """Why a request finds no cassette left of its provider `name`."""
        if not held:
            return f"no {name} cassette is served, to answer {request.method} {request.path}"
        number = self.replayer.captured
        told = f"request {number}, but the cassettes hold {held} response{'s' if held != 1 else ''}"
        return told if len(self._of) == 1 else f"{told} of {name}"

    def _next_turn(self, session: str) -> int | None:
        """The index of the next turn of a session folder named by the header (None: no
        such folder), not yet taken: `_plan` takes it once it answers."""
        turns = self.sessions.get(session)
        if turns is None:
            return None
        answered = self._turns_answered.get(session, 0)
        if answered == len(turns):
            raise ReplayError(f"session {session!r}: its {len(turns)} turns were all answered")
        return answered

    async def answer(self, request: web.Request, provider: Provider) -> web.StreamResponse:
        """A POST to an endpoint of `provider` (resolved once, by the route): one answer
        from the cassette of that provider the selection order picks; a body that is no
        JSON object gets a 400."""
        self._count += 1
        where = f"#{self._count} POST {request.path}"
        kind = request.headers.get("Content-Type", "")
        if not is_json_type(kind) and not _signed_untyped(request, kind):
            kind = excerpt(kind) if kind else "missing"
            self.log(f"{where} -> 415 (content-type {kind}, not JSON)")
            said = f"send the body as JSON (content-type: application/json), not {kind}"
            return _refused(request, provider, 415, f"harness serve: {said}")
        try:
            sent, size = await self._captured(request)
        except _Refused as refused:
            self.log(f"{where} -> {refused.status} ({refused.told})")
            return _refused(request, provider, refused.status, refused.message)
        try:
            planned, name = self._plan(request, sent, size, provider)
        except (LookupError, HarnessError) as error:  # no such name, used up, a mismatch
            self.log(f"{where} -> 404: {str(error).splitlines()[0]}")
            refusal = replay_error_response(error, provider, path_of(request))
            return await self._send(request, refusal)
        streams = answered_as(provider.framing, sent) is not False
        self.log(f"{where} {'stream' if streams else 'json'} -> {planned.status} from {name}")
        return await self._send(request, planned, where)

    async def _captured(self, request: web.Request) -> tuple[CapturedRequest, int]:
        """The request as captured from its body (`_read`), and the bytes it holds: the body
        read within the bounds (`request_body`), a large one read by a worker thread; it
        is let go (and its place among the bodies held) before the answer begins."""
        parts = (request.method, path_of(request), dict(request.headers), dict(request.query))
        async with request_body(request) as body:
            return await off_loop(self._read, *parts, body, size=len(body))

    def _read(
        self, method: str, path: str, headers: dict[str, str], query: dict[str, str], body: bytes
    ) -> tuple[CapturedRequest, int]:
        """The request as captured (credentials removed: `Replayer.request_of`) and about
        the bytes it holds; `_Refused` for a body that may hold more than `MAX_VALUES`
        values (before parsing it), is no JSON object, or nests past `MAX_NESTING`."""
        deep = f"the body nests deeper than {MAX_NESTING} levels"
        if values_at_most(body) > MAX_VALUES:
            told = f"the body may hold more than {MAX_VALUES} JSON values"
            raise _Refused(413, told, f"harness serve: {TOO_MANY_VALUES}")
        try:
            parsed = orjson.loads(body)
        except orjson.JSONDecodeError as error:
            if _too_deep(error):  # past orjson's reader: past ours too
                raise _Refused(400, deep, f"harness serve: {TOO_DEEP}") from None
            said = f"harness serve: the request body is not JSON: {error}"
            raise _Refused(400, "the body is not JSON", said) from None
        if not isinstance(parsed, dict):
            said = "harness serve: the request body must be a JSON object"
            raise _Refused(400, "the body is not a JSON object", said)
        if may_be_too_deep(body) and deeper_than_limit(parsed):
            raise _Refused(400, deep, f"harness serve: {TOO_DEEP}")
        return self.replayer.request_of(method, path, headers, parsed, query), held_bytes(body)

    async def resume(self, request: web.Request, provider: Provider) -> web.StreamResponse:
        """A resume GET (`/v1/responses/{id}?stream=true&starting_after=N`): the events
        after sequence N of the cassette holding response `{id}`; the order stays."""
        self._count += 1
        where = f"#{self._count} GET {request.path}"
        query = dict(request.query)
        self.replayer.capture_parsed(request.method, path_of(request), dict(request.headers), None)
        answered = [self.cassettes[number] for number in self._recent]
        try:
            planned = self.replayer.resume_from(provider, request.match_info["id"], query, answered)
        except HarnessError as error:  # no cassette holds it, a bad cursor
            self.log(f"{where} -> 404: {str(error).splitlines()[0]}")
            return await self._send(request, replay_error_response(error, provider))
        kind = "stream" if query.get("stream") == "true" else "json"
        after = query.get("starting_after", "-1")
        self.log(f"{where} {kind} after {after} -> {planned.status}")
        return await self._send(request, planned, where)

    async def _send(
        self, request: web.Request, planned: PlannedResponse, where: str = ""
    ) -> web.StreamResponse:
        """Execute a planned answer: write the bytes, sleep the stalls, drop at a cut."""
        response = web.StreamResponse(status=planned.status, headers=planned.headers)
        await response.prepare(request)
        try:
            for piece in planned.body:
                if type(piece) is bytes:  # almost every piece: looked at first
                    await response.write(piece)
                elif isinstance(piece, Stall):
                    cap = self.stall_ms
                    if cap is not None and not piece.paced and piece.ms > cap:
                        await asyncio.sleep(cap / 1000)  # the stall, cut short: then a drop
                        self.log(f"{where}: a {piece.ms} ms stall cut at {cap} ms (--stall-ms)")
                        _drop(request)
                        return response
                    await asyncio.sleep(piece.ms / 1000)
                elif isinstance(piece, Cut):
                    _drop(request)
                    return response
        except ConnectionResetError:
            self.log(f"{where}: the client left before the answer ended")
            return response
        except HarnessError as error:  # a cassette line found bad mid-stream
            self.log(f"{where}: cut: {error}")
            _drop(request)
            return response
        # A client may close as soon as it has read the last event (the openai SDK does
        # at `[DONE]`): its answer was whole.
        with contextlib.suppress(ConnectionResetError):
            await response.write_eof()
        return response

    async def requests(self, request: web.Request) -> web.Response:
        """`GET /_harness/requests`: the requests received, credentials removed (written
        by a worker thread: they may hold many megabytes)."""
        kept = list(self.replayer.requests)  # as they are now: the thread reads this list
        return web.json_response(body=await off_loop(_listing, kept))

    async def reset(self, request: web.Request) -> web.Response:
        """`POST /_harness/reset`: forget the requests, play from the first cassette again."""
        self.replayer.reset()
        self._played.clear()
        self._turns_answered.clear()
        self._in_order.clear()
        self._recent.clear()
        self.log("reset: the next request gets the first answer again")
        return web.json_response({"reset": True})


def _signed_untyped(request: web.Request, kind: str) -> bool:
    """A body with no content type at a host's path, from a client that signs (boto3's
    `invoke_model*` sends none unless `contentType=` is given, and Bedrock reads it as
    JSON): taken as JSON, since its `Authorization` header is one no web page can send
    without a CORS preflight."""
    return (
        not kind and "Authorization" in request.headers and hosted_at(path_of(request)) is not None
    )


def _refused(request: web.Request, provider: Provider, status: int, message: str) -> web.Response:
    """A request refused before any cassette is read, in the error shape its path's
    clients read (`error_json`)."""
    body = error_json(provider, status, message, path_of(request))
    return web.json_response(body, status=status)


def _drop(request: web.Request) -> None:
    """Close the connection before the body ends: the client sees a connection cut."""
    if request.transport is not None:
        request.transport.close()
