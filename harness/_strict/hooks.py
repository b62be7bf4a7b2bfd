"""`harness.strict` for an SDK that sends through no HTTP client of ours, but has hooks of
its own (boto3: its per-client event system).

Such an SDK's provider says how its hooks take the guard: its `guard` module's
`strict_client(client, guarding)` returns the client guarded (or None: not one of its
clients), and `STRICT_CLIENTS` words which clients those are. `guarding` is a
`HookGuard`: the same guard as everywhere (`answer_check` reads the request by its
method and path, a stream is read through a `StreamGuard` by the provider's reader, a
non-streaming answer checked whole by `check_whole`), the error raised as it is: no
SDK of those wraps or retries what its hooks raise (the provider's docs say why).
It is pinned to the provider whose hooks took the client and judges that provider's
calls only (`claimed`): the hooks see every operation of the SDK's client, and a call
whose path the registry would route to another provider (a host's path: any model's
dialect may be behind it) passes as it is, never judged by rules it may not follow.
Nothing here names a provider or an SDK.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from typing import Any

from harness._providers import Provider, providers
from harness._strict.dialects import AnswerCheck, answer_check, check_whole, claimed
from harness._strict.guard import StreamGuard, guarded

__all__ = ["HookGuard", "hooked_clients", "strict_through_hooks"]


class HookGuard:
    """The guard as `dialect`'s hooks call it (`answers.Guarding`): its calls checked by
    its rules, any other request's answer passed as it is (the module)."""

    def __init__(self, allowed: Collection[str], dialect: Provider) -> None:
        self.allowed = frozenset(allowed)
        self.dialect = dialect

    def _check(self, method: str, path: str, content: bytes) -> AnswerCheck | None:
        if not claimed(self.dialect, method, path):
            return None
        return answer_check(method, path, {}, content, 200, self.allowed, dialect=self.dialect)

    def stream(
        self, method: str, path: str, content: bytes, chunks: Iterable[bytes]
    ) -> Iterator[bytes]:
        check = self._check(method, path, content)
        if check is None or not check.stream:
            return iter(chunks)
        return guarded(chunks, StreamGuard(reader=check.reader()))

    def whole(self, method: str, path: str, content: bytes, body: bytes, content_type: str) -> None:
        check = self._check(method, path, content)
        if check is not None and not check.stream:
            check_whole(check, body, content_type)


def _hooked() -> list[Provider]:
    return [found for found in providers() if found.has("guard")]


def strict_through_hooks(client: object, allowed: Collection[str]) -> Any:
    """`client` guarded through its SDK's own hooks by the provider whose client it is,
    or None: no provider's `guard.strict_client` takes it."""
    for found in _hooked():
        hook = getattr(found.guard, "strict_client", None)
        if hook is None:
            continue
        guarded_client = hook(client, HookGuard(allowed, found))
        if guarded_client is not None:
            return guarded_client
    return None


def hooked_clients() -> dict[str, str]:
    """SDK package -> how a provider that guards through its hooks names the clients it
    takes (`STRICT_CLIENTS`: "a boto3 bedrock-runtime client")."""
    return {
        found.sdk.package: found.guard.STRICT_CLIENTS
        for found in _hooked()
        if getattr(found.guard, "strict_client", None) is not None
    }
