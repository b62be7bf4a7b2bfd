"""Content codings decoded piece by piece: a body's pieces as sent in, as meant out.

`Inflater(coding).decode(piece)` yields the decoded bytes of one piece lazily, at most
about `CHUNK` bytes at a time, so a reader that stops at its own limit (the guard's line
limit, the proxy's cap on a recording) has held no more than that when it stops: a
compression bomb is never expanded whole. gzip and deflate are zlib's, `br` brotli's,
`zstd` zstandard's (fed a few bytes of input at a time: its decoder cannot be asked for
less output). `identity`, and a coding it does not know, pass as they are, as httpx
passes them.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from typing import IO, Final, cast

__all__ = ["CHUNK", "DECODED_CODINGS", "DecodeError", "Inflater", "normal_coding"]

#: About how many decoded bytes are handed on at a time.
CHUNK: Final = 1024 * 1024
#: The content codings `Inflater` decodes.
DECODED_CODINGS: Final = frozenset({"gzip", "x-gzip", "deflate", "br", "zstd"})
#: Bytes of zstd input written at a time: at zstd's largest ratio (a block of one byte
#: repeated), 2 MiB out at most.
_ZSTD_INPUT: Final = 64


class DecodeError(ValueError):
    """A body that its content coding cannot decode."""


def normal_coding(encoding: str) -> str:
    """A `content-encoding` value, lower-cased: `identity` when it is empty."""
    return encoding.strip().lower() or "identity"


class Inflater:
    """One body's decoder; see the module docstring."""

    def __init__(self, coding: str) -> None:
        self.coding = normal_coding(coding)
        self._out: list[bytes] = []
        if self.coding in ("gzip", "x-gzip", "deflate"):
            wbits = zlib.MAX_WBITS if self.coding == "deflate" else 16 + zlib.MAX_WBITS
            self._zlib = zlib.decompressobj(wbits)
            self.decode = self._inflate  # type: ignore[method-assign]
        elif self.coding == "br":
            import brotli

            self._brotli = brotli.Decompressor()
            self.decode = self._unbrotli  # type: ignore[method-assign]
        elif self.coding == "zstd":
            import zstandard

            sink = cast(IO[bytes], _Sink(self._out))
            self._zstd = zstandard.ZstdDecompressor().stream_writer(sink, write_size=CHUNK)
            self.decode = self._unzstd  # type: ignore[method-assign]

    def decode(self, piece: bytes | bytearray) -> Iterator[bytes]:
        """The decoded bytes of `piece`, a chunk at a time; `DecodeError` at bytes the
        coding cannot decode."""
        if piece:
            yield piece if type(piece) is bytes else bytes(piece)

    def _inflate(self, piece: bytes | bytearray) -> Iterator[bytes]:
        while piece:
            try:
                data = self._zlib.decompress(piece, CHUNK)
            except zlib.error as error:
                raise DecodeError(str(error)) from None
            piece = self._zlib.unconsumed_tail
            if data:
                yield data

    def _unbrotli(self, piece: bytes | bytearray) -> Iterator[bytes]:
        import brotli

        try:
            data = self._brotli.process(piece, output_buffer_limit=CHUNK)
            # Until nothing more comes out: brotli 1.2 may say it can accept more input
            # while output of the last is still pending.
            while data or not self._brotli.can_accept_more_data():
                if data:
                    yield data
                data = self._brotli.process(b"", output_buffer_limit=CHUNK)
        except brotli.error as error:
            raise DecodeError(str(error)) from None

    def _unzstd(self, piece: bytes | bytearray) -> Iterator[bytes]:
        import zstandard

        view = memoryview(piece)
        for start in range(0, len(piece), _ZSTD_INPUT):
            try:
                self._zstd.write(view[start : start + _ZSTD_INPUT])
            except zstandard.ZstdError as error:
                raise DecodeError(str(error)) from None
            while self._out:
                yield self._out.pop(0)


class _Sink:
    """What zstd writes to: each chunk it decompresses kept for `decode` to yield."""

    def __init__(self, out: list[bytes]) -> None:
        self._out = out

    def write(self, data: bytes) -> int:
        self._out.append(bytes(data))
        return len(data)
