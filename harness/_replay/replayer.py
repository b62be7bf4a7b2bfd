"""Answer the requests of the code under test from cassettes, one response a request, in order.

A `Replayer` holds the cassettes of one test (a single cassette, several, or a session
folder's `turn-NN.jsonl`), captures every request it is sent (credentials removed), and
answers each with the next cassette's `PlannedResponse`. Transports (in-process or a
socket server) call `respond` and carry the plan out; they decide nothing themselves.

When a cassette's header holds the request it was recorded for, the request sent is
compared with it on the chosen fields (by default its provider's: Anthropic's `model`,
`messages`, `system`, `tools`; Chat's `model`, `messages`, `tools`; Responses' `model`,
`input`, `instructions`, `tools`; `match_on=None` turns matching off); a difference
raises `ReplayError` with a readable diff of each differing field, as vcrpy lists near
misses (a field over `DIFF_BYTES` of JSON is told to differ, not diffed). A request to
a path naming the model (Bedrock's ConverseStream) is kept with the model and `stream`
its path says put in its body, as a host's is (`Framing.paths`).
Running out of cassettes raises `ReplayError` too: a test fails with one line,
it never hangs. A request to a path not of the cassette's provider (a Responses request
answered by a Chat cassette, a Chat one by an Anthropic cassette) is a `ReplayError` as
well, one rule for every provider: its own endpoints, and a host's paths where its is
the dialect served (`check_endpoint`). A refused request (either) consumes nothing: the
cassette it was refused by answers the next request.

A request that resumes a stream (Responses' `GET /v1/responses/{id}?stream=true&
starting_after=N`) is answered from the cassette holding response `{id}` (the last one
answered first), with its events after sequence N, and leaves the order as it is.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, TypeVar, overload

import orjson

from harness._cassette.codec import (
    Cassette,
    CassetteLine,
    CassetteSource,
    DirectiveHandler,
    not_a_source,
    pass_over,
    read_cassette,
)
from harness._cassette.request import CapturedRequest, json_body
from harness._cassette.sessions import TURN_PATTERN, turn_files
from harness._exceptions import (
    CassetteError,
    HarnessError,
    InputError,
    ReplayError,
    RequestMismatchError,
)
from harness._hosts import HOSTS, hosted_at, served_at
from harness._json import VALUE_BYTES, held_bytes
from harness._providers import Provider, providers
from harness._providers.wire import Delimited, Framing
from harness._redact import redact
from harness._replay.plan import Chunking, PlannedResponse, plan_response

__all__ = [
    "DEFAULT_MATCH_ON",
    "CapturedRequest",
    "Log",
    "Replayer",
    "answered_as",
    "cassette_sources",
    "cassettes_from",
    "provider_at",
]

T = TypeVar("T")

DEFAULT_MATCH_ON: Final = ("model", "messages", "system", "tools")


def _field_names(match_on: object) -> tuple[str, ...]:
    """`match_on` as a tuple of request field names, or an `InputError` saying what it is."""
    if isinstance(match_on, str):
        raise InputError(f"match_on takes a sequence of field names, not the string {match_on!r}")
    if not isinstance(match_on, Iterable):
        raise InputError(f"match_on takes a sequence of field names, not {type(match_on).__name__}")
    names = tuple(match_on)
    for name in names:
        if not isinstance(name, str):
            raise InputError(f"match_on takes field names (strings), not {name!r}")
    return names


def cassette_sources(given: object) -> list[CassetteSource]:
    """`given` as a list of sources: one path or `Cassette`, or a sequence of them; any
    other value is an `InputError` naming its type."""
    if isinstance(given, str | os.PathLike | Cassette):
        return [given]
    if not isinstance(given, Iterable):
        raise InputError(
            f"cassettes are a path, a Cassette or a sequence of them, not {type(given).__name__}"
        )
    listed = list(given)
    for source in listed:
        if not isinstance(source, str | os.PathLike | Cassette):
            raise not_a_source(source)
    return listed


def cassettes_from(
    paths: CassetteSource | Sequence[CassetteSource],
    open_cassette: Callable[[CassetteSource], Cassette] = read_cassette,
) -> list[Cassette]:
    """Cassettes in answer order: each file as given (a `Cassette` as it is; one source
    alone is a sequence of one); a folder, its `turn-NN.jsonl` by turn number, else every
    `*.jsonl` file in it by name (a folder so named is none). Each source is opened once,
    by `open_cassette`."""
    found: list[Cassette] = []
    for source in cassette_sources(paths):
        if isinstance(source, Cassette) or not os.path.isdir(source):
            found.append(open_cassette(source))
            continue
        files = turn_files(source) or sorted(
            path for path in Path(source).glob("*.jsonl") if not path.is_dir()
        )
        if not files:
            raise ReplayError(f"{source}: no cassettes ({TURN_PATTERN} or *.jsonl) in the folder")
        found.extend(open_cassette(path) for path in files)
    return found


#: A field whose JSON (either side's) is longer than this is told to differ, not diffed:
#: a diff of megabytes is read by nobody, and takes seconds to make.
DIFF_BYTES: Final = 64 * 1024


def _json_length(value: Any) -> int:
    try:
        return len(orjson.dumps(value))
    except orjson.JSONEncodeError:  # an integer past 64 bits, say: the diff says it
        return 0


def _field_diff(name: str, recorded: Any, sent: Any) -> str:
    lengths = _json_length(recorded), _json_length(sent)
    if max(lengths) > DIFF_BYTES:
        return (
            f"{name} differs: {lengths[0]} bytes of JSON recorded, {lengths[1]} sent"
            " (too long to show the diff)"
        )

    def lines(value: Any) -> list[str]:
        return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False).splitlines()

    diff = difflib.unified_diff(
        lines(recorded), lines(sent), f"{name} (recorded)", f"{name} (sent)", lineterm="", n=2
    )
    return "\n".join(diff)


def mismatch(
    recorded: Mapping[str, Any], sent: Mapping[str, Any], fields: Sequence[str]
) -> str | None:
    """A readable diff of the `fields` whose values differ, or None when all agree."""
    diffs = [
        _field_diff(name, recorded.get(name), sent.get(name))
        for name in fields
        if recorded.get(name) != sent.get(name)
    ]
    return "\n".join(diffs) if diffs else None


class Log(Sequence[T]):
    """A read-only, live view of a list its owner alone appends to (and clears): what a
    `Replayer` has captured so far, for anyone to read and nobody else to change."""

    __slots__ = ("_items",)

    def __init__(self, items: list[T]) -> None:
        self._items = items

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> list[T]: ...

    def __getitem__(self, index: int | slice) -> T | list[T]:
        return self._items[index]

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return repr(self._items)


def _resume_request(method: str, path: str) -> tuple[Provider, str] | None:
    """The provider and response id of a request that resumes a stream, else None."""
    for found in providers():
        resume = found.framing.resume_target
        target = resume(method, path) if resume is not None else None
        if target is not None:
            return found, target
    return None


def _as_its_paths_say(path: str, body: Any) -> Any:
    """`body` with the model and `stream` a dialect's path carries put in it (its
    framing's `paths`: Bedrock's ConverseStream), as a host's request is kept."""
    for found in providers():
        paths = found.framing.paths
        if paths is not None and paths.read(path) is not None:
            return paths.request(path, body)
    return body


