"""`harness bench` (j): the AWS event-stream decoder against botocore's own.

A Bedrock-shaped body (`InvokeModelWithResponseStream`: each frame a `chunk` event whose
`bytes` is a base64 Anthropic text delta, with its `p` padding) of `frames` frames, fed in
4 KiB pieces to `harness._providers.eventstream.FrameDecoder` and to botocore's
`EventStreamBuffer`, rounds interleaved, CPU time; the median round's ratio. The target
(docs/performance.md) is 1.5x botocore's time; printed, never asserted.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Callable
from typing import IO, Final

import orjson

from harness._providers.eventstream import FrameDecoder, encode_frame

__all__ = ["TARGET", "measure", "section_eventstream"]

TARGET: Final = 1.5
_PIECE: Final = 4096
_HEADERS: Final = {
    ":event-type": "chunk",
    ":content-type": "application/json",
    ":message-type": "event",
}


def body(frames: int) -> bytes:
    """`frames` frames of a Bedrock answer's text deltas."""
    delta = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta"}}
    delta["delta"]["text"] = "the capital of France "  # type: ignore[index]
    payload = orjson.dumps({"bytes": base64.b64encode(orjson.dumps(delta)).decode(), "p": "abcd"})
    return encode_frame(_HEADERS, payload) * frames


def _ours(pieces: list[bytes]) -> int:
    decoder = FrameDecoder()
    count = sum(len(decoder.feed(piece)) for piece in pieces)
    decoder.finish()
    return count


def _botocore(pieces: list[bytes]) -> int:
    from botocore.eventstream import EventStreamBuffer

    buffer = EventStreamBuffer()
    count = 0
    for piece in pieces:
        buffer.add_data(piece)
        count += sum(1 for _ in buffer)
    return count


def _cpu(read: Callable[[list[bytes]], int], pieces: list[bytes], frames: int) -> float:
    start = time.process_time()
    assert read(pieces) == frames
    return time.process_time() - start


def measure(frames: int, rounds: int) -> tuple[float, float] | None:
    """CPU seconds of each decoder, the median round's (ours, botocore's); None without
    botocore."""
    try:
        import botocore.eventstream  # noqa: F401
    except ImportError:
        return None
    whole = body(frames)
    pieces = [whole[at : at + _PIECE] for at in range(0, len(whole), _PIECE)]
    pairs = [(_cpu(_ours, pieces, frames), _cpu(_botocore, pieces, frames)) for _ in range(rounds)]
    ratios = sorted(range(rounds), key=lambda i: pairs[i][0] / pairs[i][1])
    return pairs[ratios[len(ratios) // 2]]


def section_eventstream(quick: bool, out: IO[str]) -> float | None:
    """Print the section; the ratio (ours / botocore's), None when not run."""
    frames, rounds = (2_000, 3) if quick else (20_000, 7)
    out.write(f"(j) AWS event-stream decoding, {frames:,} frames in 4 KiB pieces, CPU\n")
    measured = measure(frames, rounds)
    if measured is None:
        out.write("  skipped: botocore is not installed\n\n")
        return None
    ours, theirs = measured
    ratio = ours / theirs
    out.write(f"  FrameDecoder          {ours * 1e9 / frames:8,.0f} ns/frame\n")
    out.write(f"  botocore EventStream  {theirs * 1e9 / frames:8,.0f} ns/frame\n")
    out.write(f"  ratio                 {ratio:8.2f}x (target <= {TARGET:g}x)\n\n")
    out.flush()
    return ratio
