"""HAR 1.2 files (browser devtools, mitmproxy, Charles) read as exchanges.

Each `log.entries[]` item is one exchange: `request.method`, `request.url`,
`request.postData.text`, `response.status`, the header lists of `{name, value}` objects
and `response.content.text`, plain or base64 (`content.encoding: "base64"`).
`startedDateTime` becomes the cassette's `recorded_at`. Extra keys (`_initiator`,
`timings`, `cache`, anything a tool adds) are passed over.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from harness._exceptions import CassetteImportError
from harness._interop.reading import Exchange, Unreadable, first_values, header_pairs

__all__ = ["exchanges_from_har", "is_har_document"]


def is_har_document(document: Any) -> bool:
    log = document.get("log") if isinstance(document, dict) else None
    return isinstance(log, dict) and isinstance(log.get("entries"), list)


def _text(holder: Any) -> bytes | None:
    """`postData` or `content`: its `text`, base64-decoded when `encoding` says so."""
    if not isinstance(holder, dict) or holder.get("text") is None:
        return None
    text = str(holder["text"])
    if str(holder.get("encoding", "")).lower() == "base64":
        try:
            return base64.b64decode(text, validate=False)
        except (binascii.Error, ValueError):
            raise ValueError("content.text is not base64 as its encoding says") from None
    return text.encode("utf-8", "surrogatepass")


def _exchange(number: int, entry: Any) -> Exchange | Unreadable:
    request = entry.get("request") if isinstance(entry, dict) else None
    response = entry.get("response") if isinstance(entry, dict) else None
    if not isinstance(request, dict) or not isinstance(response, dict):
        return Unreadable(number, "not a HAR entry (a request and a response)")
    try:
        started = entry.get("startedDateTime")
        return Exchange(
            number=number,
            method=str(request.get("method", "")),
            uri=str(request.get("url", "")),
            request_headers=first_values(request.get("headers")),
            request_body=_text(request.get("postData")),
            request_json=None,
            status=int(response.get("status") or 0),
            response_headers=first_values(response.get("headers")),
            response_body=_text(response.get("content")),
            response_json=None,
            started=str(started) if started is not None else None,
            request_header_values=tuple(header_pairs(request.get("headers"))),
        )
    except (TypeError, ValueError) as error:
        return Unreadable(number, f"malformed entry: {error}")


def exchanges_from_har(path: str, document: Any) -> list[Exchange | Unreadable]:
    """Each entry of a loaded HAR document, numbered from 1, in file order."""
    if not is_har_document(document):
        raise CassetteImportError(f"{path}: not a HAR file: no log.entries list")
    return [_exchange(number, entry) for number, entry in enumerate(document["log"]["entries"], 1)]
