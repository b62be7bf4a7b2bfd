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

`ClientEnv` is what the provider's SDK reads from the environment to be pointed at a
server (the variables, what follows the server's address in its base URL), part of its
`Sdk` (`harness._providers.sdk`): the lines `harness serve` and `harness proxy` start
with. `DirectBuilders` is what direct replay feeds the adapter in place of the SDK's
reading (a provider's `reading.direct_builders`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import unquote

if TYPE_CHECKING:
    from harness._providers.frame_rows import Framed

__all__ = ["ClientEnv", "DirectBuilders", "Framing", "Line", "ModelPaths"]


class Line(Protocol):
    """A cassette line as a framing reads it (`harness._cassette.codec.CassetteLine`)."""

    @property
    def kind(self) -> str: ...
    @property
    def data(self) -> dict[str, Any]: ...


@dataclass(frozen=True, slots=True)
class ClientEnv:
    """What a client of the provider's SDK reads from the environment: the variable of its
    base URL and of its key, and what follows a server's address in that base URL (the
    OpenAI SDKs' paths are below `/v1`, the Anthropic SDK's below the server itself)."""

    base_url_variable: str
    key_variable: str
    base_path: str = ""

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
        """(the model, whether it streams) of a request to `path`; None: neither path."""
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
class Framing:
    """What one provider's wire decides (module docstring)."""

    encode: Callable[[dict[str, Any]], bytes]
    answer: Callable[[Iterable[dict[str, Any]]], dict[str, Any]]
    match_on: tuple[str, ...]
    #: the paths its requests are POSTed to (`harness serve` answers them there; a
    #: request to another is not this provider's), under any base URL's path
    endpoints: tuple[str, ...] = ()
    #: whether a cassette client answers a request at any path all the same (Anthropic's,
    #: as before there were other providers: its clients' base URLs may hold any path)
    any_path: bool = False
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
