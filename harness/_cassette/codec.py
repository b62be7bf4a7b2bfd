"""The cassette codec: JSON Lines files of raw stream events, read lazily, written atomically.

A cassette is UTF-8 JSON Lines, one object a line, blank lines ignored:
- line 1 may be a header, `{"cassette": 1, "description": ..., "source": ..., ...}`;
- a line with a `"harness"` key is a replay directive (`{"harness": "abort"}`);
- every other line is one raw stream event as the API's SSE `data:` field carries it,
  in the dialect the header's `provider` names (`EVENT_SCHEMAS`: Anthropic's when it
  names none); an `openai-chat` cassette holds its `data: [DONE]` as `{"harness": "done"}`.

Each line is checked against `cassette.schema.json` (shipped in this package) as it is
read: strict on the envelope (event `type`, integer `index`, required keys), free on
the payloads (`input`, `partial_json`, block and delta kinds). An unusable cassette
raises `CassetteError` (`PATH:LINE: reason`). Reading never holds more than one line,
so memory does not grow with the file, and a line longer than `MAX_LINE_BYTES` (8 MiB)
is refused at its `PATH:LINE` as soon as that much has been read (`/dev/zero` ends at
once), as is one nested deeper than `harness._json.MAX_NESTING` (254 levels), so that
whatever is read can be written, sent and printed again.

A regular file is opened afresh for each pass over its lines. Anything else (`-` for
standard input, a pipe, a FIFO, a device) is read once, lazily: each line is kept in a
spool file (in memory up to 1 MiB, then on disk) as it is read, and later passes read
the spool, so every method works on a stream that cannot be read twice.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import tempfile
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final, Literal, TypeAlias

import orjson

from harness._cassette.schema import Check, compile_check
from harness._directives import AT, DONE, HTTP_ERROR, directive_problem
from harness._exceptions import ANTHROPIC, CassetteError, InputError
from harness._files import AtomicBatch, atomic_write
from harness._json import MAX_LINE_BYTES, MAX_NESTING, deeper_than_limit, dump_line, may_be_too_deep
from harness._providers import Provider, names, provider, registry_cache
from harness._redact import redact_request

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

__all__ = [
    "AT_DIRECTIVE",
    "EVENT_SCHEMAS",
    "FORMAT_VERSION",
    "MAX_BODY_BYTES",
    "MAX_LINE_BYTES",
    "STDIN",
    "Cassette",
    "CassetteLine",
    "CassetteSource",
    "DirectiveHandler",
    "KeptCassette",
    "anthropic_only",
    "expand_paths",
    "live_api_warnings",
    "not_a_source",
    "of_provider",
    "pass_over",
    "path_list",
    "read_cassette",
    "write_cassette",
]

FORMAT_VERSION: Final = 1
SOURCES: Final = ("synthetic", "recorded", "imported")

LineKind = Literal["event", "directive"]

#: The schema definition of the event lines of the one provider whose stream may end in
#: a `done` line (`DONE`, its `data: [DONE]`): Chat Completions'.
_DONE_EVENTS: Final = "openai-chat-event"
#: The directives that are an answer without any event: an HTTP error, and a done line
#: (a Chat body of `data: [DONE]` alone, which replays to `missing_finish_reason`).
_STREAM_DIRECTIVES: Final = frozenset({HTTP_ERROR, DONE})

#: The directive a recording writes before each event: `{"harness": "at", "ms": N}`
#: (`harness._directives` defines them all).
AT_DIRECTIVE: Final = AT

#: The most one recorded answer's body may hold, decompressed (import, the proxy): 64 MiB.
MAX_BODY_BYTES: Final = 64 * 1024 * 1024
#: The path that means standard input, and how messages name it.
STDIN: Final = "-"
STDIN_NAME: Final = "<stdin>"
#: How much of a stream's spool stays in memory before it moves to a temporary file.
SPOOL_MEMORY: Final = 1024 * 1024

#: Called with each directive line's object as replay reaches it.
DirectiveHandler = Callable[[dict[str, Any]], None]


def pass_over(directive: dict[str, Any]) -> None:
    """The default directive handler: plain replay changes nothing for a directive."""


def _unreadable(error: OSError) -> str:
    """Why a cassette file cannot be read, in the words of the error line."""
    if isinstance(error, IsADirectoryError):
        return "cannot read: a folder, not a cassette file"
    return f"cannot read: {error.strerror or error}"


@dataclass(frozen=True, slots=True)
class CassetteLine:
    """One event or directive line of a cassette, with its 1-based line number."""

    number: int
    kind: LineKind
    data: dict[str, Any]


@registry_cache
def _validators() -> dict[str, Draft202012Validator]:
    # Imported here (~0.1 s): lines the fast pre-check settles never need the validator.
    from jsonschema import Draft202012Validator

    definitions = schema()["$defs"]
    return {
        name: Draft202012Validator({"$ref": f"#/$defs/{name}", "$defs": definitions})
        for name in ("header", "directive", *EVENT_SCHEMAS.values())
    }


@registry_cache
def _event_schemas() -> dict[str, str]:
    """Provider -> the schema definition its event lines match (its `events.schema.json`
    names it), in the registry's order: the header's `provider` names them."""
    return {name: provider(name).events_schema["line"] for name in names()}


class _EventSchemas(Mapping[str, str]):
    """`_event_schemas()`, read from the registry when first looked into (an entry point's
    provider included), and again after `harness._providers.reset`."""

    def __getitem__(self, name: str) -> str:
        return _event_schemas()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(_event_schemas())

    def __len__(self) -> int:
        return len(_event_schemas())

    def __repr__(self) -> str:
        return repr(_event_schemas())


def schema() -> dict[str, Any]:
    """The cassette line JSON Schema: the envelope shipped with the package
    (`cassette.schema.json`: header, directive), each registered provider's event line
    definitions merged into its `$defs`, and their names as the header's `provider` enum."""
    whole: dict[str, Any] = json.loads(
        resources.files("harness").joinpath("cassette.schema.json").read_text()
    )
    for name in names():
        whole["$defs"].update(provider(name).events_schema["$defs"])
    whole["$defs"]["header"]["properties"]["provider"]["enum"] = list(names())
    return whole


