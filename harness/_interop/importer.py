"""`harness import`: recordings users already keep (vcrpy, HAR) to cassettes.

Each exchange that is a call of a provider's API (`harness._interop.dialects.for_call`,
by method and path, on any host: Anthropic's `POST .../v1/messages` and Vertex's
`:rawPredict` / `:streamRawPredict`, OpenAI's `POST .../chat/completions` and
`.../responses` and the Responses resume `GET`) becomes one cassette (`source:
imported`, the header naming its `provider` when it is not Anthropic):

- answered 200 with an SSE body: its lines, as the provider's SDK reads the body;
- answered 200 with a JSON answer (a non-streaming call): the lines a stream of that
  answer carries, synthesised by the dialect, the header saying `synthesized_from: message`;
- answered with an HTTP error, for a dialect that keeps them (OpenAI's): its
  `http_error` line (status, `retry-after`-like headers, the error JSON).

Every other exchange is listed with the reason it was skipped; the report names it by
its redacted URI. Only the lines (credential-like fields removed at any depth, as the
proxy and record keep them, and the credentials the recorded request carried masked
wherever the answer repeats them), the request body (credential-like fields removed at
any depth, `harness._redact`), the model, the SDK version (`x-stainless-package-version`,
kept only when it reads as a version) and the response date are kept: no other header is
copied. A stream and a plain answer are told apart by the body (a JSON object, or SSE
fields), not by `content-type`, since some recorders redact every header value. What a
body means is each dialect's; this module spells no event type.

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

from harness._cassette.codec import EVENT_SCHEMAS, _schema_reason, make_header, write_cassette
from harness._directives import CUT, DONE, HTTP_ERROR
from harness._exceptions import ANTHROPIC, CassetteImportError, InputError, OutputError
from harness._files import AtomicBatch
from harness._hosts import Hosted
from harness._interop.dialects import NOT_A_CALL, Dialect, Line, for_call, hosted_call
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
from harness._providers.eventstream import FrameError
from harness._providers.frame_rows import Framed
from harness._providers.sse import unfinished_event
from harness._redact import credentials, kept_line, mask, mask_text, redact_request, redact_uri

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


def _decoded_body(exchange: Exchange) -> bytes:
    if not exchange.response_body:
        raise _Skip("the response has no body")
    encoding = exchange.response_headers.get("content-encoding", "")
    try:
        return decode_body(exchange.response_body, encoding)
    except BodyError as error:
        raise _Skip(str(error)) from None


def _answer_lines(dialect: Dialect, answer: Any) -> list[Line]:
    try:
        return dialect.answer_lines(answer)
    except ValueError as error:  # the dialect's reason
        raise _Skip(str(error)) from None


def _stream_lines(dialect: Dialect, body: bytes) -> tuple[list[Line], int]:
    """An SSE body's lines, and how many bytes of an event no blank line ended it ends in
    (0: none). A body cut mid-event is read up to that event: the rest is its cut."""
    cut = unfinished_event(body)
    if cut and cut == len(body):
        raise _Skip(f"the body ends {cut} bytes into its first event, before any event ended")
    try:
        return dialect.stream_lines(body[: len(body) - cut]), cut
    except ValueError as error:  # SSEFormatError, or the dialect's reason
        raise _Skip(f"unreadable stream: {error}") from None


_PRELUDE: Final = 12


def _frame_lines(frames: Framed, body: bytes) -> tuple[list[Line], int | None]:
    """A body of event-stream frames read a frame at a time (the host's or the dialect's
    reader: `Framed`), and where it broke: None (it did not), 0 at a bad frame, else how
    many bytes of a frame the body ends inside. The lines before a break are kept."""
    reader = frames.decoder()
    lines: list[Line] = []
    at = 0
    while at < len(body):
        total = int.from_bytes(body[at : at + 4], "big") if len(body) - at >= 4 else 0
        piece = body[at : at + max(total, _PRELUDE)]
        try:
            lines += reader.feed(piece)
            if len(piece) < max(total, _PRELUDE):
                reader.finish()
        except FrameError as error:
            if not lines:
                raise _Skip(f"unreadable frames: {error}") from None
            return lines, len(piece) if error.code == "truncated_frame" else 0
        at += len(piece)
    return lines, None


def _body_lines(
    exchange: Exchange, dialect: Dialect, frames: Framed | None = None
) -> tuple[list[Line], bool, int | None]:
    """The lines of a 200 answer, whether they were synthesised from a plain answer, and
    where a streamed body was cut: how many bytes into an unfinished event (or frame),
    0 at a bad frame, None where it was not.

    A body that is a JSON object is a plain answer; any other is SSE (it starts with a
    field or a comment), or event-stream frames where the call's host or dialect sends
    them (`frames`).
    """
    if exchange.response_json is not None:
        return _answer_lines(dialect, exchange.response_json), True, None
    body = _decoded_body(exchange)
    if body.lstrip().startswith(b"{"):
        try:
            answer = orjson.loads(body)
        except orjson.JSONDecodeError:
            raise _Skip("the JSON body is not valid JSON") from None
        return _answer_lines(dialect, answer), True, None
    if frames is not None:
        lines, broke = _frame_lines(frames, body)
        return lines, False, broke
    lines, cut = _stream_lines(dialect, body)
    if not lines:
        content_type = exchange.response_headers.get("content-type", "")
        raise _Skip(f"not a stream nor {dialect.answer} (content-type {content_type or 'missing'})")
    return lines, False, cut or None


#: Response headers an `http_error` line keeps: what a client's retry reads, and the one
#: an AWS SDK reads the error's code from (`x-amzn-errortype`), nothing else.
_ERROR_HEADERS: Final = ("retry-after", "retry-after-ms", "x-should-retry", "x-amzn-errortype")


def _secrets(exchange: Exchange) -> tuple[str, ...]:
    """The credentials the recorded request carried (unless its recorder dropped them: its
    headers, query, JSON body fields), masked wherever the answer repeats them."""
    headers = exchange.request_header_values or exchange.request_headers
    return credentials(headers, exchange.uri, body=_request_json(exchange))


def _kept(line: dict[str, Any], secrets: tuple[str, ...]) -> dict[str, Any]:
    """A line as the cassette keeps it (`kept_line`); `_Skip` past the nesting limit."""
    try:
        return kept_line(line, secrets)
    except ValueError as error:
        raise _Skip(str(error)) from None


def _http_error(exchange: Exchange, secrets: tuple[str, ...]) -> dict[str, Any]:
    """The `http_error` line of an error answer (its status, the headers a retry reads,
    its JSON body redacted, `secrets` masked in both); `_Skip` when it cannot be one."""
    if not 400 <= exchange.status <= 599:
        raise _Skip(f"status {exchange.status}")
    body = exchange.response_json
    if body is None:
        try:
            body = orjson.loads(_decoded_body(exchange))
        except orjson.JSONDecodeError:
            raise _Skip(f"status {exchange.status}, its body not JSON") from None
    if not isinstance(body, dict):
        raise _Skip(f"status {exchange.status}, its body not a JSON object")
    headers = {
        name: mask_text(exchange.response_headers[name], secrets)
        for name in _ERROR_HEADERS
        if name in exchange.response_headers
    }
    line = _kept({"harness": HTTP_ERROR, "status": exchange.status, "body": body}, secrets)
    return {**line, "headers": headers} if headers else line


def _lines(
    exchange: Exchange, dialect: Dialect, secrets: tuple[str, ...], frames: Framed | None = None
) -> tuple[list[dict[str, Any]], str]:
    """A call's cassette lines (events and directives), `secrets` masked in them, and what
    kind of answer it had: `streamed`, `plain` (its lines synthesised) or `error`."""
    if exchange.status != 200:
        if not dialect.http_errors:
            raise _Skip(f"status {exchange.status}")
        return [_http_error(exchange, secrets)], "error"
    read, synthesized, cut = _body_lines(exchange, dialect, frames)
    definition = EVENT_SCHEMAS[dialect.provider]
    lines: list[dict[str, Any]] = []
    for number, line in enumerate(read, 1):
        if isinstance(line, bytes):  # the dialect's sentinel (Chat's `[DONE]`)
            lines.append({"harness": DONE})
            continue
        line = _kept(line, secrets)
        reason = _schema_reason("event", line, definition)  # a `harness` key is refused
        if reason is not None:
            raise _Skip(mask_text(f"event {number}: {reason}", secrets))
        lines.append(line)
    if cut:  # the connection dropped `cut` bytes into the next event, as a fault cuts one
        lines.append({"harness": CUT, "after_bytes": cut})
    elif cut == 0:  # a bad frame: the stream is cut there
        lines.append({"harness": CUT})
    return lines, "plain" if synthesized else "streamed"


def _request_json(exchange: Exchange) -> Any:
    """The request's JSON body (None: none, or not JSON)."""
    if exchange.request_json is not None or not exchange.request_body:
        return exchange.request_json
    try:
        return orjson.loads(exchange.request_body)
    except orjson.JSONDecodeError:
        return None