def provider_at(path: str) -> Provider | None:
    """The provider whose requests go to `path`, as `Replayer.check_endpoint` tells them
    (its own endpoints, or a host's paths where its dialect is served); None: nobody's."""
    for found in providers():
        if found.framing.at(path):
            return found
    hosted = hosted_at(path)
    return served_at(hosted.host.name) if hosted is not None else None


def _paths_of(dialect: Provider) -> str:
    """The paths a dialect's cassettes answer, as a refusal says them: its endpoints,
    then the hosts whose own paths are its (`served_at`)."""
    said = f"POST {', '.join(dialect.framing.endpoints)}"
    hosts = [name for name in HOSTS if served_at(name) == dialect]
    return f"{said} (and at the paths of {', '.join(hosts)})" if hosts else said


def answered_as(framing: Framing, request: CapturedRequest) -> Delimited | bool:
    """How a captured `request` of the dialect `framing` frames is answered: False (not
    streamed), True (SSE), or a `Delimited` stream. The framing says (`Framing.streamed`:
    Gemini's path and query), else the request as kept: its `stream`, which a path saying
    it put there (ConverseStream's, a host's: `Replayer.capture_parsed`)."""
    if framing.streamed is not None:
        return framing.streamed(request.path, request.query)
    return request.json.get("stream") is True


