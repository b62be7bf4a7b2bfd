"""The one redaction: what may never be written, printed or stored, at any depth.

A name is credential-like when, case-insensitively, it contains `key`, `token`,
`secret`, `password`, `passwd`, `authorization`, `cookie`, `credential` or `signature`,
or is an account or request identifier header (Anthropic's `anthropic-organization-id`
and `request-id`; OpenAI's `openai-organization`, `openai-project` and `x-request-id`;
Azure's `apim-request-id`). Azure's `api-key` header and query parameter are `*key*`. Counts
named `*tokens` (`max_tokens`, `input_tokens`) are not credentials and stay. Record,
`--vcr`, import, the proxy, the server and captured requests all go through here.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Final
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = [
    "is_secret_name",
    "redact",
    "redact_answer",
    "redact_headers",
    "redact_request",
    "redact_uri",
]

_SECRET: Final = re.compile(
    r"key|token|secret|passw(or)?d|authori[sz]ation|cookie|credential|signature", re.IGNORECASE
)
#: Headers that carry no secret by name but identify an account or a request.
_IDENTIFYING_HEADERS: Final = frozenset(
    {
        "anthropic-organization-id",
        "request-id",
        "openai-organization",
        "openai-project",
        "x-request-id",
        "apim-request-id",
    }
)
#: Body fields of a request that a cassette does not keep (transport, not content).
_TRANSPORT_FIELDS: Final = frozenset({"stream", "extra_headers"})


@lru_cache(maxsize=4096)  # the same few names again and again: every request's headers
def is_secret_name(name: str) -> bool:
    """Whether a field, header or query parameter of this name may hold a credential."""
    lowered = name.lower()
    if lowered in _IDENTIFYING_HEADERS:
        return True
    if lowered.endswith("tokens"):  # max_tokens, budget_tokens, input_tokens: counts
        return bool(_SECRET.search(lowered.removesuffix("tokens")))
    return bool(_SECRET.search(lowered))


#: Fields of an answer named like a credential that are the protocol's own, by the `type`
#: of the object holding them: a thinking block's `signature` (a checksum the API reads
#: back), which a stream must keep to stay a stream.
_ANSWER_FIELDS: Final = frozenset({("thinking", "signature"), ("signature_delta", "signature")})


def _redacted(value: Any, kept: frozenset[tuple[Any, str]]) -> Any:
    if isinstance(value, dict):
        kind = value.get("type")
        return {
            key: _redacted(item, kept)
            for key, item in value.items()
            if not (isinstance(key, str) and is_secret_name(key) and (kind, key) not in kept)
        }
    if isinstance(value, list | tuple):
        return [_redacted(item, kept) for item in value]
    return value


def redact(value: Any) -> Any:
    """A copy of `value` with every credential-like key removed from every object in it."""
    return _redacted(value, frozenset())


def redact_answer(value: Any) -> Any:
    """An answer's event or error JSON as a recording keeps it: `redact`, but a thinking
    block's `signature` stays (the protocol's field, not a credential)."""
    return _redacted(value, _ANSWER_FIELDS)


def redact_request(request: dict[str, Any]) -> dict[str, Any]:
    """A Messages request body as a cassette may keep it."""
    kept = {key: value for key, value in request.items() if key not in _TRANSPORT_FIELDS}
    redacted: dict[str, Any] = redact(kept)
    return redacted


def redact_headers(headers: Any) -> dict[str, str]:
    """Headers (any mapping or pair list) without credential-like ones, names lower-cased."""
    items = headers.items() if hasattr(headers, "items") else headers
    return {str(k).lower(): str(v) for k, v in items if not is_secret_name(str(k))}


def redact_uri(uri: str) -> str:
    """`uri` without userinfo (`user:pass@`) and without credential-like query parameters."""
    try:
        parts = urlsplit(uri)
        host = parts.netloc.rpartition("@")[2]
        query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)]
    except ValueError:
        return "<unparsable URI>"
    kept = [(k, v) for k, v in query if not is_secret_name(k)]
    return urlunsplit(parts._replace(netloc=host, query=urlencode(kept)))