def _request(exchange: Exchange, secrets: tuple[str, ...]) -> dict[str, Any]:
    request = _request_json(exchange)
    if not isinstance(request, dict):
        return {}
    kept: dict[str, Any] = mask(redact_request(request), secrets)
    return kept


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
    path: str,
    exchange: Exchange,
    dialect: Dialect,
    lines: list[dict[str, Any]],
    kind: str,
    secrets: tuple[str, ...],
    hosted: Hosted | None = None,
) -> dict[str, Any]:
    request = dialect.request_of(exchange.method.upper(), exchange.uri, _request(exchange, secrets))
    if hosted is not None:  # the model (and `stream`) its path carries, in the body
        request = hosted.direct_request(request)
    model = request.get("model") or (dialect.model_of(lines) if kind != "error" else None)
    metadata: dict[str, Any] = {}
    if dialect.provider != ANTHROPIC:
        metadata["provider"] = dialect.provider
    if hosted is not None:
        metadata["host"] = hosted.host.name
    elif dialect.host_of is not None and (named := dialect.host_of(_path(exchange.uri))):
        metadata["host"] = named  # where the dialect's own path says it was served
    if isinstance(model, str):
        metadata["model"] = model
    sdk_version = exchange.request_headers.get("x-stainless-package-version", "")
    if _VERSION.fullmatch(sdk_version):
        metadata["sdk_version"] = sdk_version
    if kind == "plain":
        metadata["synthesized_from"] = "message"
    what = {
        "streamed": f"a streamed {dialect.call} call",
        "plain": f"a non-streaming {dialect.call} call",
        "error": f"a {dialect.call} call answered {exchange.status}",
    }[kind]
    description = f"Imported from {path}, exchange {exchange.number}: {what}"
    return make_header(
        description,
        "imported",
        request=request,
        recorded_at=_recorded_at(exchange),
        **metadata,
    )


