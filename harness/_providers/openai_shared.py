"""What OpenAI's two dialects share, and nothing either decides alone.

The message prefix of their errors; a call's joined `arguments` read as its input (the
one place either parses them); an API error line as the `APIErrorEvent` replay reports
as `api_error:<name>`; a value the stream sent shown in a message; an SDK object read
back as the dict its line held; and the API's error JSON, as its error answers (and a
Chat stream's error line) carry it, with the 500 and 429 answers of both dialects' fault
rows; and how a live call is made: the SDK (`OPENAI_SDK`: the key's and base URL's environment
variables, the default base URL, `.../v1`, to which each dialect's path below `/v1` is
added) and the `Authorization: Bearer` header. Call
assembly and every rule stay in each dialect's adapter: each identifies a call its own
way (Chat: `tool_calls[].index` and `id`; Responses: `output_index` and `call_id`).
"""

from __future__ import annotations

from typing import Any, Final

from harness._events import tool_input
from harness._exceptions import APIErrorEvent, StreamProtocolError
from harness._json import strict_json
from harness._providers.fault_rows import http_error
from harness._providers.sdk import Sdk
from harness._providers.wire import ClientEnv, DirectBuilders

__all__ = [
    "API_KEY_VARIABLE",
    "BASE_URL_VARIABLE",
    "CLIENT_ENV",
    "DEFAULT_BASE_URL",
    "HTTP_429",
    "HTTP_500",
    "OPENAI_PROTOCOL_ERROR_PREFIX",
    "OPENAI_SDK",
    "api_error",
    "auth_headers",
    "call_input",
    "direct_builders",
    "error_answer",
    "error_body",
    "error_line",
    "error_status",
    "shown",
    "wire_dict",
]

OPENAI_PROTOCOL_ERROR_PREFIX: Final = "OpenAI stream protocol error: "
#: The environment variables the `openai` SDK reads: the key, the base URL (below `/v1`).
API_KEY_VARIABLE: Final = "OPENAI_API_KEY"
BASE_URL_VARIABLE: Final = "OPENAI_BASE_URL"
CLIENT_ENV: Final = ClientEnv(BASE_URL_VARIABLE, API_KEY_VARIABLE, "/v1")
#: The base URL the SDK calls without one: each path is added to it below `/v1`.
DEFAULT_BASE_URL: Final = "https://api.openai.com/v1"
#: The SDK both dialects are read with (their `client` modules' `SDK`): an extra's.
OPENAI_SDK: Final = Sdk(
    "openai",
    ("OpenAI", "AsyncOpenAI"),
    DEFAULT_BASE_URL,
    CLIENT_ENV,
    extra="openai",
    label="OpenAI",
    flat_error_body=True,
)


def auth_headers(api_key: str) -> dict[str, str]:
    """The headers a live call carries its key in, as the SDK sends it."""
    return {"authorization": f"Bearer {api_key}"}


def call_input(arguments: str, index: int, provider: str) -> dict[str, Any]:
    """A call's joined `arguments` as its input: `{}` when they are empty (a zero-argument
    call), else strict JSON (`NaN` is not JSON) that must be an object."""
    if not arguments:
        return {}
    try:
        value = strict_json(arguments)
    except (ValueError, RecursionError):
        raise StreamProtocolError("invalid_tool_json", provider=provider, index=index) from None
    return tool_input(value, index, provider=provider)


def carries_error(line: dict[str, Any]) -> bool:
    """Whether a line is the API's error: the SDK raises at any line whose `error` is set,
    whatever else it holds (OpenRouter and Groq send `choices` beside it)."""
    return bool(line.get("error"))


def api_error(details: object, name: object, line: dict[str, Any]) -> APIErrorEvent:
    """The API's error in a stream, as the Anthropic path reports one replayed without the
    SDK: an `APIErrorEvent` on a 200 answer whose body's `error.type` is `name` (so that
    `failure_code` gives `api_error:<name>`) and `error.message` the API's message; the
    line itself is kept under `line`."""
    error = dict(details) if isinstance(details, dict) else {}
    error["type"] = name if isinstance(name, str) and name else "error"
    if not isinstance(error.get("message"), str):
        error["message"] = "An error occurred during streaming"  # the SDK's own words
    return APIErrorEvent({"error": error, "line": line}, 200)


