"""`StreamingDecoder` reads a piece that is one whole event at once (the guard's pieces):
the same events, counts and errors as line by line."""

from __future__ import annotations

import pytest

from harness._cassette.sse import SSEFormatError, StreamingDecoder

PIECES = [
    b'event: ping\ndata: {"type": "ping"}\n\n',
    b'event: x\ndata:  {"type": "two spaces"}\n\n',
    b"event: x\ndata: \n\n",
    b'event: x\r\ndata: {"type": "crlf"}\r\n\r\n',
    b'event: x\ndata: {"type": "caf\xc3\xa9"}\n\n',
    b'event: \xff\ndata: {"type": "bad event line"}\n\n',
    b'event: x\ndata: {"type": "bad data \xff"}\n\n',
    b"event: x\ndata: NaN\n\n",
    b'event: x\nid: 1\ndata: {"type": "more lines"}\n\n',
]


def _line_by_line(piece: bytes) -> object:
    decoder = StreamingDecoder()
    try:
        return [event for byte in piece for event in decoder.feed(bytes([byte]))]
    except SSEFormatError as error:
        return str(error)


@pytest.mark.parametrize("piece", PIECES, ids=range(len(PIECES)))
def test_a_whole_event_reads_as_line_by_line(piece: bytes) -> None:
    try:
        whole: object = StreamingDecoder().feed(piece)
    except SSEFormatError as error:
        whole = str(error)
    assert whole == _line_by_line(piece)
