"""The guard's error as the SDK's own: a `StreamProtocolError` that is also the SDK's `APIError`.

Why: an SDK reads the body of a stream inside a `try` of its own, and what that `try`
wraps changes from release to release. anthropic 2.17 turns any exception raised while
it reads a body into its `APIConnectionError` (a timeout into `APITimeoutError`);
earlier releases let it through; the openai SDK wraps only the HTTP library's errors
there, and retries and wraps what the HTTP client raises before the answer is returned.
What every release of both does alike is let its own errors through as they are,
neither wrapped nor retried (`except AnthropicError: raise`, `except OpenAIError: raise`).

So wherever the guard raises into an SDK's reading (`harness.strict`'s middleware and
HTTP client, `StrictTransport`, the guarded body), `as_sdk_error` makes the error an
instance of the `APIError` of each SDK that is loaded as well: a class of its own with
the guard's class first, made once per set of SDKs. A `SSEFormatError` (a framing the
SDK would fail on) is made so the same way, and a `FrameError` (Bedrock's frames). The
object stays the one the guard raised (its class is swapped in place: its code, message,
notes and traceback are kept), so `except harness.StreamProtocolError` catches it with
its `.code`, and code that already handles `anthropic.APIError` / `openai.APIError`
keeps handling it. It carries what those classes promise: `message`, `request` (a copy
without the headers that hold a credential, as the openai SDK keeps its own: each header
the one redaction calls credential-like, `harness._redact.is_secret_name`, as a recording
and the proxy do, AWS's `x-amz-security-token` and Google's `x-goog-api-key` among them)
and `body`
(None: the API sent no error), and openai's `param` and `type` (None); its `code` stays
the error table's code.

No SDK is imported here: an SDK whose client raised it is loaded already.
"""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator, Hashable, Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any, Final, cast

from harness._exceptions import StreamProtocolError
from harness._providers.eventstream import FrameError
from harness._providers.jsonarray import ArrayError
from harness._providers.sse import SSEFormatError
from harness._redact import is_secret_name

__all__ = [
    "aiter_as_sdk_errors",
    "as_sdk_error",
    "iter_as_sdk_errors",
    "raised_as_sdk_errors",
    "request_of",
]

#: What the guard raises: the adapter's error, and a framing the SDK would fail on (SSE,
#: Bedrock's frames: a `FrameError`, `bad_frame` or `truncated_frame`; Gemini's streamed
#: JSON array: an `ArrayError`).
GuardError = StreamProtocolError | SSEFormatError | FrameError | ArrayError
_GUARD_ERRORS: Final = (StreamProtocolError, SSEFormatError, FrameError, ArrayError)


@cache
def _class(base: Any, sdk_errors: tuple[type[Any], ...]) -> type[Any]:
    return type(base.__name__, (base, *sdk_errors), {"__module__": base.__module__})


def as_sdk_error(error: GuardError, request: Any = None) -> GuardError:
    """`error`, made an instance of the `APIError` of each registered provider's SDK that
    is loaded (in place)."""
    from harness._providers import sdk_classes

    bases = tuple(base for base in sdk_classes("APIError") if not isinstance(error, base))
    if not bases:
        return error
    error.__class__ = _class(cast(Hashable, type(error)), bases)
    shown: Any = error
    shown.message = str(error)
    shown.request = _without_credentials(request)
    shown.body = None
    shown.param = None
    shown.type = None
    return error


def _without_credentials(request: Any) -> Any:
    """`request`, or a copy of it without its credential-like headers if it has any."""
    headers: Any = getattr(request, "headers", None) or {}
    secret = [name for name in headers if is_secret_name(str(name))]
    if not secret:
        return request
    safe = copy.copy(request)
    safe.headers = headers.copy()
    for name in secret:
        safe.headers.pop(name, None)
    return safe


@contextmanager
def raised_as_sdk_errors(request: Any) -> Iterator[None]:
    """The guard's error raised inside the block, raised as the SDK's own."""
    try:
        yield
    except _GUARD_ERRORS as error:
        as_sdk_error(error, request)
        raise


def iter_as_sdk_errors(chunks: Iterator[bytes], request: Any) -> Iterator[bytes]:
    """`chunks`, a guarded body, with the guard's error raised as the SDK's own."""
    with raised_as_sdk_errors(request):
        yield from chunks


async def aiter_as_sdk_errors(chunks: AsyncIterator[bytes], request: Any) -> AsyncIterator[bytes]:
    """`iter_as_sdk_errors` for an async body."""
    with raised_as_sdk_errors(request):
        async for chunk in chunks:
            yield chunk


def request_of(response: Any) -> Any:
    """The request `response` answers, or None (an `httpx` response made without one)."""
    try:
        return response.request
    except RuntimeError:
        return None