@registry_cache
def _fast_checks() -> dict[str, Check]:
    """Sound pre-checks compiled from the same schema: `True` only for a certain match."""
    definitions = schema()["$defs"]
    return {
        name: compile_check({"$ref": f"#/$defs/{name}"}, definitions)
        for name in ("header", "directive", *EVENT_SCHEMAS.values())
    }


#: The longest value a schema message quotes; a longer one is told by its length (a line
#: of megabytes may be wrong in one field).
QUOTED_LENGTH: Final = 200


def _quoted(value: object) -> str:
    shown = repr(value)
    return shown if len(shown) <= QUOTED_LENGTH else f"<{len(shown)} characters>"


def _schema_reason(kind: str, data: dict[str, Any], definition: str = "") -> str | None:
    definition = definition or kind
    if _fast_checks()[definition](data) is True:
        return None  # certain match: the full validator would accept it, and costs ~100x more
    validator = _validators()[definition]
    if validator.is_valid(data):
        return None
    error = min(validator.iter_errors(data), key=lambda e: (-len(e.absolute_path), e.message))
    where = "".join(f"[{_quoted(part)}]" for part in error.absolute_path)
    location = f"{where}: " if where else ""
    message = error.message.replace(repr(error.instance), _quoted(error.instance))
    return f"{kind} line does not match the cassette schema: {location}{message}"


def _host_problem(header: dict[str, Any]) -> str | None:
    """Why a header (the schema's match) names a `host` its provider is not served on
    (`Provider.hosted`), or None: every reader would read its lines in another framing
    than the host's, or at paths that are not its provider's."""
    host = header.get("host")
    if host is None:
        return None
    reason = provider(header.get("provider", ANTHROPIC)).not_served_on(host)
    return None if reason is None else f"host {host!r}: {reason}"


