"""Which provider a path `harness serve` answers belongs to, and the error JSON its clients read.

The one place the server looks a dialect up, through the provider registry: each
provider's POST endpoints (`provider(name).framing.endpoints`; Anthropic's framing
answers any path, so the server gives it `/v1/messages`), the resume GET of a dialect
whose streams resume (`{endpoint}/{id}`, Responses'), and the shape of an error answer,
by provider (its framing's `error_answer`): OpenAI's `{"error": {"message", "type",
"param", "code"}}`; Anthropic's `{"type": "error", "error": {"type", "message"}}`, also
for a path of no provider (`/v1/models`), as before OpenAI was served.
"""

from __future__ import annotations

from functools import cache
from typing import Any, Final

from harness._providers import PACKAGES, provider

__all__ = ["MESSAGES_PATH", "error_json", "post_routes", "provider_of_path", "resume_routes"]

#: The path Anthropic's Messages requests are POSTed to.
MESSAGES_PATH: Final = "/v1/messages"
ANTHROPIC: Final = "anthropic"


@cache
def post_routes() -> dict[str, str]:
    """Each path answered by POST -> the provider whose cassettes answer it."""
    routes = {MESSAGES_PATH: ANTHROPIC}
    for name in PACKAGES:
        for endpoint in provider(name).framing.endpoints:
            routes.setdefault(endpoint, name)
    return routes


@cache
def resume_routes() -> dict[str, str]:
    """Each resume GET route (an aiohttp pattern, `{id}` the response resumed) -> provider."""
    return {
        f"{endpoint}/{{id}}": name
        for endpoint, name in post_routes().items()
        if provider(name).framing.resume_target is not None
    }


def provider_of_path(method: str, path: str) -> str | None:
    """The provider a request to `path` is for (None: no provider's)."""
    found = post_routes().get(path)
    if found is not None:
        return found
    for name in PACKAGES:
        resume = provider(name).framing.resume_target
        if resume is not None and resume(method, path) is not None:
            return name
    return None


def _anthropic_error(status: int, message: str) -> dict[str, Any]:
    from harness._http.hosting import ERROR_TYPE_OF_STATUS

    kind = ERROR_TYPE_OF_STATUS.get(status, "api_error")
    return {"type": "error", "error": {"type": kind, "message": message}}


def error_json(name: str | None, status: int, message: str) -> dict[str, Any]:
    """The error answer a client of provider `name` reads (its framing's `error_answer`;
    Anthropic's shape when it has none, or for a path of no provider)."""
    answer = provider(name).framing.error_answer if name is not None else None
    return answer(status, message) if answer is not None else _anthropic_error(status, message)
