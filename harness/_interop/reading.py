"""Reading a recording file safely: bounded size, whole-file compression, safe YAML, bodies.

Every recording format the importer reads (vcrpy YAML or JSON, HAR) goes through here
first. A file is read at most `MAX_FILE_BYTES`; a file compressed whole (gzip, also the
base64-wrapped gzip some serializers write, or zstd) is expanded to at most
`MAX_EXPANDED_BYTES`; YAML is read with a safe loader (no Python objects) and its
aliases may not expand to more than `MAX_NODES` nodes (an alias bomb is refused, not
expanded). A body is decoded (`gzip`, `deflate`, `br`, `zstd`) to at most
`MAX_BODY_BYTES`. Every refusal is one `CassetteImportError` line naming the file.

`Exchange` is one request and its response, format-neutral: what the vcrpy and HAR
readers produce and what the importer turns into a cassette.
"""

from __future__ import annotations

import base64
import binascii
import io
import os
import stat
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import orjson
import yaml

from harness._cassette.codec import MAX_BODY_BYTES
from harness._exceptions import CassetteImportError

__all__ = [
    "MAX_BODY_BYTES",
    "MAX_EXPANDED_BYTES",
    "MAX_FILE_BYTES",
    "MAX_NODES",
    "BodyError",
    "Exchange",
    "Unreadable",
    "decode_body",
    "first_values",
    "header_pairs",
    "is_recording_name",
    "load_document",
    "recording_stem",
]

MiB: Final = 1024 * 1024
#: The largest recording file read from disk.
MAX_FILE_BYTES: Final = 256 * MiB
#: The largest a file compressed whole may expand to.
MAX_EXPANDED_BYTES: Final = 256 * MiB
#: The largest a response body may decompress to: `harness._cassette.codec.MAX_BODY_BYTES`.
#: The most nodes a YAML document may hold once its aliases are expanded.
MAX_NODES: Final = 5_000_000


class BodyError(ValueError):
    """A body that cannot be decoded: the message says why; the interaction is skipped."""


@dataclass(frozen=True, slots=True)
class Exchange:
    """One recorded request and its response, as every recording format yields them.

    Header names are lower-cased and hold their first value. The bodies are as stored:
    `response_body` is still content-encoded when the recorder kept the wire bytes
    (`decode_body` undoes that). `request_json` and `response_json` hold the JSON some
    serializers store already parsed (pydantic-ai's `parsed_body`), in place of a body.
    """

    number: int
    method: str
    uri: str
    request_headers: dict[str, str]
    request_body: bytes | None
    request_json: Any
    status: int
    response_headers: dict[str, str]
    response_body: bytes | None
    response_json: Any
    started: str | None = None
    #: every value of each request header, a repeated one's too (`header_pairs`): the
    #: credentials the request carried, masked wherever the answer repeats one
    request_header_values: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Unreadable:
    """An interaction whose structure a reader could not make out, and why."""

    number: int
    reason: str


def header_pairs(headers: Any) -> list[tuple[str, str]]:
    """Every header's lower-cased name and value, in order, a repeated header's (or a list
    of values') each, from any recorder's shape: a mapping to a value or a list of values,
    a list of pairs, or HAR's name/value objects."""
    if isinstance(headers, dict):
        items: list[Any] = list(headers.items())
    elif isinstance(headers, list):
        items = [
            (item.get("name"), item.get("value")) if isinstance(item, dict) else item
            for item in headers
        ]
    else:
        return []
    pairs: list[tuple[str, str]] = []
    for item in items:
        if not isinstance(item, list | tuple) or len(item) != 2:
            continue
        name, values = item
        for value in values if isinstance(values, list) else [values]:
            if isinstance(value, bytes):  # botocore's headers, which vcrpy keeps as `!!binary`
                value = value.decode("utf-8", "replace")
            pairs.append((str(name).lower(), "" if value is None else str(value)))
    return pairs


def first_values(headers: Any) -> dict[str, str]:
    """Headers as a mapping of lower-cased name to first value (`header_pairs`)."""
    flat: dict[str, str] = {}
    for name, value in header_pairs(headers):
        flat.setdefault(name, value)
    return flat


def _too_big(path: str, what: str, limit: int) -> CassetteImportError:
    return CassetteImportError(f"{path}: {what} is larger than {limit // MiB} MiB; refused")


