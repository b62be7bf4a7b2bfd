"""The guard in a boto3 `bedrock-runtime` client, through botocore's own event hooks.

boto3 takes no HTTP client and has no middleware: what it has is an event system of its
own for each client (`client.meta.events`), where handlers see a request or a response
on its way. `strict_client(client, guarding)` registers one handler there, on
`before-parse.bedrock-runtime`, which botocore's endpoint emits with each answer's
`response_dict` before its parser reads a byte of it:

- `ConverseStream`: `response_dict["body"]` is the raw urllib3 response that botocore's
  `EventStream` reads through its `.stream()`; it is swapped for a `GuardedBody` whose
  `.stream()` yields the same chunks as the guard releases them (`guarding.stream`), so
  the guard's error is raised where the code iterates `response["stream"]`, before the
  frame that would complete the broken answer (and closes the connection, whose rest is
  never read);
- `Converse`: the body (bytes) is checked whole (`guarding.whole`) before the parse, so
  `converse()` raises it.

Those two are the only answers it touches: every other operation's passes as botocore
reads it, `InvokeModelWithResponseStream` and `InvokeModel` above all, whose bodies are
the model's own format (an Anthropic model's Messages events, a Llama's `generation`
chunks, ...), which the operation does not name (docs/strict.md says why they are not
judged). A failed status passes untouched (botocore raises its `ClientError`). The
error is raised as it is: botocore reads the event stream with no `try` of its own, and
emits `before-parse` after its retry loop's `try`, so nothing wraps or retries it (see
docs/strict.md). Everything else is the client's own: credentials, the signer, its
config, retries, timeouts, the endpoint, and other handlers (a cassette client's
`before-send`). botocore offers no copy of a client with an event system of its own,
so the client is guarded in place and returned; the handler is registered under one
`unique_id`, so guarding it again replaces it (the last policy holds). Nothing here
imports botocore: a client of it means it is loaded.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Final

from harness._providers.answers import Guarding
from harness._providers.bedrock_converse.framing import PATHS

__all__ = ["STRICT_CLIENTS", "GuardedBody", "strict_client"]

#: How `harness.strict`'s refusal names the clients taken here.
STRICT_CLIENTS: Final = "a boto3 bedrock-runtime client"
#: The event the handler is registered on: every answer of the service, before its parse.
EVENT: Final = "before-parse.bedrock-runtime"
#: The handler's id on the client's event system (a second `strict` replaces the first).
UNIQUE_ID: Final = "harness-strict"
_SERVICE: Final = "bedrock-runtime"


class GuardedBody:
    """The raw body botocore's `EventStream` reads, its chunks released as the guard
    accepts them (`.stream()`); anything else asked of it is the raw body's."""

    def __init__(self, raw: Any, guarded: Callable[[Iterable[bytes]], Iterator[bytes]]) -> None:
        self._raw = raw
        self._guarded = guarded

    def stream(self, *args: Any, **kwargs: Any) -> Iterator[bytes]:
        """The raw body's chunks as the guard releases them; at its error the raw body
        is closed (its rest is never read) before the error goes on."""
        try:
            yield from self._guarded(self._raw.stream(*args, **kwargs))
        except Exception:
            self._raw.close()
            raise

    def close(self) -> None:
        self._raw.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)


def is_client(client: object) -> bool:
    """Whether `client` is a botocore client of Bedrock's runtime (boto3's too)."""
    found = sys.modules.get("botocore.client")
    base = getattr(found, "BaseClient", None)
    if base is None or not isinstance(client, base):
        return False
    return bool(client.meta.service_model.service_name == _SERVICE)


def _handler(guarding: Guarding) -> Callable[..., None]:
    def guard(operation_model: Any, response_dict: dict[str, Any], **_: Any) -> None:
        if not 200 <= int(response_dict.get("status_code") or 0) < 300:
            return
        method = str(operation_model.http.get("method", "POST"))
        path = str(operation_model.http.get("requestUri", ""))  # /model/{modelId}/...
        if PATHS.read(path) is None:
            return  # not Converse: another dialect's answer, or none (the module)
        if operation_model.has_event_stream_output:

            def guarded(chunks: Iterable[bytes]) -> Iterator[bytes]:
                return guarding.stream(method, path, b"", chunks)

            response_dict["body"] = GuardedBody(response_dict["body"], guarded)
            return
        body = response_dict.get("body")
        if isinstance(body, bytes | bytearray):
            content_type = str(response_dict.get("headers", {}).get("content-type", ""))
            guarding.whole(method, path, b"", bytes(body), content_type)

    return guard


def strict_client(client: object, guarding: Guarding) -> Any:
    """`client` (a `bedrock-runtime` client) with the guard's handler, in place; None for
    any other client."""
    if not is_client(client):
        return None
    events: Any = client.meta.events  # type: ignore[attr-defined]
    events.unregister(EVENT, unique_id=UNIQUE_ID)
    events.register(EVENT, _handler(guarding), unique_id=UNIQUE_ID)
    return client
