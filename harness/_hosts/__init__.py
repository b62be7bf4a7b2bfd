"""Hosts: where a dialect is served, and how its events travel there.

A provider (`harness._providers`) is a wire dialect: what its events mean. A host is
where those events are served, and it decides the framing they travel in:
- `bedrock`: Amazon Bedrock's `InvokeModelWithResponseStream`, each of the dialect's
  events the base64 `bytes` of a `chunk` event in AWS event-stream frames
  (`harness._providers.eventstream`);
- `vertex`: Google Vertex's `streamRawPredict`, server-sent events as the direct API
  sends them.
The direct API is no module: it is the dialect's own framing (`Framing`).

A cassette's lines stay its dialect's events wherever they were recorded, so one
cassette replays on any host its dialect is served on. Which dialects a host serves is
the provider's to say (its `client` module's `HOSTED`: host name -> the `Sdk` its
events are read with there, `Provider.hosted`); nothing here names a provider.

`Host` (here) is what the replayer and `harness serve` ask of one: its two paths (the
streamed call and the plain one, each naming the model), the aiohttp routes serving
them, the content type and the frame of one event (None: the dialect's SSE), the guard's reading
of a stream there (Bedrock's `FramedReader`), and how a
request to it reads as the direct API's (`direct_request`: the model and `stream` a
host carries in its path put back in the body, so matching and planning read it as
they read any other), and, for a host whose streams travel in event-stream frames, the
frames (`frames`, a `Framed`: one event's frame, and a new decoder of frames back into
events) that the binary fault rows break and a recording reads. `hosted_at(path)` finds
the host a request's path is for, `served_at(name)` the provider whose dialect its paths
answer in (the first in the registry's order served there: `harness serve` routes them
to it, and a cassette of another answers none of them); `framed_as(content_type)` the
host whose framing an answer's content type names; `framed(framing, host)` the frames a
dialect's stream travels in there (the host's, else the dialect's own:
`Framing.frames`), None for SSE; `error_answer_at(path, found)` the error shape a host's
clients read at its paths (Bedrock's `{"message", "__type"}` at any `/model/{id}/...`,
read by boto3 and the Anthropic SDK alike), else the provider's, for the harness's own
refusals there.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import unquote

from harness._hosts import bedrock, vertex
from harness._providers import Provider, providers, registry_cache
from harness._providers.answers import AnswerReader
from harness._providers.frame_rows import Framed
from harness._providers.wire import Framing

__all__ = [
    "HOSTS",
    "Host",
    "Hosted",
    "error_answer_at",
    "framed",
    "framed_as",
    "host",
    "hosted_at",
    "served_at",
]


@dataclass(frozen=True, slots=True)
class Host:
    """One host a dialect is served on (module docstring)."""

    #: its name, as a cassette's header and `cassette_client(host=...)` give it
    name: str
    #: the streamed call's path and the plain one's, each with a `model` group
    stream_path: re.Pattern[str]
    plain_path: re.Pattern[str]
    #: the same two as aiohttp routes (`{model}` and any other part a variable)
    stream_route: str
    plain_route: str
    #: a streamed answer's content type, and one event's bytes (None: the dialect's SSE)
    content_type: str | None = None
    encode: Callable[[dict[str, Any]], bytes] | None = None
    #: the guard's reading of a stream there, made of the dialect's (None: its own)
    reader: Callable[[AnswerReader], AnswerReader] | None = None
    #: its event-stream frames, for the binary fault rows (None: its streams are SSE)
    frames: Framed | None = None
    #: the streamed call an export writes (`{model}` the model, quoted): a region's
    #: endpoint, placeholders where the recorded call named a project
    export_url: str = ""
    #: the paths whose error answers its clients read in a shape of the host's own, and
    #: that shape (status, message -> JSON); None: the served dialect's shape is read
    error_area: re.Pattern[str] | None = None
    error_answer: Callable[[int, str], dict[str, Any]] | None = None


@dataclass(frozen=True, slots=True)
class Hosted:
    """A request's path read as a host's call: the host, the model, streamed or not."""

    host: Host
    model: str
    stream: bool

    def direct_request(self, body: Any) -> Any:
        """The body as the direct API would have it: the path's model and `stream` in it."""
        if not isinstance(body, dict):
            return body
        direct = dict(body)
        direct.setdefault("model", self.model)
        if self.stream:
            direct["stream"] = True
        else:
            direct.pop("stream", None)
        return direct


