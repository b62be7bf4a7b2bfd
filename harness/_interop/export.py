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
"""

from __future__ import annotations

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

__all__ = ["API_URL", "export_name", "export_vcr", "vcr_cassette"]

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
    body: bytes, error: dict[str, Any] | None, content_type: str | None = None
) -> dict[str, Any]:
    if error is not None:
        headers = {str(k).lower(): [str(v)] for k, v in (error.get("headers") or {}).items()}
        return {
            "body": {"string": orjson.dumps(error.get("body")).decode("utf-8")},
            "headers": {**headers, "content-type": ["application/json"]},
            "status": {"code": int(error["status"]), "message": "Error"},
        }
    if content_type is not None:  # frames: bytes, which YAML writes as `!!binary`
        return {
            "body": {"string": body},
            "headers": {"content-type": [content_type]},
            "status": {"code": 200, "message": "OK"},
        }
    return {
        "body": {"string": body.decode("utf-8")},
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
    call, frames, content_type = _hosted(
        header, dialect, dialect.exported_call(_request(header, dialect, lines))
    )
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


def export_vcr(path: str, target: str, *, force: bool = False) -> int:
    """Write the cassette at `path` as the vcrpy cassette `target`; the number of events.

    Raises `CassetteError` for an unusable cassette and `FileExistsError` when `target`
    exists and not `force`; the write is atomic.
    """
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
    text = _comment(cassette) + yaml.dump(
        document, Dumper=_Dumper, allow_unicode=True, sort_keys=False, width=100
    )
    with atomic_write(target, overwrite=force) as handle:
        handle.write(text.encode("utf-8"))
    return sum("harness" not in event for event in events)


def export_name(out_dir: str, stem: str) -> str:
    """Where the vcrpy cassette of the cassette named `stem` goes."""
    return os.path.join(out_dir, f"{stem}.yaml")
