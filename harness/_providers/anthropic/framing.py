"""How an Anthropic cassette goes over the wire: SSE events named by their `type`.

Streamed, each event is `event: <type>`, `data: <json>` and the blank line that ends
it, as the API sends each event and the SDK needs it to emit one (`harness._providers.sse`
reads the same bytes back; a `type` that would break the line is shown printable). Not
streamed, the answer is the `Message` the events fold into (`message`), an `error`
event answering as the HTTP error it stands for. Replay reads these as `FRAMING`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Final

from harness._exceptions import APIErrorEvent
from harness._json import dump_line
from harness._providers.anthropic.message import StreamErrorEvent, message_from_events
from harness._providers.wire import Framing
from harness._terminal import printable

__all__ = ["ENDPOINT", "FRAMING", "MATCH_ON", "encode_event", "unlike_the_api"]

#: The path a Messages request is POSTed to.
ENDPOINT: Final = "/v1/messages"
#: The request fields a replayed request is compared on by default.
MATCH_ON: Final = ("model", "messages", "system", "tools")


def encode_event(event: dict[str, Any]) -> bytes:
    """One event as the API's SSE framing carries it, closing blank line included."""
    kind = printable(str(event["type"])).encode()
    return b"event: " + kind + b"\ndata: " + dump_line(event) + b"\n\n"


def _message(events: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The `Message` of the events; an `error` event as the `APIErrorEvent` of the HTTP
    error it stands for."""
    try:
        return message_from_events(events)
    except StreamErrorEvent as error:
        raise APIErrorEvent(error.body, error.status) from None


_NUMBERING: Final = (
    "the live API numbers blocks 0..n-1 in order, and messages.stream() relies on it"
)


def unlike_the_api(lines: Iterable[Any]) -> Iterator[tuple[int, str]]:
    """`(line, reason)` for each block numbered otherwise than the live API numbers them.

    Legal for the schema, and often on purpose (the library's `interleaved.jsonl` numbers
    its blocks 0, 1, 3), but the SDK's own accumulator (`messages.stream()`) assumes the
    API's numbering, blocks 0..n-1 in order, and fails on anything else.
    """
    expected, opened = 0, set[int]()
    for line in lines:
        kind = line.data.get("type")
        if kind == "message_start":
            expected, opened = 0, set()
        elif kind == "content_block_start":
            index = line.data["index"]
            if index > expected:
                yield line.number, f"block index {index} skips {expected}: {_NUMBERING}"
            elif index in opened:
                yield line.number, f"block index {index} opened again: {_NUMBERING}"
            elif index < expected:
                yield line.number, f"block index {index} out of order: {_NUMBERING}"
            opened.add(index)
            expected = max(expected, index) + 1


#: The Messages wire, as replay reads it (`provider("anthropic").framing`): served at
#: `/v1/messages` (and at its hosts' paths: `harness._hosts`).
FRAMING: Final = Framing(
    encode_event, _message, MATCH_ON, endpoints=(ENDPOINT,), unlike_the_api=unlike_the_api
)
