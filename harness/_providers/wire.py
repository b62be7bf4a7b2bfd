"""What a provider's wire decides, as one value each provider's `framing` module gives.

`Framing` says how an event line is sent as SSE bytes, what a `{"harness": "done"}` line
is sent as (Chat's `data: [DONE]`), the non-streaming answer the events fold into
(raising `APIErrorEvent` for an API error line, answered as that HTTP error, or
`ValueError` when they fold into none), the paths its requests are POSTed to, the
request fields replay compares by default, and, for a dialect whose streams resume,
how a resume request is told apart and which lines answer it, and the shape of the error
a server of ours answers its requests with. The plan
(`harness._replay.plan`), the `Replayer` and the cassette's `sse()` read a dialect
through `provider(name).framing` alone, never by spelling an event type.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = ["Framing", "Line"]


class Line(Protocol):
    """A cassette line as a framing reads it (`harness._cassette.codec.CassetteLine`)."""

    @property
    def kind(self) -> str: ...
    @property
    def data(self) -> dict[str, Any]: ...


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
