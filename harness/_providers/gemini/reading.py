"""google-genai's reader of a Gemini stream, as the chunks it hands the adapter.

`create`: `client.models.generate_content_stream(...)` (`client.aio.models...` for the
async face), whose iteration yields each `GenerateContentResponse`; each is handed on as
the dict its chunk held on the wire (camelCase, the fields it set: `wire_chunk`). The
request is a minimal one the replay transport answers from the cassette. Nothing here
imports the SDK. Direct replay feeds the adapter the lines' dicts (`direct_builders`);
an error the SDK raised mid-stream (its `APIError` for an `{"error": ...}` chunk) is
handed back as that chunk (`error_line`). A chunk its types forbid (pydantic's
`ValidationError` for a `GenerateContentResponse`, a `finishReason` that is no string)
is google-genai refusing the stream, as any SDK's refusal of what it was served is
(`harness._replay.readers`): a stream failure, `connection_error:<its class>`.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, Final

from harness._exceptions import APIErrorEvent
from harness._providers.wire import DirectBuilders

__all__ = [
    "DRIVER_OPTIONS",
    "READERS",
    "REQUEST",
    "SAMPLES",
    "USER_READERS",
    "acreate_items",
    "create_items",
    "direct_builders",
    "error_line",
    "wire_chunk",
]

#: The SDK's readers of a stream: the iteration of `generate_content_stream`.
READERS: Final = ("create",)
#: The request every replay sends (the transport answers it from the cassette).
REQUEST: Final = {"model": "harness-replay", "contents": "replay"}
#: What the adapter's driver is given: nothing more.
DRIVER_OPTIONS: Final[dict[str, Any]] = {}
#: The library's good cassettes the readers are served the fault rows of (a text answer,
#: calls with and without the API's ids, a call whose arguments are streamed).
SAMPLES: Final = (
    "gemini/text.jsonl",
    "gemini/parallel_tools.jsonl",
    "gemini/streamed_arguments.jsonl",
)


def wire_chunk(response: Any) -> Any:
    """A `GenerateContentResponse` as the dict its chunk held (camelCase, unset fields
    left out); a dict as it is."""
    if isinstance(response, dict):
        return response
    dump = getattr(response, "model_dump", None)
    if dump is None:
        return response
    found = dump(mode="json", by_alias=True, exclude_none=True)
    found.pop("sdkHttpResponse", None)
    return found


def create_items(client: Any) -> Iterator[Any]:
    """The chunks of `models.generate_content_stream`."""
    for response in client.models.generate_content_stream(**REQUEST):
        yield wire_chunk(response)


async def acreate_items(client: Any) -> AsyncIterator[Any]:
    """`create_items` through the client's async face (`client.aio`)."""
    face = getattr(client, "aio", client)
    async for response in await face.models.generate_content_stream(**REQUEST):
        yield wire_chunk(response)


def _line(data: dict[str, Any]) -> dict[str, Any]:
    return data


def _http_error(body: Any, status: int | None = None, headers: Any = None) -> APIErrorEvent:
    """An `http_error` line's answer, its error named by its `status` (`INTERNAL`), as
    `api_error:<status>` reports it and the adapter names an error chunk."""
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and "type" not in error and isinstance(error.get("status"), str):
        body = {**body, "error": {**error, "type": error["status"]}}
    return APIErrorEvent(body, 200 if status is None else status)


def direct_builders(sdk_objects: bool) -> DirectBuilders:
    """What direct replay feeds the adapter: each line's dict (the adapter reads dicts;
    the SDK is never imported for it), an `http_error` line raised as `APIErrorEvent`."""
    return DirectBuilders(_line, _http_error)


def error_line(error: Exception) -> dict[str, Any] | None:
    """The `{"error": ...}` chunk google-genai raised its `APIError` for mid-stream (a
    200 answer), to hand the adapter as direct replay feeds it; None for any other."""
    errors = sys.modules.get("google.genai.errors")
    api_error = getattr(errors, "APIError", None)
    if api_error is None or not isinstance(error, api_error):
        return None
    details = error.details if isinstance(error.details, dict) else {}
    found = details.get("error")
    return {"error": found} if isinstance(found, dict) else None


def _drain(client: Any) -> None:
    for _ in client.models.generate_content_stream(**REQUEST):
        pass


#: Reader name -> how a user's code reads the stream with a client.
USER_READERS: Final[dict[str, Callable[[Any], None]]] = {
    "models.generate_content_stream()": _drain,
}