#: The providers a header's `provider` may name (Anthropic when it names none), and the
#: schema definition each one's event lines match.
EVENT_SCHEMAS: Final[Mapping[str, str]] = _EventSchemas()


def _classify(data: dict[str, Any]) -> str:
    if "cassette" in data:
        return "header"
    if "harness" in data:
        return "directive"
    return "event"


class _ReadOnce:
    """A stream read once: each line read is appended to a spool, which later passes read."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream: IO[bytes] | None = stream
        self._spool = tempfile.SpooledTemporaryFile(max_size=SPOOL_MEMORY)  # noqa: SIM115
        self._spooled = 0

    def lines(self) -> Iterator[bytes]:
        """Every line from the start, up to `MAX_LINE_BYTES + 1` bytes each."""
        offset = 0
        while True:
            if offset < self._spooled:
                self._spool.seek(offset)
                raw = self._spool.readline(MAX_LINE_BYTES + 1)
            elif self._stream is not None:
                raw = self._stream.readline(MAX_LINE_BYTES + 1)
                if not raw:
                    self._stream = None
                    return
                self._spool.seek(self._spooled)
                self._spool.write(raw)
                self._spooled += len(raw)
            else:
                return
            offset += len(raw)
            yield raw

    def close(self) -> None:
        self._spool.close()


def _is_stream(path: str) -> bool:
    """Whether `path` must be read once: standard input, or anything but a regular file."""
    if path == STDIN:
        return True
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False  # opening it will say why it cannot be read


class Cassette:
    """A cassette file: its header (read at once) and its lines (read lazily at each call;
    a stream that cannot be read twice is read once and spooled, see the module)."""

    path: str
    header: dict[str, Any] | None
    _once: _ReadOnce | None
    _dialect: Provider | None = None

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._open(path)
        for number, data in self._objects():
            if _classify(data) == "header":
                self._check(number, "header", data)
                self.header = data
            break

    def _open(self, path: str | os.PathLike[str]) -> None:
        if not isinstance(path, str | os.PathLike):
            raise not_a_source(path)
        given = os.fspath(path)
        self.path = STDIN_NAME if given == STDIN else given
        self.header = None
        self._once = None
        if _is_stream(given):
            self._once = _ReadOnce(self._open_stream(given))
            weakref.finalize(self, self._once.close)

    @property
    def description(self) -> str:
        return str((self.header or {}).get("description", ""))

    @property
    def provider(self) -> str:
        """The stream dialect its header names (`EVENT_SCHEMAS`): `anthropic` when none."""
        return str((self.header or {}).get("provider", ANTHROPIC))

    @property
    def host(self) -> str | None:
        """Where its header says it was recorded (`bedrock`, `vertex`; None: the direct
        API), the host `cassette_client` answers as by default (`harness._hosts`)."""
        found = (self.header or {}).get("host")
        return found if isinstance(found, str) else None

    @property
    def dialect(self) -> Provider:
        """The `Provider` its header names, resolved once and kept: what the plan, the
        replayer and the server ask of its dialect."""
        found = self._dialect
        if found is None or found.name != self.provider:
            found = self._dialect = provider(self.provider)
        return found

    def lines(self) -> Iterator[CassetteLine]:
        """Event and directive lines in file order; raises `CassetteError` at the first bad one."""
        seen_event = False
        number = 0
        for position, (number, data) in enumerate(self._objects()):
            kind = _classify(data)
            if kind == "header":
                if position:
                    raise CassetteError(
                        self.path, number, "a cassette header may only be on line 1"
                    )
                if self.header is None:  # a kept cassette reads it here, in its one pass
                    self._check(number, "header", data)
                    self.header = data
                continue
            self._check(number, kind, data)
            if kind == "directive":
                if data["harness"] != DONE:
                    problem = directive_problem(data)
                elif _event_schemas().get(self.provider) == _DONE_EVENTS:
                    problem = None  # its `data: [DONE]` (`DONE`)
                else:
                    owner = next(p for p, name in EVENT_SCHEMAS.items() if name == _DONE_EVENTS)
                    problem = f"a done line is data: [DONE], which only {owner} sends"
                if problem is not None:
                    raise CassetteError(self.path, number, problem)
            # An HTTP error answer stands for the whole response, and a done line is a line
            # of the stream (what a server that failed upstream may answer with alone):
            # no event is needed.
            seen_event = seen_event or kind == "event" or data["harness"] in _STREAM_DIRECTIVES
            yield CassetteLine(number, "event" if kind == "event" else "directive", data)
        if not seen_event:
            raise CassetteError(self.path, max(number, 1), "cassette holds no stream events")

    def sse(self, line: CassetteLine) -> bytes:
        """An event line as its provider's SSE framing carries it (a kept cassette caches
        it; `provider(name).framing`)."""
        return self.dialect.framing.encode(line.data)

    def events(self) -> Iterator[dict[str, Any]]:
        """The raw stream events alone, directives passed over."""
        for line in self.lines():
            if line.kind == "event":
                yield line.data

    def validate(self) -> int:
        """Check every line; return the number of event lines."""
        return sum(1 for line in self.lines() if line.kind == "event")

    def _open_stream(self, given: str) -> IO[bytes]:
        if given == STDIN:
            return sys.stdin.buffer
        try:
            stream = open(given, "rb")  # noqa: SIM115 - closed when its owner goes
        except OSError as error:
            raise CassetteError(self.path, 1, _unreadable(error)) from None
        weakref.finalize(self, stream.close)
        return stream

    def _raw_lines(self) -> Iterator[bytes]:
        """The file's lines as bytes, each cut at `MAX_LINE_BYTES + 1`."""
        if self._once is not None:
            yield from self._once.lines()
            return
        with open(self.path, "rb") as handle:
            while raw := handle.readline(MAX_LINE_BYTES + 1):
                yield raw

    def _objects(self) -> Iterator[tuple[int, dict[str, Any]]]:
        try:
            for number, raw in enumerate(self._raw_lines(), start=1):
                if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                    raise CassetteError(
                        self.path, number, f"line longer than {MAX_LINE_BYTES} bytes, the limit"
                    )
                if not raw.strip():
                    continue
                try:
                    data = orjson.loads(raw)
                except orjson.JSONDecodeError as error:
                    raise CassetteError(self.path, number, _json_reason(raw, error)) from None
                if not isinstance(data, dict):
                    kind = type(data).__name__ if data is not None else "null"
                    raise CassetteError(self.path, number, f"expected a JSON object, got {kind}")
                if may_be_too_deep(raw) and deeper_than_limit(data):
                    reason = f"nested deeper than {MAX_NESTING} levels, the limit"
                    raise CassetteError(self.path, number, reason)
                yield number, data
        except OSError as error:
            raise CassetteError(self.path, 1, _unreadable(error)) from None

    def _check(self, number: int, kind: str, data: dict[str, Any]) -> None:
        definition = _event_schemas().get(self.provider, "event") if kind == "event" else kind
        reason = _schema_reason(kind, data, definition)
        if reason is not None:
            if kind == "header" and data.get("cassette") != FORMAT_VERSION:
                reason = (
                    f"cassette format version {data.get('cassette')!r} is not supported "
                    f"(this harness reads version {FORMAT_VERSION})"
                )
        elif kind == "header":
            reason = _host_problem(data)
        if reason is not None:
            raise CassetteError(self.path, number, reason)


