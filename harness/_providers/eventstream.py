"""AWS event-stream: the binary framing Bedrock streams its events in.

A message (a frame) is a prelude, its CRC, typed headers, a payload and a CRC of all
that came before it, every number big-endian:

    [total length: u32][headers length: u32][prelude CRC32: u32]
    [headers: name length u8, name, type u8, value ...][payload][message CRC32: u32]

The message CRC is CRC32 over the frame from its start to the payload's end (botocore
seeds it with the prelude's CRC over the rest, which is the same number). A header's
type says how its value is written: 0 true and 1 false (no bytes), 2 a signed byte,
3 a short, 4 an int, 5 a long, 6 bytes and 7 a UTF-8 string (a u16 length first),
8 a timestamp (a long, milliseconds), 9 a UUID (16 bytes).

`FrameDecoder` reads a body fed in pieces as botocore's `EventStreamBuffer` reads it
(the reference its tests hold it to) and refuses what botocore refuses, each as a
`FrameError` with one of two codes:
- `bad_frame`: a prelude or message CRC that does not match, a headers length over
  128 KiB or a payload over 24 MiB (botocore's limits), lengths that do not add up, a
  header of an unknown type, named twice, or not UTF-8, and one the headers end inside
  (where botocore reads what there is: a string shorter than its length says);
- `truncated_frame`: the body ends inside a frame (botocore waits for more; a body that
  ended will never bring it).
Unlike botocore's buffer, which copies what it holds at every message, the decoder reads
each byte a bounded number of times and holds at most one frame and a piece. A decoder
given `max_frame` refuses a frame longer than that too (`bad_frame`), as soon as its
prelude declares it: the readers of a peer's events (`EventDecoder`s) give 8 MiB, what an
SSE event may hold, so a huge frame is neither held nor read.

`encode_frame` writes a frame; the headers' Python types pick their wire types (bool,
int as int32 or int64, bytes, str, `uuid.UUID`).
"""

from __future__ import annotations

import struct
import sys
import uuid
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from harness._redact import excerpt
from harness._terminal import printable

__all__ = [
    "MAX_HEADERS_LENGTH",
    "MAX_PAYLOAD_LENGTH",
    "Frame",
    "FrameDecoder",
    "FrameError",
    "HeaderValue",
    "encode_frame",
    "is_sdk_frame_error",
]

#: botocore's limits: a frame declaring more is refused before its bytes are awaited.
MAX_HEADERS_LENGTH: Final = 128 * 1024
MAX_PAYLOAD_LENGTH: Final = 24 * 1024 * 1024
_PRELUDE: Final = 12
_OVERHEAD: Final = _PRELUDE + 4  # the prelude and the message CRC
_PRELUDE_FORMAT: Final = struct.Struct(">III")
_U32: Final = struct.Struct(">I")

HeaderValue = bool | int | bytes | str | uuid.UUID

#: type -> (struct format, its size) for the fixed-size values.
_FIXED: Final[dict[int, struct.Struct]] = {
    2: struct.Struct(">b"),
    3: struct.Struct(">h"),
    4: struct.Struct(">i"),
    5: struct.Struct(">q"),
    8: struct.Struct(">q"),
}


class FrameError(ValueError):
    """A body that is not event-stream frames as botocore reads them; `code` says how.

    Raised by a reader of the events in the frames (`harness._hosts.bedrock.EventDecoder`,
    ConverseStream's), `before` holds the events the same piece completed before it, as
    an `SSEFormatError`'s does (the guard hands them on first); `FrameDecoder`, whose
    frames are no events yet, leaves it empty (its `frames` hands them on one by one)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.before: list[dict[str, Any]] = []


def is_sdk_frame_error(error: BaseException) -> bool:
    """Whether `error` is botocore's refusal of a bad frame (its `ParserError`: a CRC
    mismatch, a bad length), as the SDKs that read these frames with it raise it
    (`AnthropicBedrock`, boto3). Imports nothing: botocore's is only once it is loaded."""
    found = sys.modules.get("botocore.eventstream")
    return found is not None and isinstance(error, found.ParserError)


