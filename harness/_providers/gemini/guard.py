"""What `harness.strict` reads of a Gemini answer: which calls are Gemini's, no more yet.

`claims(method, path)` tells a POST at one of the provider's endpoints (the Gemini
API's and Vertex's `:streamGenerateContent` and `:generateContent`, under any base URL's
path). `answer_check` gives None: the guard passes a Gemini answer untouched until it
reads the dialect (the SDK's reading of a stream is the next step, docs/gemini.md).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from harness._providers.gemini.framing import ENDPOINTS
from harness._providers.wire import at_endpoint

__all__ = ["answer_check", "claims"]


def claims(method: str, path: str) -> bool:
    """Whether a request is a Gemini call (a POST at one of its endpoints)."""
    return method.upper() == "POST" and at_endpoint(ENDPOINTS, path)


def answer_check(
    method: str,
    path: str,
    params: Mapping[str, str],
    content: bytes,
    allowed: Collection[str],
    profile: str | None,
) -> Any:
    """None: a Gemini answer is passed untouched (the module)."""
    return None
