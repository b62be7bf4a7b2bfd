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
sends, the headers, query and JSON body fields of a request the proxy passes on or a
recording kept) is also masked by value (`credentials` collects them, `mask` replaces
each occurrence in any string, key or text with `***`), wherever it appears: as sent,
decoded, and percent-encoded (an upstream quoting the URL it received). Values shorter
than `MIN_SECRET_LENGTH` are not masked: no provider issues a key that short, and
masking `test` would rewrite every word holding it. A message quoting what a peer sent
quotes it whole or not at all (`excerpt`): masking by value finds a credential in a
whole value, never in one cut short.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterable, Iterator
from functools import lru_cache
from typing import Any, Final
from urllib.parse import (
    parse_qsl,
    quote,
    quote_plus,
    unquote,
    unquote_plus,
    urlencode,
    urlsplit,
    urlunsplit,
)

from harness._json import MAX_NESTING, deeper_than_limit

__all__ = [
    "EXCERPT_LENGTH",
    "MASK",
    "MIN_SECRET_LENGTH",
    "credentials",
    "excerpt",
    "is_secret_name",
    "kept_line",
    "mask",
    "mask_text",
    "redact",
    "redact_answer",
    "redact_headers",
    "redact_query",
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
#: The longest text a message quotes of what a peer sent (`excerpt`).
EXCERPT_LENGTH: Final = 64
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


def _dropped(value: dict[Any, Any], key: object, answer: bool, under: object) -> bool:
    """Whether `value[key]` is a credential (`value` sitting under the key `under`; in an
    answer, or a request's own fields, when `answer`)."""
    return (
        isinstance(key, str)
        and is_secret_name(key)
        and not (answer and _protocol_field(value, key, under))
    )


def _redacted(value: Any, answer: bool, under: object = None) -> Any:
    if isinstance(value, dict):
        return {
            key: _redacted(item, answer, key)
            for key, item in value.items()
            if not _dropped(value, key, answer, under)
        }
    if isinstance(value, list | tuple):
        return [_redacted(item, answer) for item in value]
    return value


def _held(value: Any, under: object = None) -> Iterator[str]:
    """The strings the credential-like fields of the JSON value `value` hold, at any
    depth: a field's string, or each string of its list. An object is read field by
    field (a tool schema's `"password": {"type": "string"}` holds no credential), and a
    thinking block's `signature` is the protocol's, as in an answer."""
    if isinstance(value, dict):
        for key, item in value.items():
            if _dropped(value, key, True, under):
                held = item if isinstance(item, list | tuple) else [item]
                yield from (one for one in held if isinstance(one, str))
            yield from _held(item, key)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _held(item)


def _parts(name: str, value: str) -> Iterable[str]:
    """The credentials one header, query parameter or userinfo value carries: the value,
    the token after an auth scheme (`Bearer sk-...`) and a Basic pair's password, an AWS
    SigV4 signature's `Credential` (and the access key id in it) and `Signature`, a
    presigned URL's `X-Amz-Credential`'s access key id, each cookie's value."""
    yield value
    if "credential" in name.lower():
        yield value.partition("/")[0]
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
    headers: Any = (), uri: str | None = None, values: Iterable[str | None] = (), body: Any = None
) -> tuple[str, ...]:
    """The credentials to mask by value: `values` as given (the key a command holds), the
    value of each credential-like header of `headers` (any mapping or pair list; a
    request forwarded or kept) and query parameter of `uri` (as sent and decoded),
    `uri`'s userinfo, and the strings of each credential-like field of the JSON `body`
    at any depth; each also percent-encoded (`_encoded`); longest first (so that a key
    is masked whole where a shorter one is part of it), none shorter than
    `MIN_SECRET_LENGTH`."""
    found: set[str] = {value for value in values if value}
    items = headers.items() if hasattr(headers, "items") else headers
    for name, value in items:
        if is_secret_name(str(name)):
            found.update(_parts(str(name), str(value)))
    if uri:
        found.update(_in_uri(uri))
    found.update(_held(body))
    kept = {form for value in found if len(value) >= MIN_SECRET_LENGTH for form in _encoded(value)}
    return tuple(sorted(kept, key=lambda value: (-len(value), value)))


def _in_uri(uri: str) -> Iterator[str]:
    """The credentials in `uri`: its userinfo, and each credential-like query parameter's
    value, as sent (percent-encoded as its client chose) and decoded."""
    try:
        parts = urlsplit(uri)
        username, password = parts.username, parts.password
    except ValueError:
        return
    for given in (username, password):
        if given:
            yield from (given, unquote(given))
    for field in parts.query.split("&"):
        raw_name, _, raw = field.partition("=")
        name = unquote_plus(raw_name)
        if is_secret_name(name):
            yield raw
            yield from _parts(name, unquote_plus(raw))


def _encoded(value: str) -> set[str]:
    """`value` and its percent-encoded forms: each reserved character escaped, `/` escaped
    or kept, a space as `%20` or (form-encoded) `+`."""
    return {
        value,
        quote(value, safe=""),
        quote(value, safe="/"),
        quote_plus(value, safe=""),
        quote_plus(value, safe="/"),
    }


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


def kept_line(line: dict[str, Any], secrets: tuple[str, ...] = ()) -> dict[str, Any]:
    """A line of an answer as a cassette keeps it (`redact_answer`), whoever writes it (a
    recording, an import); `ValueError` for a line nested past the limit, which no
    cassette holds."""
    if deeper_than_limit(line):
        raise ValueError(f"a line nests deeper than {MAX_NESTING} levels, the limit")
    kept: dict[str, Any] = redact_answer(line, secrets)
    return kept


def redact_request(request: dict[str, Any]) -> dict[str, Any]:
    """A Messages request body as a cassette may keep it."""
    kept = {key: value for key, value in request.items() if key not in _TRANSPORT_FIELDS}
    redacted: dict[str, Any] = redact(kept)
    return redacted


def redact_headers(headers: Any) -> dict[str, str]:
    """Headers (any mapping or pair list) without credential-like ones, names lower-cased."""
    items = headers.items() if hasattr(headers, "items") else headers
    return {str(k).lower(): str(v) for k, v in items if not is_secret_name(str(k))}


def redact_query(query: Any) -> dict[str, str]:
    """A query's parameters (any mapping or pair list) without credential-like ones."""
    items = query.items() if hasattr(query, "items") else query
    return {str(k): str(v) for k, v in items if not is_secret_name(str(k))}


def excerpt(text: str, limit: int = EXCERPT_LENGTH) -> str:
    """`text`, something a peer sent, as a message quotes it: whole, where masking by
    value (`mask_text`) finds any credential in it; past `limit` characters only its
    length, as a cut would leave the start of a credential that no masking finds."""
    return text if len(text) <= limit else f"<{len(text)} characters>"


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