@dataclass(frozen=True, slots=True)
class Frame:
    """One message: its headers (as botocore gives them: a UUID as its 16 bytes, a
    timestamp as its milliseconds) and its payload."""

    headers: dict[str, HeaderValue]
    payload: bytes

    @property
    def message_type(self) -> object:
        """`:message-type`: `event`, `exception` or `error` (None when absent)."""
        return self.headers.get(":message-type")

    @property
    def event_type(self) -> object:
        """`:event-type` (an event's name), or `:exception-type` (an exception's)."""
        return self.headers.get(":event-type", self.headers.get(":exception-type"))


def _header(name: str, value: HeaderValue) -> bytes:
    raw = name.encode()
    head = bytes([len(raw)]) + raw
    if value is True or value is False:
        return head + (b"\x00" if value else b"\x01")
    if isinstance(value, int):
        if -(2**31) <= value < 2**31:
            return head + b"\x04" + _FIXED[4].pack(value)
        return head + b"\x05" + _FIXED[5].pack(value)
    if isinstance(value, uuid.UUID):
        return head + b"\x09" + value.bytes
    data = value.encode() if isinstance(value, str) else bytes(value)
    kind = b"\x07" if isinstance(value, str) else b"\x06"
    return head + kind + struct.pack(">H", len(data)) + data


def encode_frame(headers: Mapping[str, HeaderValue], payload: bytes) -> bytes:
    """One frame of `headers` (in their order) and `payload`, its CRCs computed."""
    head = b"".join(_header(name, value) for name, value in headers.items())
    total = _OVERHEAD + len(head) + len(payload)
    prelude = struct.pack(">II", total, len(head))
    prelude += _U32.pack(zlib.crc32(prelude))
    body = prelude + head + payload
    return body + _U32.pack(zlib.crc32(body))


