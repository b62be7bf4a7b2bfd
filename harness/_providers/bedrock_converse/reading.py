"""boto3's reader of a ConverseStream, as the event dicts it hands the adapter.

`create`: `client.converse_stream(modelId=..., messages=...)["stream"]`, whose iteration
yields each event as a dict of one key (botocore's event-stream parser: Bedrock's `p`
padding and any field its service model does not know dropped, an event of a name it
does not know skipped). An exception frame is raised mid-stream as botocore's
`EventStreamError`, whose code is the exception's name: `error_line` hands it back as
the line it was (`{"throttlingException": {"message": ...}}`), so the outcome is the
`api_error:<name>` direct replay gives. An HTTP error answer before the stream is
botocore's `ClientError`, raised here as the `APIErrorEvent` of its code and message. An
event its service model forbids (a `reasoningContent` delta with no member set, a
`toolUse` start that is no object) is refused by botocore's parser (its
`ResponseParserError`, or whatever its code raises over it): a stream failure,
`connection_error:<its class>`, as any SDK's refusal of what it was served is
(`harness._replay.readers`), not a bug.
boto3 has no async client: `acreate_items` reads the sync one (the driver is then the
async one). Nothing here imports boto3: the client is given.

Direct replay feeds the adapter the lines' dicts (`direct_builders`), an `http_error`
line raised as `APIErrorEvent`. `USER_READERS` is how a user's code reads a stream
(`converse_stream()["stream"]` iterated to its end, as boto3 raises), and `SAMPLES` the
library's good cassettes it is served the fault rows of (`harness doctor`,
`harness._testing.sdk_behaviour`).
"""

from __future__ import annotations

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
]

#: The SDK's one reader of a stream: the iteration of `converse_stream()["stream"]`.
READERS: Final = ("create",)
#: The request every replay sends (the transport answers it from the cassette).
REQUEST: Final[dict[str, Any]] = {
    "modelId": "harness-replay",
    "messages": [{"role": "user", "content": [{"text": "replay"}]}],
}
#: What the driver is told: nothing (the stream has no end sentinel).
DRIVER_OPTIONS: Final[dict[str, Any]] = {}
#: The library's good cassettes (a text answer, one with tool calls) `USER_READERS` are
#: served the fault rows of, under the harness's cassette library.
SAMPLES: Final = ("bedrock/converse/text.jsonl", "bedrock/converse/two_tools.jsonl")


def _client_error(error: Exception) -> APIErrorEvent | None:
    """botocore's `ClientError` for an HTTP error answer, as the `APIErrorEvent` of its
    code and message; None for any other error (an `EventStreamError` included)."""
    response = getattr(error, "response", None)
    if type(error).__name__ == "EventStreamError" or not isinstance(response, dict):
        return None
    details = response.get("Error") or {}
    status = (response.get("ResponseMetadata") or {}).get("HTTPStatusCode") or 500
    body: dict[str, object] = {
        "error": {"type": str(details.get("Code")), "message": str(details.get("Message"))}
    }
    return APIErrorEvent(body, int(status))


def create_items(client: Any) -> Iterator[Any]:
    """The events of `converse_stream()["stream"]`."""
    try:
        answer = client.converse_stream(**REQUEST)
    except Exception as error:
        found = _client_error(error)
        if found is None:
            raise
        raise found from error
    yield from answer["stream"]


async def acreate_items(client: Any) -> AsyncIterator[Any]:
    """`create_items` for the async driver (boto3's client is sync)."""
    for item in create_items(client):
        yield item


def error_line(error: Exception) -> dict[str, Any] | None:
    """The exception line botocore raised `error` for mid-stream (its `EventStreamError`),
    as the line it was; None for any other error."""
    if type(error).__name__ != "EventStreamError":
        return None
    details = getattr(error, "response", {}).get("Error") or {}
    return {str(details.get("Code")): {"message": str(details.get("Message", ""))}}


def _line(data: dict[str, Any]) -> dict[str, Any]:
    return data


def _error_code(body: dict[str, Any], status: int | None, headers: Any) -> str:
    """The code botocore gives an HTTP error (its rest-json parser): the
    `x-amzn-errortype` header, else the body's `code` (or `Code`), else its `__type`,
    else the status as text; `Name:detail` and `namespace#Name` read as `Name`."""
    found = {str(name).lower(): value for name, value in dict(headers or {}).items()}
    code = found.get("x-amzn-errortype")
    if code is None:
        code = body.get("code", body.get("Code", body.get("__type")))
    if code is None:
        code = str(status) if status else "error"
    return str(code).split(":", 1)[0].rpartition("#")[2]


def _http_error(body: Any, status: int | None = None, headers: Any = None) -> APIErrorEvent:
    """An `http_error` line as the error replay reports: Bedrock's body (`message`, its
    code where botocore finds it, `_error_code`) read as `{"error": {"type", "message"}}`."""
    if isinstance(body, dict) and "error" not in body:
        kind = _error_code(body, status, headers)
        body = {"error": {"type": kind, "message": str(body.get("message", ""))}}
    return APIErrorEvent(body, 200 if status is None else status)


def direct_builders(sdk_objects: bool) -> DirectBuilders:
    """What direct replay feeds the adapter: each line's dict (whatever `sdk_objects`
    says: boto3's events are dicts), an `http_error` line raised as `APIErrorEvent`."""
    return DirectBuilders(_line, _http_error)


def _drain(client: Any) -> None:
    for _ in client.converse_stream(**REQUEST)["stream"]:
        pass


#: Reader name -> how a user's code reads the stream with a client: boto3's own errors
#: (`ClientError`, `EventStreamError`) raised as boto3 raises them.
USER_READERS: Final[dict[str, Callable[[Any], None]]] = {"converse_stream()": _drain}