class KeptCassette(Cassette):
    """A cassette read whole, once, and kept: its lines and their SSE bytes, for a source
    answered again and again (a client's every retry, every test). A path is opened once,
    its header and lines read in the same pass; a `Cassette` given is read through itself
    (its header as it was read, its lines once), never reopened by its path. A bad line
    fails here, not mid-answer."""

    def __init__(self, source: CassetteSource) -> None:
        if isinstance(source, Cassette):
            self.path, self.header, self._once = source.path, source.header, None
            lines = source.lines()
        else:
            self._open(source)
            lines = super().lines()
        self._lines = list(lines)
        self._sse = {
            line.number: Cassette.sse(self, line) for line in self._lines if line.kind == "event"
        }
        #: the SSE bytes of every line, when every line is an event (no directive to obey):
        #: a stream answered as it is, piece after piece
        self.plain_sse: tuple[bytes, ...] | None = None
        if all(line.kind == "event" for line in self._lines):
            self.plain_sse = tuple(self._sse[line.number] for line in self._lines)
        if self._once is not None:
            self._once.close()  # everything is kept: the spool is not read again
            self._once = None

    def lines(self) -> Iterator[CassetteLine]:
        return iter(self._lines)

    def sse(self, line: CassetteLine) -> bytes:
        return self._sse.get(line.number) or super().sse(line)