def _path(uri: str) -> str:
    try:
        return urlsplit(uri).path
    except ValueError:
        return ""


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
    for given, what in ((path, "path"), (out_dir, "out_dir")):
        if not isinstance(given, str | os.PathLike):
            raise InputError(f"import_recording: {what} is a path, not {type(given).__name__}")
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
        secrets: tuple[str, ...] = ()
        try:
            secrets = _secrets(exchange)  # masked in what is written, and in a reason
            found = hosted_call(exchange.method, exchange.uri)
            hosted = None if found is None else found[1]
            dialect = for_call(exchange.method, exchange.uri) if found is None else found[0]
            if dialect is None:
                raise _Skip(NOT_A_CALL)
            frames = dialect.frames if hosted is None else hosted.host.frames
            if hosted is not None and not hosted.stream:
                frames = None  # a plain call's answer is JSON on every host
            lines, kind = _lines(exchange, dialect, secrets, frames)
            header = _header(path, exchange, dialect, lines, kind, secrets, hosted)
            write_cassette(target, lines, header=header, overwrite=force, batch=batch)
        except _Skip as reason:  # it may quote what the answer repeated of the request
            said = mask_text(str(reason), secrets)
            report.skipped.append(f"{label}: {_shown(said)}")
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
        report.written.append((target, sum("harness" not in line for line in lines)))
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
