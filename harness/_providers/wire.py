"""What a provider's wire decides, as one value each provider's `framing` module gives.

`Framing` says how an event line is sent as SSE bytes, what a `{"harness": "done"}` line
is sent as (Chat's `data: [DONE]`), the non-streaming answer the events fold into
(raising `APIErrorEvent` for an API error line, answered as that HTTP error, or
`ValueError` when they fold into none), the paths its requests are POSTed to, the
request fields replay compares by default, and, for a dialect whose streams resume,
how a resume request is told apart and which lines answer it, and the shape of the error
a server of ours answers its requests with, and how the provider's SDK is pointed at a
server (`ClientEnv`: the variables it reads, what follows the server's address in its
base URL). The plan (`harness._replay.plan`), the `Replayer`, the cassette's `sse()` and
the lines `harness serve` and `harness proxy` start with read a dialect through
`provider(name).framing` alone, never by spelling an event type or a variable.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = ["ClientEnv", "Framing", "Line"]


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
class Framing:
    """What one provider's wire decides (module docstring)."""

    encode: Callable[[dict[str, Any]], bytes]
    answer: Callable[[Iterable[dict[str, Any]]], dict[str, Any]]
    match_on: tuple[str, ...]
    #: the paths its requests are POSTed to; empty: any path is answered
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
    #: how its SDK's client is pointed at a server of ours (`harness serve`, `proxy`)
    client_env: ClientEnv = field(kw_only=True)
