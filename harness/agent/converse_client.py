"""`BedrockConverseModelClient`: the agent loop over Bedrock's ConverseStream, through
boto3's `bedrock-runtime` client.

The loop's messages and tool definitions become a ConverseStream request (the
provider's `conversation` module, through the registry), sent with `converse_stream`,
and the event dicts its `["stream"]` yields go through the provider's strict adapter,
the abort signal answered as `adapted` answers it (`DialectModelClient`). An exception
Bedrock ends the stream with (botocore raises it mid-iteration) is handed to the adapter
as the line it was (`reading.error_line`), so a turn fails with the API error replay
reports.

boto3 is synchronous, and its reads block: the request and the reading of its stream
run in a thread of their own (a daemon), which hands each event to the event loop
through a queue, so the loop never waits on a socket, and an abort or a cancellation is
answered at once, even while the request is being sent or the model is silent. A read in
flight cannot be stopped: closing the stream (its HTTP response) ends it, and a request
still being sent closes the stream it opens, once it has; neither the loop nor the
interpreter's exit waits for the thread. boto3 is imported only when a client is created
without one (`boto3.client("bedrock-runtime")`, its region and credentials from the
user's AWS configuration).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any, Final

from harness._providers import provider
from harness._providers.bedrock_converse.errors import PROVIDER as CONVERSE
from harness.agent.dialect import DialectModelClient

__all__ = ["DEFAULT_CONVERSE_MODEL", "BedrockConverseModelClient"]

#: A Bedrock model id (any model Converse serves; an inference profile's id or ARN too).
DEFAULT_CONVERSE_MODEL: Final = "anthropic.claude-sonnet-4-5-20250929-v1:0"
_END: Final = object()


class BedrockConverseModelClient(DialectModelClient[Any]):
    """`ModelClient` over a boto3 `bedrock-runtime` client's `converse_stream` (created
    from the user's AWS configuration when not given); `model` the `modelId`."""

    PROVIDER = CONVERSE
    DEFAULT_MODEL = DEFAULT_CONVERSE_MODEL

    def _new_sdk(self) -> Any:
        import boto3

        return boto3.client("bedrock-runtime")

    async def _open(self, params: dict[str, Any]) -> Any:
        arguments = {key: value for key, value in params.items() if key != "model"}
        send = self._sdk().converse_stream
        return _ThreadedEvents(
            lambda: send(modelId=params["model"], **arguments)["stream"],
            provider(CONVERSE).reading.error_line,
        )


class _ThreadedEvents:
    """boto3's streamed request as an async stream of its events: the request sent and
    its events read in a thread of their own, each handed to the event loop in order; a
    mid-stream exception handed on as its line (`error_line`); `close()` closes the HTTP
    response, whether the request has come back yet or not."""

    def __init__(self, request: Callable[[], Any], error_line: Callable[[Exception], Any]) -> None:
        self._request = request
        self._error_line = error_line
        self._lock = threading.Lock()
        self._stream: Any = None
        self._closed = False

    def __aiter__(self) -> AsyncIterator[Any]:
        return self._read()

    async def _read(self) -> AsyncIterator[Any]:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[Any, Exception | None]] = asyncio.Queue()

        def hand(item: Any, error: Exception | None = None) -> bool:
            if self._closed:
                return False
            try:
                loop.call_soon_threadsafe(queue.put_nowait, (item, error))
            except RuntimeError:  # the event loop is closed: no one is reading
                return False
            return True

        def pump() -> None:
            try:
                if not self._opened(self._request()):
                    return
                for event in self._stream:
                    if not hand(event):
                        return
            except Exception as error:
                hand(None, error)
            else:
                hand(_END)

        threading.Thread(target=pump, name="harness-converse-stream", daemon=True).start()
        while True:
            item, error = await queue.get()
            if error is not None:
                line = self._error_line(error)
                if line is None:
                    raise error
                yield line
                return
            if item is _END:
                return
            yield item

    def _opened(self, stream: Any) -> bool:
        """Keep the stream the request opened; closed at once if `close()` came first."""
        with self._lock:
            self._stream, closed = stream, self._closed
        if closed:
            stream.close()
        return not closed

    async def close(self) -> None:
        with self._lock:
            self._closed, stream = True, self._stream
        if stream is not None:
            stream.close()