_VERTEX_MODEL: Final = (
    "/v1/projects/{project}/locations/{region}/publishers/{publisher}/models/{model:[^/:]+}"
)
HOSTS: Final[Mapping[str, Host]] = {
    "bedrock": Host(
        "bedrock",
        bedrock.STREAM_PATH,
        bedrock.PLAIN_PATH,
        "/model/{model}/invoke-with-response-stream",
        "/model/{model}/invoke",
        bedrock.CONTENT_TYPE,
        bedrock.encode_event,
        bedrock.FramedReader,
        Framed(bedrock.encode_event, bedrock.EventDecoder),
        "https://bedrock-runtime.us-east-1.amazonaws.com/model/{model}/invoke-with-response-stream",
        bedrock.ERROR_AREA,
        bedrock.error_answer,
    ),
    "vertex": Host(
        "vertex",
        vertex.STREAM_PATH,
        vertex.PLAIN_PATH,
        f"{_VERTEX_MODEL}:streamRawPredict",
        f"{_VERTEX_MODEL}:rawPredict",
        export_url="https://us-east5-aiplatform.googleapis.com/v1/projects/a-project/locations"
        "/us-east5/publishers/anthropic/models/{model}:streamRawPredict",
    ),
}


def host(name: str) -> Host:
    """The host `name`; `KeyError` naming the known ones for another."""
    try:
        return HOSTS[name]
    except KeyError:
        raise KeyError(f"no host {name!r}: the hosts are {', '.join(HOSTS)}") from None


def framed(framing: Framing, host_name: str | None) -> Framed | None:
    """The frames a dialect (its `framing`) travels in on the host `host_name` (None, or
    one no host has: the direct API), else in its own wire; None: SSE."""
    found = HOSTS.get(host_name) if host_name is not None else None
    return found.frames if found is not None else framing.frames


def hosted_at(path: str) -> Hosted | None:
    """The host call a request to `path` (a `request_path`: an ARN's `/` still `%2F`) is,
    under any base URL's path, else None; its model decoded."""
    for found in HOSTS.values():
        for pattern, stream in ((found.stream_path, True), (found.plain_path, False)):
            match = pattern.search(path)
            if match is not None and match.end() == len(path):
                return Hosted(found, unquote(match["model"]), stream)
    return None


def error_answer_at(
    path: str, found: Provider | None = None
) -> Callable[[int, str], dict[str, Any]] | None:
    """The error shape a client reads at `path`: the host's whose `error_area` it is in
    (Bedrock's at any `/model/{id}/...`, which boto3 and the Anthropic SDK both read),
    else that of `found`, the provider the request is for (its framing's
    `error_answer`); None: the caller's own."""
    for hosting in HOSTS.values():
        area = hosting.error_area
        if area is not None and hosting.error_answer is not None:
            match = area.search(path)
            if match is not None and match.end() == len(path):
                return hosting.error_answer
    return found.framing.error_answer if found is not None else None


@registry_cache
def served_at(name: str) -> Provider | None:
    """The provider whose dialect the host `name`'s own paths (`stream_path`, `plain_path`)
    answer in: the first in the registry's order served there (`Provider.hosted`), None
    for none. (A dialect served on the host at paths of its own, Gemini's on Vertex, is
    at those: its `endpoints`.)"""
    return next((found for found in providers() if name in found.hosted), None)


def framed_as(content_type: str) -> Host | None:
    """The host whose own framing an answer of `content_type` is in (Bedrock's
    event-stream frames), else None (SSE or JSON, read as the direct API's)."""
    kind = content_type.partition(";")[0].strip().lower()
    for found in HOSTS.values():
        if found.frames is not None and kind == found.content_type:
            return found
    return None