def live_api_warnings(
    lines: Iterable[CassetteLine], provider_name: str = ANTHROPIC
) -> Iterator[tuple[int, str]]:
    """`(line, reason)` for each place a cassette's lines (`Cassette.lines()`, every one of
    them read) hold what the live API of `provider_name` would not send: legal for the
    schema, and often on purpose, but what the SDK's own readers may assume otherwise
    (the provider's `Framing.unlike_the_api`)."""
    check = provider(provider_name).framing.unlike_the_api
    if check is None:
        for _ in lines:  # read through all the same: the caller may be counting them
            pass
        return iter(())
    return check(lines)


def _json_reason(raw: bytes, error: ValueError) -> str:
    """Why a line did not parse, binary content told apart from broken JSON."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as undecodable:
        at = undecodable.start
        return f"not UTF-8 text (byte 0x{raw[at]:02x} at column {at + 1})"
    return f"not valid JSON: {error}"


#: What every function taking a cassette accepts: a path, or a `Cassette` already open.
CassetteSource: TypeAlias = "str | os.PathLike[str] | Cassette"


def anthropic_only(cassette: Cassette, reader: str) -> None:
    """Refuse, as an unusable cassette (`PATH:1: reason`), an OpenAI cassette met by a
    `reader` that replays Anthropic streams only so far (direct replay reads them all)."""
    if cassette.provider != ANTHROPIC:
        raise CassetteError(
            cassette.path,
            1,
            f"a cassette of {cassette.provider}: {reader} replays Anthropic cassettes only "
            "for now (direct replay reads it: harness replay PATH)",
        )


def of_provider(paths: Sequence[str], provider: str = ANTHROPIC) -> tuple[list[str], list[str]]:
    """`paths` (cassette files) parted, in order, into those whose header names `provider`
    and the others: what a reader of one provider's streams takes from a folder of mixed
    ones (`harness serve cassettes/`). A file whose header cannot be read counts as
    `provider`'s, so that its reader reports why."""
    kept: list[str] = []
    others: list[str] = []
    for path in paths:
        try:
            ours = Cassette(path).provider == provider
        except CassetteError:
            ours = True
        (kept if ours else others).append(path)
    return kept, others


def not_a_source(given: object) -> InputError:
    """The error for a cassette source that is neither a path nor a `Cassette`."""
    return InputError(f"a cassette is a path or a Cassette, not {type(given).__name__}")


def read_cassette(source: CassetteSource) -> Cassette:
    """Open a cassette (a `Cassette` is returned as it is): the header is read and checked
    now, the lines when iterated."""
    return source if isinstance(source, Cassette) else Cassette(source)


