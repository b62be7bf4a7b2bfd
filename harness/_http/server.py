"""`harness serve`: cassettes answered over a real socket, to any client of the Messages API.

`POST /v1/messages` is answered as the in-process clients answer (`harness._replay.plan`):
SSE or a `Message` JSON as the request's `stream` asks, cut into chunks, paced, with
the cassette's HTTP errors, cuts and stalls. This module only picks the cassette and
executes the planned answer on an aiohttp `StreamResponse`: each piece written as it
comes, a stall slept (without holding up other clients), a cut made by closing the
connection before the chunked body ends, so the client sees what a dropped connection
looks like live.

Which cassette answers a request, first rule that applies:
1. the one named by an `x-harness-cassette` header (its path relative to the folder
   served, or its file name for a file served, `.jsonl` optional); a header naming a
   session folder among those served gets its turns, one a request, in turn order;
2. the first one, not yet played, whose header's recorded request matches the request
   on the match fields (`model`, `messages`, `system`, `tools`);
3. the next in order: files as given, a session folder turn by turn, any other folder
   every `*.jsonl` below it, sorted.

`GET /_harness/requests` lists the requests received (headers and body without
credentials); `POST /_harness/reset` starts over. Any API key is accepted; none is
logged or kept.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import asdict, is_dataclass
from typing import Any, Final

import orjson
from aiohttp import web

from harness._cassette.codec import (
    Cassette,
    KeptCassette,
    anthropic_only,
    expand_paths,
    of_provider,
)
from harness._cassette.sessions import is_session_folder, turn_files, turn_number
from harness._exceptions import HarnessError, ReplayError
from harness._http.hosting import LOCALHOST, MAX_BODY, TOO_DEEP, api_error, harness_app
from harness._json import MAX_NESTING, deeper_than_limit, may_be_too_deep
from harness._replay.plan import (
    Chunking,
    Cut,
    PlannedResponse,
    Stall,
    replay_error_response,
)
from harness._replay.replayer import DEFAULT_MATCH_ON, CapturedRequest, Replayer, cassettes_from

__all__ = ["CASSETTE_HEADER", "CassetteServer"]

#: The request header naming the cassette to answer from.
CASSETTE_HEADER: Final = "x-harness-cassette"
MESSAGES_PATH: Final = "/v1/messages"


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


def _anthropic_ones(
    inside: list[tuple[str, str, str]], folder: str, left_out: list[str]
) -> list[tuple[str, str, str]]:
    """The cassettes found in `folder` (as found, the folder, where read) that the server
    answers from: Anthropic's; the others are left out in one line, and a folder of theirs
    alone is refused as one of them is."""
    kept, others = of_provider([opened for _, _, opened in inside])
    if others and not kept:
        anthropic_only(Cassette(others[0]), "harness serve")
    if others:
        left_out.append(
            f"left out {len(others)} cassettes of other providers below {folder}: "
            "harness serve answers Anthropic ones only for now"
        )
    answered = set(kept)
    return [found for found in inside if found[2] in answered]


def _served(
    paths: Sequence[str], left_out: list[str]
) -> tuple[list[Cassette], list[tuple[str, str]]]:
    """The cassettes in answer order, and for each the path found and the folder served
    ("" for a file given): a session folder (`turn-NN.jsonl`) turn by turn, any other
    folder every `*.jsonl` below it, sorted, so that its subfolders can be named too;
    cassettes of another provider below it are left out (one line in `left_out`), and a
    folder of theirs alone is refused as one of them is.

    Symlinks are resolved now, once: a cassette reached through a link is read at its
    real path, and one whose real path lies outside the real path of its folder is left
    out, the reason added to `left_out`.
    """
    found: list[tuple[str, str, str]] = []  # as found, its folder, where it is read
    for path in paths:
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
        if not session:
            inside = _anthropic_ones(inside, path, left_out)
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


def _dumps(value: Any) -> str:
    """JSON text of the captured requests: a body at the nesting limit is two levels
    deeper once listed, past orjson's encoder; the standard library takes those."""
    try:
        return orjson.dumps(value).decode()
    except orjson.JSONEncodeError:
        return json.dumps(value)


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
            self.cassettes, match_on=match_on, chunking=chunking, realtime=realtime
        )
        self.log = log
        self.max_body = max_body
        self.host = host
        #: The longest a `stall` line may last; past it, the connection is closed there.
        self.stall_ms = stall_ms
        self._played: set[int] = set()
        self._in_order = 0
        self._count = 0

    def app(self) -> web.Application:
        app = harness_app(self.log, max_body=self.max_body, host=self.host)
        app.router.add_post(MESSAGES_PATH, self.messages)
        app.router.add_get("/_harness/requests", self.requests)
        app.router.add_post("/_harness/reset", self.reset)
        return app

    def _name(self, cassette: Cassette) -> str:
        # a file served twice is two cassettes, the names the first one's
        return self._first_names.get(id(cassette)) or os.path.basename(cassette.path)

    def _matching(self, sent: CapturedRequest) -> int | None:
        """The first cassette not yet played whose recorded request matches `sent`."""
        if self.replayer.match_on is None:
            return None
        for number, cassette in enumerate(self.cassettes):
            recorded = (cassette.header or {}).get("request")
            if number in self._played or not isinstance(recorded, dict):
                continue
            if self.replayer.matches(cassette, sent):
                return number
        return None

    def _plan(self, request: web.Request, parsed: dict[str, Any]) -> tuple[PlannedResponse, str]:
        """The planned answer and which cassette gives it, by the selection order."""
        named = request.headers.get(CASSETTE_HEADER)
        chosen = None
        if named is not None:
            key = os.path.normpath(named.strip())
            chosen = self.names.get(key) or self._next_turn(key)
            if chosen is None:
                raise LookupError(f"no cassette named {named!r} is served")
        headers = dict(request.headers)
        sent = self.replayer.capture_parsed(request.method, request.path, headers, parsed)
        if chosen is not None:
            return self.replayer.answer_with(chosen, sent), self._name(chosen)
        number = self._matching(sent)
        if number is not None:
            self._played.add(number)
            cassette = self.cassettes[number]
            return self.replayer.answer_with(cassette, sent), self._name(cassette)
        number = self._in_order
        if number < len(self.cassettes):  # else `respond_to` raises: the cassettes are used up
            self._in_order += 1
            self._played.add(number)
        return self.replayer.respond_to(sent), self._name(self.cassettes[number])

    def _next_turn(self, session: str) -> Cassette | None:
        """The next turn of a session folder named by the header (None: no such folder)."""
        turns = self.sessions.get(session)
        if turns is None:
            return None
        answered = self._turns_answered.get(session, 0)
        if answered == len(turns):
            raise ReplayError(f"session {session!r}: its {len(turns)} turns were all answered")
        self._turns_answered[session] = answered + 1
        return turns[answered]

    async def messages(self, request: web.Request) -> web.StreamResponse:
        """`POST /v1/messages`: one answer from the cassette the selection order picks."""
        self._count += 1
        where = f"#{self._count} POST {MESSAGES_PATH}"
        body = await request.read()
        try:
            parsed = orjson.loads(body)
        except orjson.JSONDecodeError as error:
            if "depth limit" in str(error):  # past orjson's reader: past ours too
                self.log(f"{where} -> 400 (the body nests deeper than {MAX_NESTING} levels)")
                return api_error(400, f"harness serve: {TOO_DEEP}")
            self.log(f"{where} -> 400 (the body is not JSON)")
            return api_error(400, f"harness serve: the request body is not JSON: {error}")
        if not isinstance(parsed, dict):
            self.log(f"{where} -> 400 (the body is not a JSON object)")
            return api_error(400, "harness serve: the request body must be a JSON object")
        if may_be_too_deep(body) and deeper_than_limit(parsed):
            self.log(f"{where} -> 400 (the body nests deeper than {MAX_NESTING} levels)")
            return api_error(400, f"harness serve: {TOO_DEEP}")
        try:
            planned, name = self._plan(request, parsed)
        except (LookupError, HarnessError) as error:  # no such name, used up, a mismatch
            self.log(f"{where} -> 404: {str(error).splitlines()[0]}")
            return await self._send(request, replay_error_response(ReplayError(str(error))))
        kind = "stream" if parsed.get("stream") is True else "json"
        self.log(f"{where} {kind} -> {planned.status} from {name}")
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
            self.log(f"{where}: the client left mid-answer")
            return response
        except HarnessError as error:  # a cassette line found bad mid-stream
            self.log(f"{where}: cut: {error}")
            _drop(request)
            return response
        await response.write_eof()
        return response

    async def requests(self, request: web.Request) -> web.Response:
        """`GET /_harness/requests`: the requests received, credentials removed."""
        return web.json_response(
            [_jsonable(captured) for captured in self.replayer.requests], dumps=_dumps
        )

    async def reset(self, request: web.Request) -> web.Response:
        """`POST /_harness/reset`: forget the requests, play from the first cassette again."""
        self.replayer.reset()
        self._played.clear()
        self._turns_answered.clear()
        self._in_order = 0
        self.log("reset: the next request gets the first answer again")
        return web.json_response({"reset": True})


def _drop(request: web.Request) -> None:
    """Close the connection before the body ends: the client sees a connection cut."""
    if request.transport is not None:
        request.transport.close()