def _read_bounded(path: str) -> bytes:
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # a FIFO or a device would block or not end
            raise CassetteImportError(f"{path}: not a regular file")
        with open(path, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as error:
        raise CassetteImportError(f"{path}: cannot read: {error.strerror or error}") from None
    if len(data) > MAX_FILE_BYTES:
        raise _too_big(path, "the file", MAX_FILE_BYTES)
    return data


# -- bounded decompression ------------------------------------------------------------------


def _zlib(data: bytes, limit: int, wbits: int) -> bytes:
    out = bytearray()
    while data:
        decompressor = zlib.decompressobj(wbits)
        out += decompressor.decompress(data, limit + 1 - len(out))
        if len(out) > limit or decompressor.unconsumed_tail:
            raise OverflowError
        if not decompressor.eof:
            raise zlib.error("the compressed data is truncated")
        data = decompressor.unused_data.lstrip(b"\0")  # the next gzip member, if any
    return bytes(out)


def _gzip(data: bytes, limit: int) -> bytes:
    return _zlib(data, limit, 16 + zlib.MAX_WBITS)


def _deflate(data: bytes, limit: int) -> bytes:
    try:  # zlib-wrapped, as HTTP `deflate` means; some servers send raw deflate
        return _zlib(data, limit, zlib.MAX_WBITS)
    except zlib.error:
        return _zlib(data, limit, -zlib.MAX_WBITS)


def _brotli(data: bytes, limit: int) -> bytes:
    import brotli

    decompressor = brotli.Decompressor()
    out = decompressor.process(data, output_buffer_limit=limit + 1)
    while len(out) <= limit and not decompressor.is_finished():
        more = decompressor.process(b"", output_buffer_limit=limit + 1 - len(out))
        if not more:
            raise brotli.error("the compressed data is truncated")
        out += more
    if len(out) > limit:
        raise OverflowError
    return bytes(out)


def _zstd(data: bytes, limit: int) -> bytes:
    import zstandard

    reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data), read_across_frames=True)
    out = bytearray()
    while chunk := reader.read(limit + 1 - len(out)):
        out += chunk
        if len(out) > limit:
            raise OverflowError
    return bytes(out)


_DECODERS: Final[dict[str, Callable[[bytes, int], bytes]]] = {
    "gzip": _gzip,
    "x-gzip": _gzip,
    "deflate": _deflate,
    "br": _brotli,
    "zstd": _zstd,
}
_GZIP_MAGIC: Final = b"\x1f\x8b"
_ZSTD_MAGIC: Final = b"\x28\xb5\x2f\xfd"


def _sniffed(data: bytes) -> str | None:
    """The coding whose magic number `data` starts with (gzip and zstd have one)."""
    if data.startswith(_GZIP_MAGIC):
        return "gzip"
    if data.startswith(_ZSTD_MAGIC):
        return "zstd"
    return None


def _looks_plain(data: bytes) -> bool:
    """Whether `data` is already text an SSE or JSON body starts with (so not compressed)."""
    head = data[:64].lstrip()
    if not head:
        return True
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as error:
        if error.start < len(head) - 3:  # a character cut at the end of the sample is fine
            return False
    return head[:1] in (b"{", b"[", b":") or head.startswith((b"event", b"data", b"id:", b"retry:"))


def decode_body(body: bytes, content_encoding: str = "") -> bytes:
    """`body` with its content codings undone, at most `MAX_BODY_BYTES`; `BodyError` if not.

    A body that already reads as SSE or JSON text is taken as decoded whatever the
    header says (recorders that keep the decoded body often keep the header too); a
    gzip or zstd body is recognised by its magic number when the header is missing,
    redacted or names a coding not listed here, and brotli is tried last.
    """
    codings = [c.strip().lower() for c in content_encoding.split(",")]
    codings = declared = [c for c in codings if c in _DECODERS]  # not "identity", nor redacted
    if not codings and not _looks_plain(body):
        codings = [_sniffed(body) or "br"]  # brotli has no magic number: the last guess
    for coding in reversed(codings):
        if _looks_plain(body):
            break
        decoder = _DECODERS[coding]
        try:
            body = decoder(body, MAX_BODY_BYTES)
        except OverflowError:
            raise BodyError(
                f"the {coding} body decompresses to more than {MAX_BODY_BYTES // MiB} MiB; refused"
            ) from None
        except Exception as error:  # zlib.error, brotli.error, zstandard.ZstdError
            if coding not in declared:
                break  # a guess that failed: the body is what it is
            raise BodyError(f"the {coding} body cannot be decoded: {error}") from None
    return body


def _expanded(path: str, data: bytes) -> bytes:
    """The file's bytes with a whole-file gzip or zstd compression undone."""
    if data.startswith(b"H4sI"):  # base64 of a gzip header: a base64-wrapped gzip file
        try:
            data = base64.b64decode(data.strip(), validate=False)
        except (binascii.Error, ValueError):
            return data
    coding = _sniffed(data)
    if coding is None:
        return data
    try:
        return _DECODERS[coding](data, MAX_EXPANDED_BYTES)
    except OverflowError:
        raise _too_big(path, f"the {coding}-decompressed file", MAX_EXPANDED_BYTES) from None
    except Exception as error:
        raise CassetteImportError(f"{path}: cannot decompress ({coding}): {error}") from None


