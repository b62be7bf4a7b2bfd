"""The one redaction: what may never be written, printed or stored, at any depth.

A name is credential-like when, case-insensitively, it contains `key`, `token`,
`secret`, `password`, `passwd`, `authorization`, `cookie`, `credential` or `signature`,
or is an account or request identifier header (Anthropic's `anthropic-organization-id`
and `request-id`; OpenAI's `openai-organization`, `openai-project` and `x-request-id`;
Azure's `apim-request-id`). Azure's `api-key` header and query parameter are `*key*`. Counts
named `*tokens` (`max_tokens`, `input_tokens`, `maxOutputTokens`), their details
(`prompt_tokens_details`, `promptTokensDetails`) and `*TokenCount` (`promptTokenCount`,
a details entry's `tokenCount`) are not credentials and stay. Record,
`--vcr`, import, the proxy, the server and captured requests all go through here.

Names are not enough: an upstream may repeat the key it was sent in an error message or
any field of an event. So a credential the harness holds or forwards (the key `record`
sends, the headers and query of a request the proxy passes on or a recording kept) is
also masked by value (`credentials` collects them, `mask` replaces each occurrence in
any string, key or text with `***`), wherever it appears. Values shorter than
`MIN_SECRET_LENGTH` are not masked: no provider issues a key that short, and masking
`test` would rewrite every word holding it.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any, Final
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = [
    "MASK",
    "MIN_SECRET_LENGTH",
    "credentials",
    "is_secret_name",
    "mask",
    "mask_text",
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
#: What a credential found by value becomes.
MASK: Final = "***"
#: The shortest value masked by value: the shortest key any provider issues is longer.
MIN_SECRET_LENGTH: Final = 8
#: Body fields of a request that a cassette does not keep (transport, not content).
_TRANSPORT_FIELDS: Final = frozenset({"stream", "extra_headers"})


@lru_cache(maxsize=4096)  # the same few names again and again: every request's headers
def is_secret_name(name: str) -> bool:
    """Whether a field, header or query parameter of this name may hold a credential."""
    lowered = name.lower()
    if lowered in _IDENTIFYING_HEADERS:
        return True
    lowered = lowered.removesuffix("_details").removesuffix("details")  # counts, too
    for count in ("tokens", "tokencount"):  # max_tokens, input_tokens, promptTokenCount
        if lowered.endswith(count):
            return bool(_SECRET.search(lowered.removesuffix(count)))
    return bool(_SECRET.search(lowered))


#: Fields of an answer named like a credential that are the protocol's own, by the `type`
#: of the object holding them, or for a dialect whose objects have no `type` by the key
#: that object sits under: a thinking block's `signature` (a checksum the API reads back;
#: Converse's `reasoningContent` delta carries it too), which a stream must keep to stay
#: a stream.
_ANSWER_FIELDS: Final = frozenset(
    {("thinking", "signature"), ("signature_delta", "signature"), ("reasoningContent", "signature")}
)
#: Fields named like a credential that are an answer's own wherever they sit: a content
#: part's `thoughtSignature` (the model's thinking, opaque, which a client sends back
#: with the call it came with), not a credential.
_ANSWER_NAMES: Final = frozenset({"thoughtSignature"})
#: The fields of a log-probability entry (an object with a `logprob` or a
#: `logProbability`) that hold the token's text and its id: the protocol's own too.
_LOGPROB_TOKEN: Final = frozenset({"token", "tokenId"})
_LOGPROB: Final = ("logprob", "logProbability")


def _protocol_field(value: dict[Any, Any], key: str, under: object) -> bool:
    """Whether `value[key]`, named like a credential, is an answer's own field (`value`
    sitting under the key `under`)."""
    if key in _LOGPROB_TOKEN:
        return any(name in value for name in _LOGPROB)
    if key in _ANSWER_NAMES:
        return True
    return (value.get("type"), key) in _ANSWER_FIELDS or (under, key) in _ANSWER_FIELDS


def _redacted(value: Any, answer: bool, under: object = None) -> Any:
    if isinstance(value, dict):
        return {
            key: _redacted(item, answer, key)
            for key, item in value.items()
            if not (
                isinstance(key, str)
                and is_secret_name(key)
                and not (answer and _protocol_field(value, key, under))
            )
        }
    if isinstance(value, list | tuple):
        return [_redacted(item, answer) for item in value]
    return value


def _parts(name: str, value: str) -> Iterable[str]:
    """The credentials one header, query parameter or userinfo value carries: the value,
    the token after an auth scheme (`Bearer sk-...`) and a Basic pair's password, an AWS
    SigV4 signature's `Credential` (and the access key id in it) and `Signature`, each
    cookie's value."""
    yield value
    scheme, _, token = value.strip().partition(" ")
    if token:
        yield token.strip()
        if scheme.upper().startswith("AWS4-"):
            for part in token.split(","):
                field, _, given = part.strip().partition("=")
                if field in ("Credential", "Signature"):
                    yield given
                    yield given.partition("/")[0]
        if scheme.lower() == "basic":
            try:
                pair = base64.b64decode(token.strip(), validate=True).decode("utf-8")
            except (binascii.Error, UnicodeDecodeError):
                pair = ""
            yield from pair.partition(":")[::2]
    if "cookie" in name.lower():
        for cookie in value.split(";"):
            yield cookie.partition("=")[2].strip()


