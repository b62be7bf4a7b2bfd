"""`harness conform --serve` for a provider other than Anthropic: its cases over HTTP.

A small aiohttp app on 127.0.0.1 answers the provider's endpoints (its
`provider(name).framing`: Chat's `POST /v1/chat/completions`, Responses' `POST
/v1/responses` and the resume `GET /v1/responses/{id}`) from the case an `x-harness-cassette` header
names: each `data` object framed as the API frames it, Chat's `{"harness": "done"}` as
`data: [DONE]`, and the wire directives acted on (an `http_error` answers with its
status and body, a `cut` drops the connection half-way through the next event, a
`stall` sleeps). A case of several responses (a session) answers them in turn.

The command reads the case's header line on its standard input (the request fields and
the policy its adapter needs: docs/conform.md), then asks `OPENAI_BASE_URL` itself. With
`--persistent` each worker has a `HARNESS_CASSETTE` of its own, pointed at each case in
turn, and reads the header line then the separator for each.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

import orjson
from aiohttp import web

from harness._directives import CUT, DONE, HTTP_ERROR, STALL
from harness._providers import provider
from harness._providers.wire import Framing, at_endpoint
from harness._testing.conform import (
    Case,
    Result,
    Verdict,
    _payload,
    judged_served,
)
from harness._testing.dialects import dialect

__all__ = ["CaseServer", "run_served"]

#: How many unanswered requests of a case are kept, to be shown.
_KEPT: Final = 3


def _answers(wire: Framing, method: str, path: str) -> bool:
    """Whether the dialect answers `method path`: a POST to one of its endpoints (under
    any base URL's path), or its resume request."""
    if method == "POST" and wire.endpoints and at_endpoint(wire.endpoints, path):
        return True
    return wire.resume_target is not None and wire.resume_target(method, path) is not None


class CaseServer:
    """The cases by name, each answered from its responses in turn."""

    def __init__(self, cases: Sequence[Case]) -> None:
        self.cases = {case.name: case for case in cases}
        self.aliases: dict[str, str] = {}
        self.turns: dict[str, int] = {}
        self.asked: dict[str, list[str]] = {}

    def point(self, alias: str, name: str) -> None:
        """A persistent worker's own name now names the case `name` (from its first turn)."""
        self.aliases[alias] = name
        self.turns.pop(name, None)

    def app(self) -> web.Application:
        from harness._http.hosting import harness_app

        app = harness_app(lambda line: None)
        app.router.add_route("*", "/{path:.*}", self.answer)
        return app

    def _unanswered(self, named: str, request: web.Request) -> web.Response:
        from harness._http.hosting import api_error

        path = f"{request.method} {request.path}"
        kept = self.asked.setdefault(named, [])
        if len(kept) < _KEPT:
            kept.append(path)
        return api_error(404, f"harness conform: no cassette answers {path}")

    async def answer(self, request: web.Request) -> web.StreamResponse:
        from harness._http.hosting import api_error
        from harness._http.server import CASSETTE_HEADER

        named = request.headers.get(CASSETTE_HEADER, "")
        name = self.aliases.get(named, named)
        case = self.cases.get(name)
        if case is None:
            return api_error(404, f"harness conform: no case named {named!r}")
        wire = provider(case.provider).framing
        if not _answers(wire, request.method, request.path):
            return self._unanswered(name, request)
        await request.read()
        turn = self.turns.get(name, 0)
        self.turns[name] = turn + 1
        lines = case.responses[min(turn, len(case.responses) - 1)]
        return await _send(request, lines, wire)

    def noted(self, name: str, got: Result) -> Result:
        """The result with the requests of the case that reached no endpoint."""
        asked = self.asked.pop(name, None)
        return dataclasses.replace(got, asked=tuple(asked)) if asked else got


def _frames(lines: Sequence[dict[str, Any]], wire: Framing) -> Iterator[Any]:
    """Each line as what the server does: bytes to write, a stall (seconds), or a cut."""
    for at, line in enumerate(lines):
        kind = line.get("harness") if "harness" in line else None
        if kind is None:
            yield wire.encode(line)
        elif kind == DONE and wire.done is not None:
            yield wire.done
        elif kind == STALL:
            yield float(line.get("ms", 0)) / 1000
        elif kind == CUT:
            following = [frame for frame in _frames(lines[at + 1 : at + 2], wire)]
            half = following[0] if following and isinstance(following[0], bytes) else b"data: {"
            yield half[: max(1, len(half) // 2)]
            yield CUT
            return


async def _send(
    request: web.Request, lines: Sequence[dict[str, Any]], wire: Framing
) -> web.StreamResponse:
    for line in lines:
        if line.get("harness") == HTTP_ERROR:
            body = orjson.dumps(line.get("body", {}))
            headers = {str(k): str(v) for k, v in line.get("headers", {}).items()}
            headers["content-type"] = "application/json"
            return web.Response(status=int(line["status"]), body=body, headers=headers)
    response = web.StreamResponse(
        status=200, headers={"content-type": "text/event-stream", "cache-control": "no-cache"}
    )
    await response.prepare(request)
    try:
        for piece in _frames(lines, wire):
            if isinstance(piece, bytes):
                await response.write(piece)
            elif isinstance(piece, float):
                await asyncio.sleep(piece)
            else:  # a cut: close the connection before the body ends
                if request.transport is not None:
                    request.transport.close()
                return response
        await response.write_eof()
    except ConnectionResetError:
        pass
    return response


def run_served(
    cases: Sequence[Case],
    command: Sequence[str],
    *,
    jobs: int,
    timeout: float,
    persistent: bool,
    environ: Mapping[str, str],
) -> Iterator[Verdict]:
    """Run the command on each case, the case served over HTTP, and judge it."""
    from harness._http.hosting import ServerThread
    from harness._replay.clients import DUMMY_API_KEY

    server = CaseServer(cases)
    spoken = dialect(cases[0].provider).client_env
    with ServerThread(server.app()) as url:
        # every variable the SDK reads its key from is the dummy: a real key set in the
        # environment (google-genai prefers GOOGLE_API_KEY) is never sent, even locally
        base = {
            **environ,
            spoken.base_url_variable: spoken.base_url(url),
            **dict.fromkeys(spoken.key_variables, DUMMY_API_KEY),
        }

        yield from judged_served(
            cases,
            command,
            base,
            jobs=jobs,
            timeout=timeout,
            persistent=persistent,
            point=server.point,
            noted=server.noted,
            payload=lambda case: _payload(case, events=False),
        )
