"""`harness export --to vcr`: a cassette as a vcrpy cassette that vcrpy itself replays.

A team that keeps vcrpy can then replay the harness's cassettes, fault variants
included, in its existing suite: one interaction, the call of the cassette's provider
(`harness._interop.dialects`: `POST https://api.anthropic.com/v1/messages`, OpenAI's
`/v1/chat/completions` or `/v1/responses`, or the Responses resume `GET`) with the
cassette's recorded request (or `{"model": ..., "stream": true}` when it has none),
answered 200 `text/event-stream` with the lines framed as the API frames them (Chat's
`done` line as `data: [DONE]`; Bedrock ConverseStream's as event-stream frames, its
content type, the body YAML's `!!binary`), or, for a cassette whose answer is an `http_error` line,
that status, its headers and the error JSON. Other directive lines are not carried over:
vcrpy replays a body whole, so a fault variant's cut stream is simply a body that ends
there, which is what the SDK sees when a server closes the connection cleanly. A
YAML comment at the top names the cassette, and the fault and expected outcome of a
variant. `harness import` of the result gives the same lines back.

`harness export --to har` writes the same interaction as a HAR 1.2 file (`export_har`),
the form devtools, mitmproxy and Charles read: the request's JSON as `postData`, the
answer as `content.text`, plain for SSE and base64 (`encoding: "base64"`) for
event-stream frames (Bedrock's), the comment as the log's `comment`, and
`startedDateTime` the cassette's `recorded_at` (the epoch when it has none: HAR
requires one). Its import gives the same lines back too.
"""

from __future__ import annotations

import base64
import os
from typing import Any, Final
from urllib.parse import quote

import orjson
import yaml

from harness._cassette.codec import Cassette
from harness._directives import DONE, HTTP_ERROR
from harness._exceptions import ANTHROPIC
from harness._files import atomic_write
from harness._hosts import HOSTS
from harness._interop.dialects import Dialect, Line, for_provider
from harness._providers.anthropic import interop as anthropic
from harness._redact import redact_request
from harness._version import __version__

__all__ = [
    "API_URL",
    "FORMATS",
    "export_har",
    "export_name",
    "export_vcr",
    "har_log",
    "vcr_cassette",
]

#: What `harness export --to` writes, and each one's file suffix.
FORMATS: Final = {"vcr": ".yaml", "har": ".har"}
#: A HAR entry's start when the cassette names no `recorded_at` (HAR requires one).
_EPOCH: Final = "1970-01-01T00:00:00.000Z"

API_URL: Final = anthropic.API_URL


class _Dumper(yaml.SafeDumper):
    """Multi-line strings (an SSE body) as literal blocks, readable in a diff."""


def _str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    style = "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(str, _str)


def _request(header: dict[str, Any], dialect: Dialect, lines: list[Line]) -> dict[str, Any]:
    request = header.get("request")
    body = redact_request(request) if isinstance(request, dict) else {}
    model = header.get("model") or dialect.model_of(lines)
    if "model" not in body and isinstance(model, str):
        body["model"] = model
    return body


def _response(
    body: bytes | str, error: dict[str, Any] | None, content_type: str | None = None
) -> dict[str, Any]:
    if error is not None:
        headers = {str(k).lower(): [str(v)] for k, v in (error.get("headers") or {}).items()}
        return {
            "body": {"string": orjson.dumps(error.get("body")).decode("utf-8")},
            "headers": {**headers, "content-type": ["application/json"]},
            "status": {"code": int(error["status"]), "message": "Error"},
        }
    if content_type is not None:  # frames: bytes, which YAML writes as `!!binary`; or text
        return {
            "body": {"string": body},
            "headers": {"content-type": [content_type]},
            "status": {"code": 200, "message": "OK"},
        }
    return {
        "body": {"string": body.decode("utf-8") if isinstance(body, bytes) else body},
        "headers": {
            "cache-control": ["no-cache"],
            "content-type": ["text/event-stream; charset=utf-8"],
        },
        "status": {"code": 200, "message": "OK"},
    }


def _hosted(
    header: dict[str, Any], dialect: Dialect, call: tuple[str, str, dict[str, Any] | None]
) -> tuple[tuple[str, str, dict[str, Any] | None], Any, str | None]:
    """The call at the host the header names (its path carries the model and `stream`, as
    the host's SDK sends it), the frames the answer travels in there, and their content
    type; the dialect's own call, and its own frames, for none."""
    host = HOSTS.get(str(header.get("host")))
    if host is None:
        return call, dialect.frames, dialect.content_type if dialect.frames is not None else None
    method, _, body = call
    body = dict(body or {})
    model = str(body.pop("model", ""))
    body.pop("stream", None)
    uri = host.export_url.format(model=quote(model, safe=""))
    return (method, uri, body), host.frames, host.content_type


