"""What a provider's wire decides, as one value each provider's `framing` module gives.

`Framing` says how an event line is sent as SSE bytes, what a `{"harness": "done"}` line
is sent as (Chat's `data: [DONE]`), the non-streaming answer the events fold into
(raising `APIErrorEvent` for an API error line, answered as that HTTP error, or
`ValueError` when they fold into none), the paths its requests are POSTed to, the
request fields replay compares by default, and, for a dialect whose streams resume,
how a resume request is told apart and which lines answer it, and the shape of the error
a server of ours answers its requests with. A dialect whose paths name the model and say
whether the answer streams (Bedrock's ConverseStream: `/model/{modelId}/converse-stream`
and `/model/{modelId}/converse`) says so with `ModelPaths`, and one whose streams are not
SSE gives its `content_type`, and, when they are event-stream frames, those (`frames`:
the binary fault rows are then its rows too). The plan (`harness._replay.plan`), the
`Replayer`, the cassette's `sse()` and `harness serve` read a dialect through
`provider(name).framing` alone, never by spelling an event type.

A path of `endpoints` may name parts of its own (`{model}`: Gemini's
`/{version}/models/{model}:streamGenerateContent`), as an aiohttp route does: `at_endpoint`
tells a request's path (under any base URL's path) for one. A dialect whose path, not its
body's `stream`, says whether a request streams, and whose query picks the stream's
framing, says so with `streamed`: SSE, or a `Delimited` body (Gemini's streamed JSON
array, `harness._providers.jsonarray`). Every path matched here (and by the hosts,
`harness._hosts`), and kept in a `CapturedRequest`, is in one form, `request_path`'s:
decoded segment by segment, so a model id holding a `/` (a Bedrock ARN, sent as `%2F`)
stays the one segment it was sent as.

`ClientEnv` is what the provider's SDK reads from the environment to be pointed at a
server (the variables, what follows the server's address in its base URL), part of its
`Sdk` (`harness._providers.sdk`): the lines `harness serve` and `harness proxy` start
with. `DirectBuilders` is what direct replay feeds the adapter in place of the SDK's
reading (a provider's `reading.direct_builders`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import unquote

if TYPE_CHECKING:
    from harness._providers.frame_rows import Framed

__all__ = [
    "ClientEnv",
    "Delimited",
    "DirectBuilders",
    "Framing",
    "Line",
    "ModelPaths",
    "at_endpoint",
    "request_path",
]
#: A part an endpoint names (`{model}`), as aiohttp reads one: any text but a slash.
_PART = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}")


@cache
def _endpoint_pattern(endpoint: str) -> re.Pattern[str]:
    """The regular expression a path ending in `endpoint` matches (its parts any text)."""
    pieces = _PART.split(endpoint)
    return re.compile("[^/]+".join(re.escape(piece) for piece in pieces) + r"\Z")


def at_endpoint(endpoints: Iterable[str], path: str) -> bool:
    """Whether `path` ends in one of `endpoints` (under any base URL's path)."""
    return any(_endpoint_pattern(endpoint).search(path) for endpoint in endpoints)


def request_path(raw: str | bytes) -> str:
    """A request's path as sent (percent-encoded, any query after it: an HTTP library's
    `raw_path`) in the form paths are matched and kept in: each segment decoded, a `/` or
    `%` in one left encoded (`%2F`, `%25`), as aiohttp's router reads it. Decoded whole, a
    model id sent as one segment (`.../application-inference-profile%2Fa1b2/invoke`)
    would be two, and no path naming a model (`[^/]+`) would match it."""
    text = raw.decode("ascii", "replace") if isinstance(raw, bytes) else raw
    segments = text.partition("?")[0].split("/")
    return "/".join(unquote(part).replace("%", "%25").replace("/", "%2F") for part in segments)


class Line(Protocol):
    """A cassette line as a framing reads it (`harness._cassette.codec.CassetteLine`)."""

    @property
    def kind(self) -> str: ...
    @property
    def data(self) -> dict[str, Any]: ...


@dataclass(frozen=True, slots=True)
class ClientEnv:
    """What a client of the provider's SDK reads from the environment: the variable of its
    base URL and of its key (and any it prefers to that one), and what follows a
    server's address in that base URL (the OpenAI SDKs' paths are below `/v1`, the
    Anthropic SDK's below the server itself)."""

    base_url_variable: str
    key_variable: str
    base_path: str = ""
    #: variables the client reads its key from before `key_variable`, the first set
    #: winning (google-genai reads `GOOGLE_API_KEY`, then `GEMINI_API_KEY`)
    preferred_key_variables: tuple[str, ...] = ()

    @property
    def key_variables(self) -> tuple[str, ...]:
        """Every variable the client reads its key from, in the order it prefers them."""
        return (*self.preferred_key_variables, self.key_variable)

    @property
    def key_names(self) -> str:
        """How a message names them: `OPENAI_API_KEY`, `GEMINI_API_KEY or GOOGLE_API_KEY`."""
        return " or ".join((self.key_variable, *self.preferred_key_variables))

    def base_url(self, server: str) -> str:
        """The base URL pointing this SDK at `server` (`http://HOST:PORT`)."""
        return server + self.base_path

    def assignment(self, server: str) -> str:
        """`VARIABLE=URL`: the variable set to `base_url(server)`."""
        return f"{self.base_url_variable}={self.base_url(server)}"


@dataclass(frozen=True, slots=True)
class ModelPaths:
    """A dialect's two paths when they name the model and say whether the answer streams:
    each a regular expression with a `model` group (matched at a path's end, under any
    base URL's path), and the same as an aiohttp route (`{model}` the variable). A
    request to one is kept as if its body said so (`request`): the model and `stream`
    put in it, so matching on `model` and the choice of a stream work as for any other."""

    stream: re.Pattern[str]
    plain: re.Pattern[str]
    stream_route: str
    plain_route: str

    def read(self, path: str) -> tuple[str, bool] | None:
        """(the model, decoded, whether it streams) of a request to `path` (a `request_path`);
        None: neither path."""
        for pattern, streamed in ((self.stream, True), (self.plain, False)):
            match = pattern.search(path)
            if match is not None and match.end() == len(path):
                return unquote(match["model"]), streamed
        return None

    def request(self, path: str, body: Any) -> Any:
        """`body` as the path says it: its model and `stream` in it (a body that is no
        object, or a path of neither, as it is)."""
        read = self.read(path)
        if read is None or not isinstance(body, dict):
            return body
        model, streamed = read
        kept = {"model": model, **body}
        if streamed:
            kept["stream"] = True
        else:
            kept.pop("stream", None)
        return kept


@dataclass(frozen=True, slots=True)
class Delimited:
    """A stream sent as one body of delimited values, not as SSE: its content type, one
    value's bytes, what opens the body, stands between two values, and closes it (a
    body cut short has no closing)."""

    content_type: str
    encode: Callable[[dict[str, Any]], bytes]
    opening: bytes
    separator: bytes
    closing: bytes


@dataclass(frozen=True, slots=True)
class Framing:
    """What one provider's wire decides (module docstring)."""

    encode: Callable[[dict[str, Any]], bytes]
    answer: Callable[[Iterable[dict[str, Any]]], dict[str, Any]]
    match_on: tuple[str, ...]
    #: the paths its requests are POSTed to (`harness serve` answers them there; a
    #: request to another is not this provider's, but at the paths of a host whose
    #: dialect it is: `harness._hosts.served_at`), under any base URL's path
    endpoints: tuple[str, ...] = ()
    done: bytes | None = None
    #: (method, path) -> the id of the response a request resumes, or None
    resume_target: Callable[[str, str], str | None] | None = None
    #: the id of the response a cassette's events are of
    response_id: Callable[[Iterable[dict[str, Any]]], str | None] | None = None
    #: (lines, after) -> the lines a stream resumed after sequence `after` answers with
    resumed_lines: Callable[[Iterable[Any], int], Iterator[Any]] | None = None
    #: (status, message) -> the error JSON a server of ours refuses this API's request
    #: with, in the API's own shape; None: Anthropic's (`harness._http.hosting`)
    error_answer: Callable[[int, str], dict[str, Any]] | None = None
    #: a cassette's event lines (each with `.number` and `.data`) -> `(line, reason)`
    #: for each place they hold what the live API would not send, legal for the schema;
    #: None: nothing to warn of (`harness validate` prints these as warnings)
    unlike_the_api: Callable[[Iterable[Any]], Iterator[tuple[int, str]]] | None = None
    #: a dialect whose own wire is AWS event-stream frames: its frames (one event's, and a
    #: reader of them), which the binary fault rows break (`frame_rows`); None: SSE
    frames: Framed | None = None
    #: a streamed answer's content type; None: SSE (`text/event-stream`)
    content_type: str | None = None
    #: paths naming the model and whether it streams (its `endpoints` are their routes);
    #: None: the model and `stream` are in the body
    paths: ModelPaths | None = None
    #: (path, query) -> how a request there is answered: False (not streamed), True
    #: (SSE), or a `Delimited` stream; None: the body's `"stream": true` says, SSE
    streamed: Callable[[str, Mapping[str, str]], Delimited | bool] | None = None

    def at(self, path: str) -> bool:
        """Whether a request to `path` is at one of its endpoints (under any base URL's
        path), or at one of the paths naming the model (`paths`)."""
        return at_endpoint(self.endpoints, path) or (
            self.paths is not None and self.paths.read(path) is not None
        )


@dataclass(frozen=True, slots=True)
class DirectBuilders:
    """What direct replay (no client, no socket) feeds a provider's adapter in place of
    what its SDK would hand it (its `reading.direct_builders(sdk_objects)`)."""

    #: an event line's data -> what the adapter is fed (None: nothing, as the SDK skips
    #: it); raises what the SDK would raise for it (an API error event)
    event: Callable[[dict[str, Any]], Any]
    #: (body, status=None, headers=None) -> the error an `http_error` line (or an API
    #: error event) raises, as the SDK's reader would raise it
    api_error: Callable[..., Exception]
    #: what a `{"harness": "done"}` line is fed as (Chat's `[DONE]`), where it has one
    done: Any = None
