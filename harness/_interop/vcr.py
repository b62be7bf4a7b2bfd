"""vcrpy cassettes (YAML or JSON) read as plain data: every shape recorders write.

vcrpy's own loader builds its `Request` from each interaction and breaks on any key it
does not know; this reader never constructs it. It takes the document `_recording`
loaded safely and accepts extra keys at any level, and:

- bodies as `body: {string: ...}` (text or `!!binary`), `body` as a bare string or
  bytes, Ruby VCR's `base64_string`, and pydantic-ai's `parsed_body` (the JSON already
  parsed, no `body` at all);
- the legacy httpx shape (`status_code`, `content`, the body already decoded) beside the
  current one (`status: {code}`, `body`);
- headers as a mapping to a list or a single value, or a list of pairs;
- `interactions` (vcrpy, go-vcr) or `http_interactions` (Ruby VCR), whose
  `recorded_at` is kept.

An interaction that is not a mapping with a `request` and a `response` is returned as
`Unreadable` with the reason, and the others still import.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from harness._exceptions import CassetteImportError
from harness._interop.reading import Exchange, Unreadable, first_values, header_pairs

__all__ = ["exchanges_from_vcr", "is_vcr_document"]


def is_vcr_document(document: Any) -> bool:
    return isinstance(document, dict) and isinstance(
        document.get("interactions", document.get("http_interactions")), list
    )


def _bytes(value: Any) -> bytes | None:
    """A stored body value as bytes: text is UTF-8, `!!binary` is bytes already."""
    if value is None:
        return None
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    raise ValueError(f"a body of type {type(value).__name__}")


def _body(holder: dict[str, Any], *legacy: str) -> bytes | None:
    """The body stored under `body` (a bare value or `{string: ...}`) or a legacy key."""
    body = holder.get("body")
    if isinstance(body, dict):
        if "base64_string" in body:
            try:
                return base64.b64decode(str(body["base64_string"]))
            except (binascii.Error, ValueError):
                raise ValueError("a base64_string body that is not base64") from None
        return _bytes(body.get("string"))
    if body is not None:
        return _bytes(body)
    for key in legacy:
        if key in holder:
            return _bytes(holder[key])
    return None


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _status(response: dict[str, Any]) -> int:
    """`status: {code}`, a bare `status` (go-vcr's `200 OK` too), or legacy `status_code`."""
    status = response.get("status")
    code = status.get("code") if isinstance(status, dict) else status
    if code is None:
        code = response.get("status_code", response.get("code"))
    if isinstance(code, str):
        code = code.split(maxsplit=1)[0] if code.strip() else None
    return int(code) if code is not None else 0


def _uri(request: dict[str, Any]) -> str:
    uri = request.get("uri", request.get("url"))
    if uri is not None:
        return str(uri)
    host = request.get("host")  # vcrpy 1.x kept the parts
    if host is None:
        raise ValueError("a request without uri")
    scheme = request.get("protocol", request.get("scheme", "https"))
    port = request.get("port")
    netloc = f"{host}:{port}" if port not in (None, 80, 443) else str(host)
    return f"{scheme}://{netloc}{request.get('path', '/')}"


def _exchange(number: int, item: Any) -> Exchange | Unreadable:
    request = item.get("request") if isinstance(item, dict) else None
    response = item.get("response") if isinstance(item, dict) else None
    if not isinstance(request, dict) or not isinstance(response, dict):
        return Unreadable(number, "not an interaction (a request and a response)")
    try:
        return Exchange(
            number=number,
            method=str(request.get("method", "")),
            uri=_uri(request),
            request_headers=first_values(request.get("headers")),
            request_body=_body(request),
            request_json=request.get("parsed_body"),
            status=_status(response),
            response_headers=first_values(response.get("headers")),
            response_body=_body(response, "content"),
            response_json=response.get("parsed_body"),
            started=_text(item.get("recorded_at")),
            request_header_values=tuple(header_pairs(request.get("headers"))),
        )
    except (TypeError, ValueError) as error:
        return Unreadable(number, f"malformed interaction: {error}")


def exchanges_from_vcr(path: str, document: Any) -> list[Exchange | Unreadable]:
    """Each interaction of a loaded vcrpy document, numbered from 1, in file order."""
    if not is_vcr_document(document):
        raise CassetteImportError(f"{path}: not a vcrpy cassette: no interactions list")
    items = document.get("interactions", document.get("http_interactions"))
    return [_exchange(number, item) for number, item in enumerate(items, 1)]
