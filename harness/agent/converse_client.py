"""`BedrockConverseModelClient`: the agent loop over Bedrock's ConverseStream, through
boto3's `bedrock-runtime` client.

The loop's messages and tool definitions become a ConverseStream request (the
provider's `conversation` module, through the registry), sent with `converse_stream`,
and the event dicts its `["stream"]` yields go through the provider's strict adapter,
the abort signal answered as `adapted` answers it (`DialectModelClient`). An exception
Bedrock ends the stream with (botocore raises it mid-iteration) is handed to the adapter
as the line it was (`reading.error_line`), so a turn fails with the API error replay
reports.

boto3 is synchronous, and its reads block: the request, and each next event, are run
in a worker thread (`asyncio.to_thread`), so the event loop never waits on a socket and
an abort or a cancellation is answered at once. The read in flight cannot be stopped; it
is abandoned, and closing the stream (its HTTP response) ends it. A task cancelled while
the request is being sent closes the stream the request opens, once it has. boto3 is
imported only when a client is created without one (`boto3.client("bedrock-runtime")`,
its region and credentials from the user's AWS configuration).
"""

from __future__ import annotations

import asyncio
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
        answer = await _off_the_loop(lambda: send(modelId=params["model"], **arguments))
        return _ThreadedEvents(answer["stream"], provider(CONVERSE).reading.error_line)


async def _off_the_loop(call: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """`call()` (the request) in a worker thread. Cancelled before it returns, the
    answer's stream is closed when it does come (nothing else would close it)."""
    future = asyncio.get_running_loop().run_in_executor(None, call)
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        future.add_done_callback(_close_late_answer)
        raise


def _close_late_answer(future: asyncio.Future[dict[str, Any]]) -> None:
    if future.cancelled() or future.exception() is not None:
        return  # the failure is moot: no one awaits it any more
    future.result()["stream"].close()


class _ThreadedEvents:
    """boto3's event stream as an async one: each next event read in a worker thread; a
    mid-stream exception handed on as its line; `close()` closes the HTTP response."""

    def __init__(self, stream: Any, error_line: Callable[[Exception], Any]) -> None:
        self._stream = stream
        self._events = iter(stream)
        self._error_line = error_line

    def __aiter__(self) -> AsyncIterator[Any]:
        return self._read()

    async def _read(self) -> AsyncIterator[Any]:
        while True:
            try:
                event = await asyncio.to_thread(next, self._events, _END)
            except Exception as error:
                line = self._error_line(error)
                if line is None:
                    raise
                yield line
                return
            if event is _END:
                return
            yield event

    async def close(self) -> None:
        self._stream.close()