#: The HTTP status OpenAI's API answers with for an error of each `type` (or `code`).
_STATUS_OF_ERROR: Final = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "invalid_api_key": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "rate_limit_exceeded": 429,
    "rate_limit_error": 429,
    "insufficient_quota": 429,
    "server_error": 500,
    "service_unavailable": 503,
}


def error_status(details: object) -> int:
    """The HTTP status a non-streaming request gets for a stream's API error (its `type`,
    else its `code`, looked up; 500 for any other)."""
    if not isinstance(details, dict):
        return 500
    for key in ("type", "code"):
        status = _STATUS_OF_ERROR.get(str(details.get(key)))
        if status is not None:
            return status
    return 500


def shown(value: object) -> str:
    """A value the stream sent where a message names it (an index, a choice): `null` for
    a missing one, any other as Python shows it, so the message still matches its pattern."""
    return "null" if value is None else repr(value)


def wire_dict(item: Any) -> Any:
    """A line's object as the adapters read it: a dict as it is, an SDK object (pydantic,
    read by duck typing, never by class) as the dict its line held (`to_dict()` keeps the
    fields the line set, under their API names; a value of another type than the SDK
    declares, a list `content`, kept without pydantic's warning: the adapter judges it);
    anything else as it is."""
    if type(item) is dict:
        return item
    to_dict = getattr(item, "to_dict", None)
    return to_dict(warnings=False) if callable(to_dict) else item


def error_body(error_type: str, message: str, code: str | None = None) -> dict[str, Any]:
    """The API's error JSON, as both APIs answer an error (and a Chat stream's error line
    holds it): `{"error": {"message", "type", "param", "code"}}`."""
    return {"error": {"message": message, "type": error_type, "param": None, "code": code}}


def error_answer(status: int, message: str) -> dict[str, Any]:
    """The error JSON both APIs answer a request they refuse with (`harness serve`'s
    own refusals): a 5xx is a `server_error`, any other an `invalid_request_error`."""
    return error_body("server_error" if status >= 500 else "invalid_request_error", message)


_REQUEST_ID: Final = {"x-request-id": "req_HarnessFaultCatalogue"}
#: The SDK honours `x-should-retry: false` first: the 500 reaches the code at once.
HTTP_500: Final = http_error(
    500,
    error_body("server_error", "The server had an error while processing your request."),
    {**_REQUEST_ID, "x-should-retry": "false"},
)
#: A retry-after of 1 ms, which the SDK obeys.
HTTP_429: Final = http_error(
    429,
    error_body("requests", "Rate limit reached for requests", "rate_limit_exceeded"),
    {**_REQUEST_ID, "retry-after-ms": "1", "x-should-retry": "true"},
)


def error_line(error: Exception) -> dict[str, Any] | None:
    """The error line the `openai` SDK raised `error` for mid-stream (its `APIError`,
    neither a status error nor a connection's), as the line it was (`{"error": body}`), to
    hand the adapter as direct replay feeds it; None for any other error."""
    loaded = OPENAI_SDK.loaded()
    if loaded is None or isinstance(error, loaded.APIStatusError | loaded.APIConnectionError):
        return None
    if isinstance(error, loaded.APIError):
        return {"error": error.body}
    return None


def _line(data: dict[str, Any]) -> dict[str, Any]:
    return data


def _http_error(body: Any, status: int | None = None, headers: Any = None) -> APIErrorEvent:
    return APIErrorEvent(body, 200 if status is None else status)


def direct_builders(done: object = None) -> DirectBuilders:
    """What direct replay feeds an OpenAI adapter: each line's dict as it is (the adapters
    read dicts, no SDK object is built), an `http_error` line raised as `APIErrorEvent`,
    a `done` line as `done` (Chat's `[DONE]`)."""
    return DirectBuilders(_line, _http_error, done)