class Replayer:
    """Answers requests from `cassettes`, one response a request, in order; thread-safe.

    Everything about one request is passed with it; the replayer's own state is the
    answer order and what it captured (`requests`, `errors`: read-only views).
    """

    def __init__(
        self,
        cassettes: Sequence[CassetteSource],
        *,
        match_on: Sequence[str] | None = DEFAULT_MATCH_ON,
        chunking: Chunking = Chunking(),
        realtime: bool = False,
        on_directive: DirectiveHandler = pass_over,
        keep_requests: int | None = None,
        keep_request_bytes: int | None = None,
    ) -> None:
        self.cassettes = cassettes_from(cassettes)
        #: `requests` keeps at most this many of the latest requests (None: all)...
        self.keep_requests = keep_requests
        #: ...and drops the oldest while they hold more bytes than this, headers and body as
        #: kept in memory (`keep`; None: no bound; the latest request is always kept)
        self.keep_request_bytes = keep_request_bytes
        self._sizes: list[int] = []
        self._kept_bytes = 0
        self._captured = 0
        self.match_on = None if match_on is None else _field_names(match_on)
        if not isinstance(chunking, Chunking):
            raise InputError(
                f"chunking takes a Chunking(size=..., seed=...), not {type(chunking).__name__}"
            )
        self.chunking = chunking
        self.realtime = realtime
        #: called with each directive line of every answer as it is planned
        self.on_directive = on_directive
        self._requests: list[CapturedRequest] = []
        self._errors: list[HarnessError] = []
        self._next = 0
        self._lock = threading.Lock()

    @property
    def requests(self) -> Log[CapturedRequest]:
        """Every request captured, in order (a live, read-only view); only the latest
        ones, within `keep_requests` and `keep_request_bytes`, when those are set."""
        return Log(self._requests)

    @property
    def captured(self) -> int:
        """How many requests were captured since the start (or the last `reset`), those
        `requests` no longer keeps included."""
        return self._captured

    @property
    def errors(self) -> Log[HarnessError]:
        """Every error a request was answered with (`ReplayError`, `CassetteError`), in order."""
        return Log(self._errors)

    def reset(self) -> None:
        """Start over: the first cassette answers next, and the captured requests are dropped."""
        with self._lock:
            self._next = 0
            self._requests.clear()
            self._sizes.clear()
            self._kept_bytes = 0
            self._captured = 0
            self._errors.clear()

    def capture(
        self,
        method: str,
        path: str,
        headers: Mapping[str, str],
        body: bytes,
        query: Mapping[str, str] | None = None,
    ) -> CapturedRequest:
        """Record a request as sent (redacted) and return it."""
        parsed = json_body(body)
        return self.capture_parsed(method, path, headers, parsed, held_bytes(body), query)

    def capture_parsed(
        self,
        method: str,
        path: str,
        headers: Mapping[str, str],
        body: Any,
        size: int = 0,
        query: Mapping[str, str] | None = None,
    ) -> CapturedRequest:
        """`capture` for a body its caller has parsed already (None: not JSON), holding
        about `size` bytes parsed (`harness._json.held_bytes`): `request_of`, then `keep`."""
        request = self.request_of(method, path, headers, body, query)
        self.keep(request, size)
        return request

    def request_of(
        self,
        method: str,
        path: str,
        headers: Mapping[str, str],
        body: Any,
        query: Mapping[str, str] | None = None,
    ) -> CapturedRequest:
        """A request as it is captured, not yet kept: for a caller that makes it off its
        event loop (redacting a large body takes a while), then `keep`s it. A request to a
        host's path (Bedrock's, Vertex's) is made as the direct API would have it: the
        model and `stream` its path carries put back in the body
        (`harness._hosts.Hosted.direct_request`), so it is matched and answered as any
        other."""
        hosted = hosted_at(path)
        body = hosted.direct_request(body) if hosted is not None else _as_its_paths_say(path, body)
        return CapturedRequest.of(method, path, headers, body, query)

    def keep(self, request: CapturedRequest, size: int = 0) -> None:
        """Keep a request made by `request_of`, its body holding about `size` bytes,
        counted with its headers (each about `VALUE_BYTES` more than its text) against
        `keep_request_bytes`."""
        headers = request.headers.items()
        size += sum(len(name) + len(value) + VALUE_BYTES for name, value in headers)
        with self._lock:
            self._requests.append(request)
            self._sizes.append(size)
            self._kept_bytes += size
            self._captured += 1
            self._drop_oldest()

    def _drop_oldest(self) -> None:
        """Drop the oldest requests kept past `keep_requests` or `keep_request_bytes`."""
        count, size = self.keep_requests, self.keep_request_bytes
        dropped = 0
        while len(self._requests) - dropped > 1 and (
            (count is not None and len(self._requests) - dropped > count)
            or (size is not None and self._kept_bytes > size)
        ):
            self._kept_bytes -= self._sizes[dropped]
            dropped += 1
        if dropped:
            del self._requests[:dropped], self._sizes[:dropped]

    def respond(
        self,
        method: str,
        path: str,
        headers: Mapping[str, str],
        body: bytes,
        query: Mapping[str, str] | None = None,
    ) -> PlannedResponse:
        """Capture the request and answer it from the next cassette in order (a resume
        request, told by its method and path, with `query`'s cursor: see the module).

        Raises `ReplayError` when the cassettes are used up or the request does not
        match, `CassetteError` for a cassette found unusable; the error is also kept in
        `errors`, for a test to fail on even when the code under test swallowed what its
        client raised.
        """
        request = self.capture(method, path, headers, body, query)
        resumed = _resume_request(method, path)
        if resumed is not None:
            with self._keeping_errors():
                return self._resume(*resumed, query or {})
        return self.respond_to(request)

    def _resume(self, found: Provider, target: str, query: Mapping[str, str]) -> PlannedResponse:
        """The answer to a resume request for response `target` of provider `found`."""
        with self._lock:
            answered = self.cassettes[: self._next]
        return self.resume_from(found, target, query, answered)

    def resume_from(
        self,
        found: Provider,
        target: str,
        query: Mapping[str, str],
        answered: Sequence[Cassette],
    ) -> PlannedResponse:
        """The answer to a resume request for response `target` of provider `found`, from
        the last of the cassettes `answered` so far holding it, else the first other one."""
        framing = found.framing
        seen = {id(cassette) for cassette in answered}
        others = [cassette for cassette in self.cassettes if id(cassette) not in seen]
        for cassette in [*reversed(answered), *others]:
            if cassette.dialect is not found or framing.response_id is None:
                continue
            if framing.response_id(cassette.events()) == target:
                break
        else:
            raise ReplayError(f"a request resumes response {target!r}, which no cassette holds")
        after = query.get("starting_after", "-1")
        try:
            cursor = int(after)
        except ValueError:
            raise ReplayError(f"starting_after={after!r} is not a sequence number") from None
        assert framing.resumed_lines is not None
        resumed = ResumedCassette(cassette, list(framing.resumed_lines(cassette.lines(), cursor)))
        return plan_response(
            resumed,
            stream=query.get("stream") == "true",
            chunking=self.chunking,
            on_directive=self.on_directive,
            realtime=self.realtime,
        )

    def respond_to(self, request: CapturedRequest) -> PlannedResponse:
        """Answer a captured `request` from the next cassette in order (see `respond`).

        A request that cassette refuses (a path its provider does not answer, a request
        that does not match) leaves it next: the refusal consumes nothing, so a call the
        cassettes do not hold (`models.list()`, a retry after a mismatch) does not shift
        every answer after it."""
        with self._lock:
            number = self._captured
            cassette = self.cassettes[self._next] if self._next < len(self.cassettes) else None
            accepted = cassette is not None and self.accepts(cassette, request)
            self._next += accepted
        with self._keeping_errors():
            if cassette is None:
                held = len(self.cassettes)
                raise ReplayError(
                    f"request {number}, but the cassettes hold {held} "
                    f"response{'s' if held != 1 else ''}"
                )
            if accepted:
                return self._planned(cassette, request)
            return self.answer(cassette, request, number)  # raises the refusal

    def answer_with(self, cassette: Cassette, request: CapturedRequest) -> PlannedResponse:
        """Answer a captured `request` from `cassette`, leaving the order as it is."""
        with self._keeping_errors():
            return self.answer(cassette, request, self._captured)

    @contextlib.contextmanager
    def _keeping_errors(self) -> Iterator[None]:
        try:
            yield
        except (ReplayError, CassetteError) as error:
            with self._lock:
                self._errors.append(error)
            raise

    def answer(
        self, cassette: Cassette, request: CapturedRequest, number: int | None = None
    ) -> PlannedResponse:
        """`cassette`'s answer to an already captured `request`, after the match check."""
        self.check_endpoint(cassette, request, number)
        self.check_match(cassette, request, number)
        return self._planned(cassette, request)

    def _planned(self, cassette: Cassette, request: CapturedRequest) -> PlannedResponse:
        """`cassette`'s answer to `request`, which it accepts (`accepts`)."""
        hosted = hosted_at(request.path)
        framed = answered_as(cassette.dialect.framing, request)
        return plan_response(
            cassette,
            stream=framed is not False,
            chunking=self.chunking,
            on_directive=self.on_directive,
            realtime=self.realtime,
            host=hosted.host if hosted is not None else None,
            delimited=framed if isinstance(framed, Delimited) else None,
        )

    def fields(self, cassette: Cassette) -> tuple[str, ...] | None:
        """The request fields `cassette`'s request is compared on: `match_on`, the
        default standing for the cassette's provider's own (None: no matching)."""
        if self.match_on == DEFAULT_MATCH_ON:
            return cassette.dialect.framing.match_on
        return self.match_on

    def check_endpoint(
        self, cassette: Cassette, request: CapturedRequest, number: int | None = None
    ) -> None:
        """Raise `ReplayError` when `request` went to a path `cassette`'s provider does not
        answer (a Responses request met by a Chat cassette, a Messages one by a Gemini
        cassette). One rule for every provider: its own endpoints (`Framing.at`, under any
        base URL's path), or a host's paths where its dialect is the one served there
        (`harness._hosts.served_at`: Messages at Bedrock's invoke path)."""
        if self.at_endpoint(cassette, request):
            return
        dialect = cassette.dialect
        which = f"request {number}" if number is not None else "the request"
        raise ReplayError(
            f"{which} is {request.method} {request.path}, but {cassette.path} is a cassette "
            f"of {cassette.provider}, which answers {_paths_of(dialect)}"
        )

    def accepts(self, cassette: Cassette, request: CapturedRequest) -> bool:
        """Whether `cassette` answers `request`: at a path of its provider, and matching
        its recorded request; False where `check_endpoint` or `check_match` would raise."""
        return self.at_endpoint(cassette, request) and self.matches(cassette, request)

    @staticmethod
    def at_endpoint(cassette: Cassette, request: CapturedRequest) -> bool:
        """Whether `request` went to a path `cassette`'s provider answers (`check_endpoint`)."""
        dialect = cassette.dialect
        if dialect.framing.at(request.path):
            return True
        hosted = hosted_at(request.path)
        # equal, not the same: a cassette kept across a registry reset holds an older one
        return hosted is not None and served_at(hosted.host.name) == dialect

    def matches(self, cassette: Cassette, request: CapturedRequest) -> bool:
        """Whether `request` agrees with the one `cassette` was recorded for (True if none)."""
        recorded = (cassette.header or {}).get("request")
        fields = self.fields(cassette)
        if fields is None or not isinstance(recorded, dict):
            return True
        kept, sent = redact(recorded), request.json
        return all(kept.get(name) == sent.get(name) for name in fields)  # no diff made

    def check_match(
        self, cassette: Cassette, request: CapturedRequest, number: int | None = None
    ) -> None:
        """Raise `ReplayError` with a diff when `request` differs from the recorded one."""
        recorded = (cassette.header or {}).get("request")
        fields = self.fields(cassette)
        if fields is None or not isinstance(recorded, dict):
            return
        diff = mismatch(redact(recorded), request.json, fields)
        if diff is not None:
            which = f"request {number}" if number is not None else "the request"
            raise RequestMismatchError(
                f"{which} does not match the one {cassette.path} was recorded for "
                f"(compared on {', '.join(fields)}):\n{diff}"
            )


class ResumedCassette(Cassette):
    """Some lines of a cassette, answered as a cassette of their own (a resumed stream)."""

    def __init__(self, cassette: Cassette, lines: list[CassetteLine]) -> None:
        self.path, self.header, self._once = cassette.path, cassette.header, None
        self._lines = lines
        self._source = cassette

    def lines(self) -> Iterator[CassetteLine]:
        return iter(self._lines)

    def sse(self, line: CassetteLine) -> bytes:
        return self._source.sse(line)