def vcr_cassette(
    header: dict[str, Any],
    events: list[dict[str, Any]],
    error: dict[str, Any] | None = None,
    *,
    provider: str = ANTHROPIC,
) -> dict[str, Any]:
    """The vcrpy cassette (version 1, one interaction) answering with `events` (a
    cassette's event lines, Chat's `done` lines among them), or with the `http_error`
    directive `error`."""
    dialect = for_provider(provider)
    lines = [dialect.done if event.get("harness") == DONE else event for event in events]
    request = _request(header, dialect, lines)
    answer: bytes | str
    content_type: str | None
    if dialect.exported is not None:  # its own paths name the host and the framing
        host = header.get("host")
        method, uri, body, raw, content_type = dialect.exported(
            request, host if isinstance(host, str) else None, lines
        )
        answer = raw.decode("utf-8")  # text: SSE, or the JSON array
    else:
        call, frames, content_type = _hosted(header, dialect, dialect.exported_call(request))
        method, uri, body = call
        answer = (
            dialect.sse_body(lines)
            if frames is None
            else b"".join(frames.encode(line) for line in lines if isinstance(line, dict))
        )
    request_headers = {"accept": ["application/json"], **dialect.request_headers}
    if body is not None:
        request_headers["content-type"] = ["application/json"]
    sdk_version = header.get("sdk_version")
    if isinstance(sdk_version, str):
        request_headers["x-stainless-package-version"] = [sdk_version]
    return {
        "interactions": [
            {
                "request": {
                    "body": orjson.dumps(body).decode("utf-8") if body is not None else None,
                    "headers": request_headers,
                    "method": method,
                    "uri": uri,
                },
                "response": _response(answer, error, content_type),
            }
        ],
        "version": 1,
    }


def _comment(cassette: Cassette) -> str:
    header = cassette.header or {}
    lines = [f"# Exported by stream-harness from {cassette.path}"]
    if "fault" in header:
        lines.append(f"# fault {header['fault']}: replays to {header.get('expect')}")
    return "".join(f"{line}\n" for line in lines)


def _exported(path: str) -> tuple[Cassette, dict[str, Any], int]:
    """The cassette at `path`, its vcrpy document, and its number of events."""
    cassette = Cassette(path)
    lines = [
        line.data
        for line in cassette.lines()
        if line.kind == "event" or line.data["harness"] in (HTTP_ERROR, DONE)
    ]
    events = [line for line in lines if line.get("harness") != HTTP_ERROR]
    errors = [line for line in lines if line.get("harness") == HTTP_ERROR]
    document = vcr_cassette(
        cassette.header or {},
        events,
        errors[0] if errors else None,
        provider=cassette.provider,
    )
    return cassette, document, sum("harness" not in event for event in events)


def export_vcr(path: str, target: str, *, force: bool = False) -> int:
    """Write the cassette at `path` as the vcrpy cassette `target`; the number of events.

    Raises `CassetteError` for an unusable cassette and `FileExistsError` when `target`
    exists and not `force`; the write is atomic.
    """
    cassette, document, count = _exported(path)
    text = _comment(cassette) + yaml.dump(
        document, Dumper=_Dumper, allow_unicode=True, sort_keys=False, width=100
    )
    with atomic_write(target, overwrite=force) as handle:
        handle.write(text.encode("utf-8"))
    return count


def _har_headers(headers: dict[str, list[str]]) -> list[dict[str, str]]:
    return [{"name": name, "value": value} for name, values in headers.items() for value in values]


def _har_content(body: str | bytes, mime_type: str) -> dict[str, Any]:
    """A response's `content`: frames (bytes) base64, as devtools keeps a binary body."""
    raw = body if isinstance(body, bytes) else body.encode("utf-8")
    if isinstance(body, bytes):
        return {
            "size": len(raw),
            "mimeType": mime_type,
            "text": base64.b64encode(raw).decode("ascii"),
            "encoding": "base64",
        }
    return {"size": len(raw), "mimeType": mime_type, "text": body}


def har_log(document: dict[str, Any], comment: str, started: str | None = None) -> dict[str, Any]:
    """A vcrpy document (`vcr_cassette`) as a HAR 1.2 log of the same entries."""
    entries = []
    for interaction in document["interactions"]:
        request, response = interaction["request"], interaction["response"]
        headers = request["headers"]
        body = request.get("body")
        sent: dict[str, Any] = {
            "method": request["method"],
            "url": request["uri"],
            "httpVersion": "HTTP/1.1",
            "cookies": [],
            "headers": _har_headers(headers),
            "queryString": [],
            "headersSize": -1,
            "bodySize": len(body.encode("utf-8")) if body is not None else 0,
        }
        if body is not None:
            sent["postData"] = {"mimeType": headers["content-type"][0], "text": body}
        content = _har_content(response["body"]["string"], response["headers"]["content-type"][0])
        status = response["status"]
        entries.append(
            {
                "startedDateTime": started or _EPOCH,
                "time": 0,
                "request": sent,
                "response": {
                    "status": status["code"],
                    "statusText": status["message"],
                    "httpVersion": "HTTP/1.1",
                    "cookies": [],
                    "headers": _har_headers(response["headers"]),
                    "content": content,
                    "redirectURL": "",
                    "headersSize": -1,
                    "bodySize": content["size"],
                },
                "cache": {},
                "timings": {"send": 0, "wait": 0, "receive": 0},
            }
        )
    creator = {"name": "stream-harness", "version": __version__}
    return {"log": {"version": "1.2", "creator": creator, "entries": entries, "comment": comment}}


def export_har(path: str, target: str, *, force: bool = False) -> int:
    """Write the cassette at `path` as the HAR file `target`; the number of events. Raises
    as `export_vcr` does."""
    cassette, document, count = _exported(path)
    comment = "".join(line.removeprefix("# ") + "\n" for line in _comment(cassette).splitlines())
    recorded_at = (cassette.header or {}).get("recorded_at")
    log = har_log(
        document, comment.rstrip("\n"), recorded_at if isinstance(recorded_at, str) else None
    )
    with atomic_write(target, overwrite=force) as handle:
        handle.write(orjson.dumps(log, option=orjson.OPT_INDENT_2) + b"\n")
    return count


def export_name(out_dir: str, stem: str, to: str = "vcr") -> str:
    """Where the export (`to`: a key of `FORMATS`) of the cassette named `stem` goes."""
    return os.path.join(out_dir, f"{stem}{FORMATS[to]}")