def path_list(paths: object) -> list[str]:
    """`paths` as a list of paths: one path alone, or a sequence of them; anything else
    is an `InputError` naming its type (a string is never read as its characters)."""
    listed = [paths] if isinstance(paths, str | os.PathLike) else paths
    if not isinstance(listed, Iterable):
        raise InputError(f"paths are a path or a sequence of them, not {type(paths).__name__}")
    found: list[str] = []
    for path in listed:
        if not isinstance(path, str | os.PathLike):
            raise InputError(f"a path is a str or an os.PathLike, not {type(path).__name__}")
        found.append(os.fspath(path))
    return found


def expand_paths(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
) -> list[str]:
    """Files as given (one path alone is a list of one); a folder means every `*.jsonl`
    file below it, recursively, sorted (a folder named `*.jsonl` is looked into, not
    read as a cassette). Anything but paths is an `InputError`: a string read as a
    sequence would be its characters, `/` among them."""
    expanded: list[str] = []
    for given in path_list(paths):
        if os.path.isdir(given):
            below = Path(given).rglob("*.jsonl")
            expanded.extend(sorted(str(found) for found in below if not found.is_dir()))
        else:
            expanded.append(given)
    return expanded


def make_header(
    description: str,
    source: str = "synthetic",
    *,
    request: Any = None,
    recorded_at: Any = None,
    **metadata: Any,
) -> dict[str, Any]:
    """A version-1 header line: the one builder of every cassette's header (record, the
    recording client, the proxy, import, the fault catalogue, `StreamBuilder`).

    `request` (a Messages request body) is kept without credentials (`redact_request`)
    and names the `model` unless `metadata` does; `recorded_at` is a `datetime` (kept as
    UTC, `...Z`, to the second) or the text a recording gave. Other `metadata`
    (`sdk_version`, `synthesized_from`, `fault`) is kept as given. (Both are typed `Any`
    so that metadata unpacked from a dict type-checks at every call.)
    """
    if source not in SOURCES:
        raise ValueError(f"source must be one of {', '.join(SOURCES)}, not {source!r}")
    header: dict[str, Any] = {"cassette": FORMAT_VERSION, "description": description}
    header["source"] = source
    if request is not None:
        if not isinstance(request, Mapping):
            raise TypeError(f"request must be a mapping, not {type(request).__name__}")
        model = request.get("model")
        if isinstance(model, str) and "model" not in metadata:
            header["model"] = model
        header["request"] = redact_request(dict(request))
    if isinstance(recorded_at, datetime):
        stamp = recorded_at.astimezone(UTC).isoformat(timespec="seconds")
        header["recorded_at"] = stamp.replace("+00:00", "Z")
    elif recorded_at is not None:
        header["recorded_at"] = recorded_at
    return {**header, **metadata}


def write_cassette(
    path: str | os.PathLike[str],
    lines: Iterable[dict[str, Any]],
    *,
    header: dict[str, Any] | None = None,
    overwrite: bool = True,
    batch: AtomicBatch | None = None,
) -> None:
    """Write a cassette atomically: a temporary file in the same folder, then a rename.

    If writing fails or is interrupted (the `lines` iterable may be a live stream), the
    temporary file is removed and whatever was at `path` stays as it was. With
    `overwrite=False` an existing `path` raises `FileExistsError`, checked at the rename.
    With a `batch`, the rename waits for the batch's commit (`AtomicBatch`). A header or
    a line that is no dict is an `InputError`, whatever was at `path` left as it was.
    """
    if header is not None and not isinstance(header, dict):
        raise InputError(f"a cassette header is a dict, not {type(header).__name__}")
    if not isinstance(lines, Iterable) or isinstance(lines, str | bytes | Mapping):
        raise InputError(f"a cassette's lines are an iterable of dicts, not {type(lines).__name__}")
    writing = atomic_write if batch is None else batch.write
    with writing(path, overwrite=overwrite) as handle:
        if header is not None:
            handle.write(dump_line(header) + b"\n")
        for number, line in enumerate(lines, 1):
            if not isinstance(line, dict):
                raise InputError(
                    f"line {number} of a cassette is a dict, not {type(line).__name__}"
                )
            handle.write(dump_line(line) + b"\n")
