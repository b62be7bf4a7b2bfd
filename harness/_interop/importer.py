"""`harness import`: recordings users already keep (vcrpy, HAR) to cassettes.

Each exchange that is a `POST .../v1/messages` (or Vertex's `:rawPredict` and
`:streamRawPredict`) answered 200 becomes one cassette (`source: imported`):

- an SSE body: its events, as the SDK's own SSE reader splits them;
- a JSON `Message` (a non-streaming call): the events a stream of that message carries
  (`harness._providers.anthropic.message.events_from_message`), the header saying
  `synthesized_from: message`.

Every other exchange is listed with the reason it was skipped; the report names it by
its redacted URI. Only the events, the request body (credential-like fields removed at
any depth, `harness._redact`), the model, the SDK version (`x-stainless-package-version`,
kept only when it reads as a version) and the response date are kept: no header is
copied. A stream and a Message are told apart by the body (a JSON object, or SSE
fields), not by `content-type`, since some recorders redact every header value.

Output names are `<stem>-<N>.jsonl` (N the exchange's number in its file);
`output_names` makes them distinct across all the files of one run, or refuses the run
before anything is written.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

import orjson

from harness._cassette.codec import _schema_reason, make_header, write_cassette
from harness._cassette.sse import SSEFormatError, events_from_body
from harness._exceptions import CassetteImportError, OutputError
from harness._files import AtomicBatch
from harness._interop.har import exchanges_from_har, is_har_document
from harness._interop.reading import (
    BodyError,
    Exchange,
    Unreadable,
    decode_body,
    is_recording_name,
    load_document,
    recording_stem,
)
from harness._interop.vcr import exchanges_from_vcr, is_vcr_document
from harness._providers.anthropic.message import events_from_message
from harness._redact import redact_request, redact_uri

__all__ = [
    "ImportReport",
    "import_recording",
    "import_vcr",
    "output_names",
    "prepare_folder",
    "recording_files",
]

#: `x-stainless-package-version` is kept only when it reads as a version.
_VERSION: Final = re.compile(r"\d{1,4}(\.\d{1,6}){1,3}([.+-]?[0-9A-Za-z][0-9A-Za-z.+-]{0,30})?")


@dataclass(slots=True)
class ImportReport:
    """What importing one file did: cassettes written (path, event count), exchanges
    skipped (one line each, with the reason) and outputs kept because they existed."""

    written: list[tuple[str, int]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)


class _Skip(Exception):
    """Why an exchange does not become a cassette."""


def _shown(text: str, limit: int = 200) -> str:
    """Text from a recording as a report may print it: control characters escaped, cut
    at `limit` characters (a crafted file must not drive the terminal)."""
    shown = "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."


def _is_messages_call(exchange: Exchange) -> bool:
    try:
        path = urlsplit(exchange.uri).path
    except ValueError:  # e.g. a malformed IPv6 host
        return False
    return exchange.method.upper() == "POST" and (
        path.endswith("/v1/messages") or path.endswith((":rawPredict", ":streamRawPredict"))
    )


def _decoded_body(exchange: Exchange) -> bytes:
    if not exchange.response_body:
        raise _Skip("the response has no body")
    encoding = exchange.response_headers.get("content-encoding", "")
    try:
        return decode_body(exchange.response_body, encoding)
    except BodyError as error:
        raise _Skip(str(error)) from None


def _stream_events(body: bytes, content_type: str) -> list[dict[str, Any]]:
    """The events of an SSE response body; `_Skip` when it holds none."""
    try:
        events = events_from_body(body)
    except SSEFormatError as error:
        raise _Skip(f"unreadable stream: {error}") from None
    if not events:
        raise _Skip(f"not a stream nor a Message (content-type {content_type or 'missing'})")
    return events


def _message_events(message: Any) -> list[dict[str, Any]]:
    """The events synthesised from a JSON `Message` response; `_Skip` for other JSON."""
    if not isinstance(message, dict) or message.get("type") != "message":
        kind = message.get("type") if isinstance(message, dict) else type(message).__name__
        raise _Skip(f"the JSON response is a {kind!r}, not a Message")
    try:
        return events_from_message(message)
    except (AttributeError, TypeError, ValueError) as error:
        raise _Skip(f"the Message cannot be replayed as a stream: {error}") from None


def _events(exchange: Exchange) -> tuple[list[dict[str, Any]], bool]:
    """The cassette events of a Messages exchange, and whether a message was synthesised.

    A body that is a JSON object is a `Message`; any other is SSE (it starts with a
    field or a comment).
    """
    if exchange.status != 200:
        raise _Skip(f"status {exchange.status}")
    if exchange.response_json is not None:
        events, synthesized = _message_events(exchange.response_json), True
    else:
        body = _decoded_body(exchange)
        synthesized = body.lstrip().startswith(b"{")
        if synthesized:
            try:
                message = orjson.loads(body)
            except orjson.JSONDecodeError:
                raise _Skip("the JSON body is not valid JSON") from None
            events = _message_events(message)
        else:
            events = _stream_events(body, exchange.response_headers.get("content-type", ""))
    for number, event in enumerate(events, 1):
        reason = _schema_reason("event", event)
        if reason is not None:
            raise _Skip(f"event {number}: {reason}")
    return events, synthesized


def _request(exchange: Exchange) -> dict[str, Any]:
    request = exchange.request_json
    if request is None and exchange.request_body:
        try:
            request = orjson.loads(exchange.request_body)
        except orjson.JSONDecodeError:
            request = None
    return redact_request(request) if isinstance(request, dict) else {}


def _recorded_at(exchange: Exchange) -> str | None:
    when = exchange.started or exchange.response_headers.get("date")
    if when is None:
        return None
    try:
        moment = datetime.fromisoformat(when)
    except ValueError:
        try:
            moment = parsedate_to_datetime(when)
        except (TypeError, ValueError, IndexError):
            return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    try:
        return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")
    except OverflowError:  # year 1 or 9999 moved across a day boundary
        return None


def _header(
    path: str, exchange: Exchange, events: list[dict[str, Any]], synthesized: bool
) -> dict[str, Any]:
    request = _request(exchange)
    start = events[0].get("message") if events[0].get("type") == "message_start" else None
    model = request.get("model") or (start if isinstance(start, dict) else {}).get("model")
    metadata: dict[str, Any] = {}
    if isinstance(model, str):
        metadata["model"] = model
    sdk_version = exchange.request_headers.get("x-stainless-package-version", "")
    if _VERSION.fullmatch(sdk_version):
        metadata["sdk_version"] = sdk_version
    if synthesized:
        metadata["synthesized_from"] = "message"
    kind = "a non-streaming" if synthesized else "a streamed"
    description = f"Imported from {path}, exchange {exchange.number}: {kind} Messages call"
    return make_header(
        description,
        "imported",
        request=request,
        recorded_at=_recorded_at(exchange),
        **metadata,
    )


def _exchanges(path: str) -> list[Exchange | Unreadable]:
    document = load_document(path)
    if is_har_document(document):
        return exchanges_from_har(path, document)
    if is_vcr_document(document):
        return exchanges_from_vcr(path, document)
    what = "a HAR file" if path.lower().endswith((".har", ".har.gz")) else "a vcrpy cassette"
    raise CassetteImportError(
        f"{path}: not {what}: neither an interactions list (vcrpy) nor log.entries (HAR)"
    )


def prepare_folder(out_dir: str) -> None:
    """Create the output folder, or say in one line why it cannot be one."""
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise CassetteImportError(f"{out_dir}: exists and is not a folder")
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as error:
        raise CassetteImportError(
            f"{out_dir}: cannot create folder: {error.strerror or error}"
        ) from None


def import_recording(
    path: str,
    out_dir: str,
    *,
    name: str | None = None,
    force: bool = False,
    batch: AtomicBatch | None = None,
) -> ImportReport:
    """Write `OUT_DIR/<name>-<N>.jsonl` for each Messages exchange N of the recording `path`.

    Raises `CassetteImportError` when the file cannot be read as a recording, and
    `OutputError` when a cassette cannot be written (a full disk). An output that exists
    is left as it was and listed in `kept`, unless `force`. With a `batch`, the
    cassettes reach their names at its commit (`harness import` writes many files with
    one sync, and scans the folder once).
    """
    report = ImportReport()
    exchanges = _exchanges(path)
    prepare_folder(out_dir)
    stem = name or recording_stem(path)
    for exchange in exchanges:
        if isinstance(exchange, Unreadable):
            report.skipped.append(f"{path} #{exchange.number}: {_shown(exchange.reason)}")
            continue
        what = _shown(f"{exchange.method} {redact_uri(exchange.uri)}")
        label = f"{path} #{exchange.number} {what}"
        target = os.path.join(out_dir, f"{stem}-{exchange.number:02d}.jsonl")
        try:
            if not _is_messages_call(exchange):
                raise _Skip("not a POST to /v1/messages")
            events, synthesized = _events(exchange)
            header = _header(path, exchange, events, synthesized)
            write_cassette(target, events, header=header, overwrite=force, batch=batch)
        except _Skip as reason:
            report.skipped.append(f"{label}: {_shown(str(reason))}")
            continue
        except RecursionError:
            report.skipped.append(f"{label}: nested too deeply")
            continue
        except ValueError as error:  # nested deeper than the reader's limit
            report.skipped.append(f"{label}: cannot be written as JSON: {error}")
            continue
        except FileExistsError:
            report.kept.append(target)
            continue
        except OSError as error:  # a full disk: unusable output, as in every command
            raise OutputError(f"{target}: cannot write: {error.strerror or error}") from None
        report.written.append((target, len(events)))
    return report


#: The 0.1 name, kept for `harness.vcr_import` users until 0.3.
import_vcr = import_recording


def recording_files(paths: Sequence[str]) -> list[str]:
    """Files as given; a folder means every recording below it (`*.yaml`, `*.yml`,
    `*.json`, `*.har`, each also `.gz` or `.zst`), sorted. The same file once."""
    found: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            below = (str(p) for p in Path(path).rglob("*") if is_recording_name(str(p)))
            found.extend(sorted(p for p in below if os.path.isfile(p)))
        elif os.path.exists(path):
            found.append(path)
        else:
            raise CassetteImportError(f"{path}: no such file or folder")
    seen: set[str] = set()
    unique = []
    for path in found:
        real = os.path.realpath(path)
        if real not in seen:
            seen.add(real)
            unique.append(path)
    return unique


def output_names(
    files: Sequence[str], stem_of: Callable[[str], str] = recording_stem
) -> dict[str, str]:
    """A distinct output stem for each file: its stem, or, where stems collide, the stem
    prefixed with its folder (relative to the colliding files' common folder), then
    suffixed with its extensions. `CassetteImportError` if names still collide."""
    by_stem: dict[str, list[str]] = defaultdict(list)
    for path in files:
        by_stem[stem_of(path)].append(path)
    names: dict[str, str] = {}
    for stem, group in by_stem.items():
        if len(group) == 1:
            names[group[0]] = stem
            continue
        folders = [os.path.dirname(os.path.abspath(path)) for path in group]
        common = os.path.commonpath(folders)
        for path, folder in zip(group, folders, strict=True):
            relative = os.path.relpath(folder, common)
            prefix = "" if relative == "." else relative.replace(os.sep, "-") + "-"
            names[path] = prefix + stem
        counts: dict[str, int] = defaultdict(int)
        for path in group:
            counts[names[path]] += 1
        for path in group:
            if counts[names[path]] > 1:
                names[path] += Path(path).name[len(stem) :].replace(".", "-")
    owners: dict[str, str] = {}
    for path, name in names.items():
        if name in owners:
            raise CassetteImportError(
                f"{owners[name]} and {path} would both be written as {name}-NN.jsonl; "
                "nothing was written (import them into separate folders)"
            )
        owners[name] = path
    return names