class FrameDecoder:
    """Frames out of an event-stream body fed in pieces (see the module); `max_frame`: the
    longest frame read, its total length as its prelude declares it (None: botocore's
    limits alone)."""

    def __init__(self, *, max_frame: int | None = None) -> None:
        self._max_frame = max_frame
        self._held = bytearray()
        self._count = 0  # frames read so far, to name the one at fault
        #: after each `feed`, where in that piece the last frame it completed ends: the
        #: bytes before are whole frames, those after a frame under way (-1: it completed
        #: none), as `harness._providers.sse.StreamingDecoder.rest_at` says of events
        self.rest_at = -1
        #: after each `feed`, where in that piece each frame it completed ends
        self.ends: list[int] = []

    def feed(self, piece: bytes) -> list[Frame]:
        """The frames `piece` completes; `FrameError` at the first bad one."""
        return list(self.frames(piece))

    def frames(self, piece: bytes) -> Iterator[Frame]:
        """`feed`, each frame handed on as it is read: the caller has those before a bad
        one when its `FrameError` comes (`ends` grows with them)."""
        self.rest_at = -1
        before = len(self._held)
        self._held += piece
        ends: list[int] = []
        self.ends = ends
        start = 0
        held = self._held
        size = len(held)
        while size - start >= _PRELUDE:
            total, headers_length, prelude_crc = _PRELUDE_FORMAT.unpack_from(held, start)
            self._check_prelude(held, start, total, headers_length, prelude_crc)
            if size - start < total:
                break
            frame = self._frame(memoryview(held)[start : start + total], headers_length)
            start += total
            ends.append(start - before)
            yield frame
        if start:
            del held[:start]
        if ends:
            self.rest_at = len(piece) - len(held)

    def finish(self) -> None:
        """The body ended: `truncated_frame` if it ended inside a frame."""
        if self._held:
            held, self._held = len(self._held), bytearray()
            where = "its prelude" if held < _PRELUDE else "it"
            raise FrameError(
                "truncated_frame",
                f"frame {self._count + 1}: the body ends {held} bytes into {where}",
            )

    def _check_prelude(
        self, held: bytearray, start: int, total: int, headers_length: int, prelude_crc: int
    ) -> None:
        number = self._count + 1
        computed = zlib.crc32(memoryview(held)[start : start + 8])
        if computed != prelude_crc:
            raise FrameError(
                "bad_frame",
                f"frame {number}: prelude CRC {prelude_crc:#010x} does not match its "
                f"bytes ({computed:#010x})",
            )
        if headers_length > MAX_HEADERS_LENGTH:
            raise FrameError(
                "bad_frame",
                f"frame {number}: headers of {headers_length} bytes, over the "
                f"{MAX_HEADERS_LENGTH} botocore reads",
            )
        payload = total - headers_length - _OVERHEAD
        if payload < 0:
            raise FrameError(
                "bad_frame",
                f"frame {number}: a total length of {total} cannot hold "
                f"{headers_length} bytes of headers",
            )
        if payload > MAX_PAYLOAD_LENGTH:
            raise FrameError(
                "bad_frame",
                f"frame {number}: a payload of {payload} bytes, over the "
                f"{MAX_PAYLOAD_LENGTH} botocore reads",
            )
        if self._max_frame is not None and total > self._max_frame:
            raise FrameError(
                "bad_frame",
                f"frame {number}: a frame of {total} bytes, over the {self._max_frame} "
                "an event may hold",
            )

    def _frame(self, frame: memoryview, headers_length: int) -> Frame:
        self._count += 1
        end = len(frame) - 4
        (message_crc,) = _U32.unpack_from(frame, end)
        computed = zlib.crc32(frame[:end])
        if computed != message_crc:
            raise FrameError(
                "bad_frame",
                f"frame {self._count}: message CRC {message_crc:#010x} does not match its "
                f"bytes ({computed:#010x})",
            )
        headers = self._headers(frame[_PRELUDE : _PRELUDE + headers_length])
        return Frame(headers, bytes(frame[_PRELUDE + headers_length : end]))

    def _headers(self, data: memoryview) -> dict[str, HeaderValue]:
        headers: dict[str, HeaderValue] = {}
        at, size = 0, len(data)
        try:
            while at < size:
                length = data[at]
                raw = bytes(data[at + 1 : at + 1 + length])
                if len(raw) != length:
                    raise IndexError
                name = raw.decode("utf-8")
                at += 1 + length
                kind = data[at]
                at += 1
                value: HeaderValue
                if kind in (0, 1):
                    value = kind == 0
                elif kind in _FIXED:
                    layout = _FIXED[kind]
                    (value,) = layout.unpack_from(data, at)
                    at += layout.size
                elif kind in (6, 7):
                    (length,) = struct.unpack_from(">H", data, at)
                    raw = bytes(data[at + 2 : at + 2 + length])
                    if len(raw) != length:
                        raise IndexError
                    value = raw.decode("utf-8") if kind == 7 else raw
                    at += 2 + length
                elif kind == 9:
                    value = bytes(data[at : at + 16])
                    if len(value) != 16:
                        raise IndexError
                    at += 16
                else:
                    raise FrameError(
                        "bad_frame",
                        f"frame {self._count}: header {printable(excerpt(name))} has unknown "
                        f"type {kind}",
                    )
                if name in headers:
                    raise FrameError(
                        "bad_frame",
                        f"frame {self._count}: header {printable(excerpt(name))} appears twice",
                    )
                headers[name] = value
        except (IndexError, struct.error):
            raise FrameError(
                "bad_frame", f"frame {self._count}: its headers end inside a header"
            ) from None
        except UnicodeDecodeError:
            raise FrameError(
                "bad_frame", f"frame {self._count}: a header's name or string is not UTF-8"
            ) from None
        return headers
