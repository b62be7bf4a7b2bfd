"""Which provider an exchange is a call of, and what import and export ask of each: a loop
over the registry.

Each registered provider's own `interop` module supplies what import and export read and
write of it (its `RECORDED`, a `harness._providers.recorded.Recorded`: `Provider.recorded`):
which calls are its (method and path), the request a cassette keeps, an SSE body and a
plain answer as the cassette's lines, the model they name, and the call and body an
export writes. `for_call` finds an exchange's dialect by its request (the first provider
in the registry's order whose call it is), `for_provider` a cassette's by its header.
`hosted_call` finds a call on a host (`harness._hosts`: Bedrock, Vertex) and the
dialect served there. The importer and the exporter spell no provider and no event
type: they ask here.
"""

from __future__ import annotations

from typing import Final
from urllib.parse import urlsplit

from harness._hosts import Hosted, hosted_at, served_at
from harness._providers import provider, providers, registry_cache
from harness._providers.recorded import Line, Recorded

__all__ = [
    "NOT_A_CALL",
    "Dialect",
    "Line",
    "calls",
    "dialects",
    "for_call",
    "for_provider",
    "hosted_call",
]

#: What import and export need of one provider (its `interop` module's `RECORDED`).
Dialect = Recorded


@registry_cache
def dialects() -> tuple[Recorded, ...]:
    """Every registered provider's that has an `interop` module, in the registry's order."""
    return tuple(found.recorded for found in providers() if found.has("interop"))


def calls() -> str:
    """The calls import reads, as its report names them: `a Messages, Chat Completions or
    Responses call`, each registered provider's API."""
    names = [dialect.call for dialect in dialects()]
    listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
    return f"a {listed} call"


#: Why an exchange that is none of them is skipped. (Still the words of the Anthropic-only
#: importer, which the README shows; `f"not {CALLS}"` once the README says so.)
NOT_A_CALL: Final = "not a POST to /v1/messages"


def for_call(method: str, uri: str) -> Dialect | None:
    """The dialect whose call `method uri` is (any host), or None."""
    try:
        path = urlsplit(uri).path
    except ValueError:  # e.g. a malformed IPv6 host
        return None
    method = method.upper()
    return next((dialect for dialect in dialects() if dialect.is_call(method, path)), None)


def hosted_call(method: str, uri: str) -> tuple[Dialect, Hosted] | None:
    """The dialect whose call `method uri` is on a host (Bedrock's `/model/{id}/invoke...`,
    Vertex's `:streamRawPredict`), and the call as that host's: the dialect the host's own
    paths answer in (`served_at`); None for no host's call, or one import cannot read."""
    try:
        path = urlsplit(uri).path
    except ValueError:
        return None
    hosted = hosted_at(path) if method.upper() == "POST" else None
    if hosted is None:
        return None
    found = served_at(hosted.host.name)
    return None if found is None or not found.has("interop") else (found.recorded, hosted)


def for_provider(name: str) -> Dialect:
    """The dialect of a cassette whose header names provider `name`."""
    return provider(name).recorded
