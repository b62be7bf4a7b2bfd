"""A request as the code under test sent it, credentials removed: what a replayer
captures and matches, a recording keeps in its cassette's header, and a test reads.

`CapturedRequest.of` is the one place a sent request becomes one (its JSON body parsed,
None when it is not JSON; headers and body redacted), for replay and record alike.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from harness._redact import redact, redact_headers, redact_query

__all__ = ["CapturedRequest", "json_body"]


def json_body(raw: bytes) -> Any:
    """A request body as JSON, or None when it is empty or not JSON."""
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class CapturedRequest:
    """A request the code under test sent: credentials removed from headers, body and query."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    #: the query's parameters (Gemini's `alt=sse` picks its stream's framing)
    query: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        method: str,
        path: str,
        headers: Mapping[str, str],
        body: Any,
        query: Mapping[str, str] | None = None,
    ) -> CapturedRequest:
        """The request as kept: `body` already parsed (`json_body`); headers, body and
        query redacted (a presigned URL's `X-Amz-Signature`, Gemini's `key`)."""
        kept = redact_query(query or {})
        return cls(method.upper(), path, redact_headers(headers), redact(body), kept)

    @property
    def json(self) -> dict[str, Any]:
        """The JSON body as a dict (empty when the body was not a JSON object)."""
        return self.body if isinstance(self.body, dict) else {}
