"""Which provider a path `harness serve` answers belongs to, and the error JSON its clients read.

A loop over the provider registry, spelling no provider: each provider's POST endpoints
(`framing.endpoints`: Messages' `/v1/messages`, Chat's `/v1/chat/completions`, ...), the
resume GET of a dialect whose streams resume (`{endpoint}/{id}`, Responses'), and the
shape of an error answer, by provider (its framing's `error_answer`: OpenAI's
`{"error": {"message", "type", "param", "code"}}`); the harness's own shape,
`{"type": "error", "error": {"type", "message"}}` (Anthropic's), for a provider that has
none, and for a path of no provider (`/v1/models`), as before OpenAI was served. The
routes map a path to its `Provider`, resolved here once: the server passes that object
on with each request, never its name. A host's paths (`harness._hosts`: Bedrock's
`/model/{model}/invoke-with-response-stream`, Vertex's `...:streamRawPredict`) are
routed to the first provider in the registry that says it is served there
(`harness._hosts.served_at`), whose cassettes alone answer them. A dialect whose paths
name the model (`Framing.paths`: Bedrock's ConverseStream) gives its endpoints as
routes, and a path is its when they match.
"""

from __future__ import annotations

from typing import Any

from harness._hosts import HOSTS, error_answer_at, hosted_at, served_at
from harness._providers import Provider, providers, registry_cache
from harness._providers.wire import at_endpoint

__all__ = ["error_json", "host_routes", "post_routes", "provider_of_path", "resume_routes"]


@registry_cache
def post_routes() -> dict[str, Provider]:
    """Each path answered by POST -> the provider whose cassettes answer it (the first
    in the registry's order to name it)."""
    routes: dict[str, Provider] = {}
    for found in providers():
        for endpoint in found.framing.endpoints:
            routes.setdefault(endpoint, found)
    return routes


@registry_cache
def host_routes() -> dict[str, Provider]:
    """Each aiohttp route of a host's calls, streamed and plain -> the provider whose
    cassettes answer it there (the first in the registry's order served on that host:
    `served_at`)."""
    routes: dict[str, Provider] = {}
    for name, host in HOSTS.items():
        found = served_at(name)
        if found is not None:
            routes[host.stream_route] = routes[host.plain_route] = found
    return routes


def _patterned(path: str) -> Provider | None:
    """The provider one of whose endpoints naming parts (`{model}`) `path` is at."""
    routes = post_routes()
    return next((routes[end] for end in routes if "{" in end and at_endpoint([end], path)), None)


def _hosted_provider(path: str) -> Provider | None:
    """The provider a request to a host's path is for (None: no host's, or none served)."""
    hosted = hosted_at(path)
    return served_at(hosted.host.name) if hosted is not None else None


@registry_cache
def resume_routes() -> dict[str, Provider]:
    """Each resume GET route (an aiohttp pattern, `{id}` the response resumed) -> provider."""
    return {
        f"{endpoint}/{{id}}": found
        for endpoint, found in post_routes().items()
        if found.framing.resume_target is not None
    }


def provider_of_path(method: str, path: str) -> Provider | None:
    """The provider a request to `path` is for (None: no provider's)."""
    found = post_routes().get(path) or _patterned(path) or _hosted_provider(path)
    if found is not None:
        return found
    for found in providers():
        paths = found.framing.paths
        if paths is not None and paths.read(path) is not None:
            return found
    for found in providers():
        resume = found.framing.resume_target
        if resume is not None and resume(method, path) is not None:
            return found
    return None


def _harness_error(status: int, message: str) -> dict[str, Any]:
    from harness._http.hosting import ERROR_TYPE_OF_STATUS

    kind = ERROR_TYPE_OF_STATUS.get(status, "api_error")
    return {"type": "error", "error": {"type": kind, "message": message}}


def error_json(found: Provider | None, status: int, message: str, path: str = "") -> dict[str, Any]:
    """The error answer a client of provider `found` reads at `path`: the shape of the
    host whose paths it is at (Bedrock's, which boto3 reads as the Anthropic SDK does:
    `error_answer_at`), else `found`'s framing's `error_answer`; the harness's own shape
    when it has none, or for a path of no provider."""
    answer = error_answer_at(path, found)
    return answer(status, message) if answer is not None else _harness_error(status, message)