def credentials(
    headers: Any = (), uri: str | None = None, values: Iterable[str | None] = ()
) -> tuple[str, ...]:
    """The credentials to mask by value: `values` as given (the key a command holds), the
    value of each credential-like header of `headers` (any mapping or pair list; a
    request forwarded or kept) and query parameter of `uri`, and `uri`'s userinfo;
    longest first (so that a key is masked whole where a shorter one is part of it),
    none shorter than `MIN_SECRET_LENGTH`."""
    found: set[str] = {value for value in values if value}
    items = headers.items() if hasattr(headers, "items") else headers
    for name, value in items:
        if is_secret_name(str(name)):
            found.update(_parts(str(name), str(value)))
    if uri:
        try:
            parts = urlsplit(uri)
            query = parse_qsl(parts.query, keep_blank_values=True)
        except ValueError:
            parts, query = None, []
        found.update(value for name, value in query if is_secret_name(name))
        if parts is not None:
            found.update(value for value in (parts.username, parts.password) if value)
    kept = {value for value in found if len(value) >= MIN_SECRET_LENGTH}
    return tuple(sorted(kept, key=lambda value: (-len(value), value)))


@lru_cache(maxsize=64)  # a command masks with the same few values all along
def _pattern(secrets: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(map(re.escape, secrets)))


def mask_text(text: str, secrets: tuple[str, ...]) -> str:
    """`text` with each occurrence of each of `secrets` (`credentials`) as `MASK`."""
    if not secrets:
        return text
    return _pattern(secrets).sub(MASK, text)


def mask(value: Any, secrets: tuple[str, ...]) -> Any:
    """A copy of the JSON value `value` with `secrets` masked in every string and key."""
    if not secrets:
        return value
    pattern = _pattern(secrets)

    def masked(item: Any) -> Any:
        if isinstance(item, str):
            return pattern.sub(MASK, item)
        if isinstance(item, dict):
            return {masked(key): masked(inner) for key, inner in item.items()}
        if isinstance(item, list | tuple):
            return [masked(inner) for inner in item]
        return item

    return masked(value)


def redact(value: Any) -> Any:
    """A copy of `value` with every credential-like key removed from every object in it."""
    return _redacted(value, False)


def redact_answer(value: Any, secrets: tuple[str, ...] = ()) -> Any:
    """An answer's event or error JSON as a recording keeps it: `redact`, but a thinking
    block's `signature` and a log-probability's `token` stay (the protocol's fields, not
    credentials); and `secrets` (`credentials`) masked wherever they appear."""
    return mask(_redacted(value, True), secrets)


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
