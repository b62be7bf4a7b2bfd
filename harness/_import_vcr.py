"""Import vcrpy / pytest-recording cassettes: one JSONL cassette per streamed Messages call.

Many projects already keep HTTP cassettes of their Anthropic SDK calls. Each interaction
that is a `POST .../v1/messages` answered 200 with a `text/event-stream` body becomes a
cassette (`source: imported`) holding that body's events, in order; every other
interaction is listed with the reason it was skipped. Only the events, the request
body (credential-like fields removed, `harness._redact`), the SDK version
from `x-stainless-package-version` and the response `date` are kept: no header is copied.
"""

from __future__ import annotations

import json
import os
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from harness._cassette import make_header, write_cassette
from harness._exceptions import CassetteImportError
from harness._redact import redact_request
from harness._sse import events_from_body

__all__ = ["ImportReport", "import_vcr", "vcr_files"]

VCR_SUFFIXES = (".yaml", ".yml", ".json")


@dataclass(slots=True)
class ImportReport:
    """What an import did: cassettes written (path, event count) and interactions skipped."""

    written: list[tuple[str, int]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Interaction:
    number: int
    method: str
    uri: str
    request_headers: dict[str, str]
    request_body: bytes
    status: int
    response_headers: dict[str, str]
    response_body: bytes

    def skip_reason(self) -> str | None:
        """Why this is not a streamed Messages call, or None when it is."""
        if self.method.upper() != "POST" or not urlsplit(self.uri).path.endswith("/v1/messages"):
            return "not a POST to /v1/messages"
        if self.status != 200:
            return f"status {self.status}"
        content_type = self.response_headers.get("content-type", "")
        if "text/event-stream" not in content_type:
            return f"not a stream (content-type {content_type or 'missing'})"
        return None


def _first_values(headers: Any) -> dict[str, str]:
    """vcr keeps a response header as a list of values, a request header as one value."""
    flat: dict[str, str] = {}
    for name, value in dict(headers or {}).items():
        values = value if isinstance(value, list) else [value]
        flat[str(name).lower()] = str(values[0]) if values else ""
    return flat


def _decompressed(body: bytes, encoding: str) -> bytes:
    if encoding in ("gzip", "deflate"):
        try:
            return zlib.decompress(body, zlib.MAX_WBITS | 32)
        except zlib.error:
            return body
    return body


def _read(path: str) -> Iterator[_Interaction]:
    from vcr.serialize import deserialize
    from vcr.serializers import jsonserializer, yamlserializer

    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise CassetteImportError(f"{path}: cannot read: {error}") from None
    serializer = jsonserializer if text.lstrip().startswith("{") else yamlserializer
    try:
        requests, responses, *_ = deserialize(text, serializer)
    except Exception as error:
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise CassetteImportError(f"{path}: not a vcrpy cassette: {reason}") from None
    for number, (request, response) in enumerate(zip(requests, responses, strict=True), 1):
        headers = _first_values(response.get("headers"))
        body = (response.get("body") or {}).get("string") or b""
        yield _Interaction(
            number=number,
            method=str(request.method),
            uri=str(request.uri),
            request_headers=_first_values(request.headers),
            request_body=request.body_bytes or b"",
            status=int((response.get("status") or {}).get("code", 0)),
            response_headers=headers,
            response_body=_decompressed(body, headers.get("content-encoding", "")),
        )


def _header(path: str, interaction: _Interaction, events: list[dict[str, Any]]) -> dict[str, Any]:
    try:
        request = json.loads(interaction.request_body)
    except ValueError:
        request = None
    request = redact_request(request) if isinstance(request, dict) else {}
    start = events[0].get("message") if events[0].get("type") == "message_start" else None
    model = request.get("model") or (start or {}).get("model")
    metadata: dict[str, Any] = {"request": request}
    if isinstance(model, str):
        metadata["model"] = model
    sdk_version = interaction.request_headers.get("x-stainless-package-version")
    if sdk_version:
        metadata["sdk_version"] = sdk_version
    try:
        date = parsedate_to_datetime(interaction.response_headers["date"])
        metadata["recorded_at"] = date.isoformat().replace("+00:00", "Z")
    except (KeyError, TypeError, ValueError):
        pass
    description = f"Imported from {path}, interaction {interaction.number}: POST /v1/messages"
    return make_header(description, "imported", **metadata)


def vcr_files(paths: Sequence[str]) -> list[str]:
    """Files as given; a folder means every *.yaml, *.yml, *.json below it, sorted."""
    found: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            below = (str(p) for p in Path(path).rglob("*") if p.suffix in VCR_SUFFIXES)
            found.extend(sorted(below))
        else:
            found.append(path)
    return found


def _stem(path: str) -> str:
    return Path(path).name.split(".")[0] or "cassette"


def import_vcr(path: str, out_dir: str, *, force: bool = False) -> ImportReport:
    """Write `OUT_DIR/<name>-<N>.jsonl` for each streamed Messages interaction N of `path`."""
    report = ImportReport()
    interactions = list(_read(path))
    os.makedirs(out_dir, exist_ok=True)
    for interaction in interactions:
        label = f"{path} #{interaction.number} {interaction.method} {interaction.uri}"
        reason = interaction.skip_reason()
        events: list[dict[str, Any]] = []
        if reason is None:
            try:
                events = events_from_body(interaction.response_body)
            except ValueError as error:
                reason = f"unreadable stream: {error}"
        if reason is None and not events:
            reason = "the stream holds no events"
        if reason is not None:
            report.skipped.append(f"{label}: {reason}")
            continue
        target = os.path.join(out_dir, f"{_stem(path)}-{interaction.number:02d}.jsonl")
        try:
            write_cassette(
                target, events, header=_header(path, interaction, events), overwrite=force
            )
        except FileExistsError:
            raise CassetteImportError(
                f"{target}: already exists (use --force to replace it)"
            ) from None
        report.written.append((target, len(events)))
    return report