# -- safe YAML ------------------------------------------------------------------------------

_Base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _SafeLoader(_Base):  # type: ignore[misc]
    """The safe loader (no Python objects), reading the plain tags old recorders wrote."""


def _as_str(loader: Any, node: Any) -> str:
    return str(loader.construct_scalar(node))


def _as_list(loader: Any, node: Any) -> list[Any]:
    return list(loader.construct_sequence(node))


for _tag in ("unicode", "str"):
    _SafeLoader.add_constructor(f"tag:yaml.org,2002:python/{_tag}", _as_str)
_SafeLoader.add_constructor("tag:yaml.org,2002:python/tuple", _as_list)


def _node_count(root: Any, limit: int) -> int:
    """Nodes in `root` with every shared (aliased) object counted each time it is used.

    Memoised by identity, so an alias bomb is measured without being expanded; a
    recursive alias raises `RecursionError`. Iterative, so depth costs no stack.
    """
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if not isinstance(node, dict | list):
            continue
        children = list(node.values()) if isinstance(node, dict) else node
        key = id(node)
        if children_done:
            open_nodes.discard(key)
            sizes[key] = 1 + sum(sizes.get(id(child), 1) for child in children)
            if sizes[key] > limit:
                raise OverflowError
            continue
        if key in sizes:
            continue
        if key in open_nodes:
            raise RecursionError
        open_nodes.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in children if isinstance(child, dict | list))
    return sizes.get(id(root), 1)


def _yaml_reason(error: yaml.YAMLError) -> str:
    problem = getattr(error, "problem", None) or str(error).splitlines()[0]
    mark = getattr(error, "problem_mark", None)
    return f"{problem} (line {mark.line + 1})" if mark is not None else str(problem)


def _load_yaml(path: str, text: str, what: str) -> Any:
    try:
        document = yaml.load(text, Loader=_SafeLoader)
    except yaml.YAMLError as error:
        raise CassetteImportError(f"{path}: not {what}: {_yaml_reason(error)}") from None
    except RecursionError:
        raise CassetteImportError(f"{path}: not {what}: nested too deeply") from None
    try:
        # Without an anchor (`&`) no node is shared, and a document has fewer nodes than
        # its text has characters: only a text with an anchor, or longer, is counted.
        if "&" in text or len(text) > MAX_NODES:
            _node_count(document, MAX_NODES)
    except OverflowError:
        raise CassetteImportError(
            f"{path}: YAML aliases expand to more than {MAX_NODES:,} nodes (an alias bomb); refused"
        ) from None
    except RecursionError:
        raise CassetteImportError(f"{path}: a YAML alias refers to itself; refused") from None
    return document


def load_document(path: str) -> Any:
    """The JSON or YAML document of a recording file, read within the limits above."""
    text_bytes = _expanded(path, _read_bounded(path))
    what = "a HAR file" if _recording_suffix(path) == ".har" else "a vcrpy cassette"
    try:
        text = text_bytes.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise CassetteImportError(
            f"{path}: not {what}: not UTF-8 text (byte 0x{text_bytes[error.start]:02x} "
            f"at offset {error.start})"
        ) from None
    if text.lstrip().startswith(("{", "[")):
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError as error:
            raise CassetteImportError(f"{path}: not {what}: not valid JSON: {error}") from None
    return _load_yaml(path, text, what)


#: Suffixes of recordings; each may also end in `.gz` or `.zst` (compressed whole).
RECORDING_SUFFIXES: Final = (".yaml", ".yml", ".json", ".har")
COMPRESSED_SUFFIXES: Final = (".gz", ".zst")


def _recording_suffix(path: str) -> str:
    name = Path(path).name.lower()
    for compressed in COMPRESSED_SUFFIXES:
        name = name.removesuffix(compressed)
    return Path(name).suffix


def is_recording_name(path: str) -> bool:
    """Whether a file found in a folder is one the importer reads (by its name)."""
    return _recording_suffix(path) in RECORDING_SUFFIXES


def recording_stem(path: str) -> str:
    """The file's name without its recording and compression suffixes."""
    name = Path(path).name
    for compressed in COMPRESSED_SUFFIXES:
        if name.lower().endswith(compressed):
            name = name[: -len(compressed)]
    stem, dot, suffix = name.rpartition(".")
    return (stem if dot and f".{suffix.lower()}" in RECORDING_SUFFIXES else name) or "recording"
