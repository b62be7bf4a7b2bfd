"""Which provider an exchange is a call of, and what import and export ask of each: one place.

`DIALECTS` lists, per provider, what its own `interop` module supplies (its `RECORDED`,
a `harness._providers.recorded.Recorded`): which calls are its (method and path), the
request a cassette keeps, an SSE body and a plain answer as the cassette's lines, the
model they name, and the call and body an export writes. `for_call` finds an exchange's
dialect by its request, `for_provider` a cassette's by its header. The importer and the
exporter spell no event type: they ask here.
"""

from __future__ import annotations

from typing import Final
from urllib.parse import urlsplit

from harness._providers import PACKAGES, provider
from harness._providers.recorded import Line, Recorded

__all__ = ["CALLS", "DIALECTS", "NOT_A_CALL", "Dialect", "Line", "for_call", "for_provider"]

#: What import and export need of one provider (its `interop` module's `RECORDED`).
Dialect = Recorded
#: Every registered provider's, in the registry's order.
DIALECTS: Final[tuple[Recorded, ...]] = tuple(
    provider(name).module("interop").RECORDED for name in PACKAGES
)
#: The calls import reads, as its report names them.
CALLS: Final = "a Messages, Chat Completions or Responses call"
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
    return next((dialect for dialect in DIALECTS if dialect.is_call(method, path)), None)


def for_provider(provider: str) -> Dialect:
    """The dialect of a cassette whose header names `provider`."""
    return next(dialect for dialect in DIALECTS if dialect.provider == provider)
