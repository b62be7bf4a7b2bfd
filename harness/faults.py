"""The fault catalogue: ways a good stream breaks, each with the outcome it must produce.

Every `Fault` derives one broken variant from a good stream's lines (one that replays to
`done`), or says it does not apply (no tool call: no tool faults). The expected outcome
is a code of the provider's error table, or `api_error:<error.type>` for a mid-stream
API error, which the SDK raises as `APIStatusError`. Each provider has its catalogue,
rendered in its own dialect (`harness._providers.<provider>.faults`): `CATALOGUE` is
Anthropic's, `catalogue(provider)` any one's (`"anthropic"`, `"openai-chat"`,
`"openai-responses"`: the `provider` a cassette's header names). A stream is its
cassette's `stream_lines`: the events, and an OpenAI Chat stream's `{"harness": "done"}`
line (`data: [DONE]`), which its rows drop or move like any event.

A cut connection is represented by the stream simply ending after some event, which is
what the adapter sees when the server closes the connection mid-stream without an error
event: with no tool block open at the cut it must give `missing_message_stop`; inside a
tool block, `unclosed_tool_blocks` (open blocks are checked first at the end).

The HTTP-level and wire-level rows (`wire=True`) hold directive lines the cassette format
documents, which only an HTTP transport can act on, so they are replayed through a real
SDK client (`harness.cassette_client`), never by building event objects directly:
`http_529` answers with an HTTP error instead of a stream (OpenAI's `http_500`);
`http_429_then_ok` is a two-response session (a 429 the SDK retries after
`retry-after-ms`, then the good stream: the expected outcome is `done`); `cut_mid_event`
drops the connection half-way through an event's bytes, which the SDK raises as
`httpx2.RemoteProtocolError`; `stall` sends no byte for longer than a client's read
timeout, so `httpx2.ReadTimeout` fires. Their codes: `api_error:<error.type>`, `done`,
and `connection_error:<exception name>`.

A stream served in AWS event-stream frames (Anthropic's on Bedrock: a cassette whose
header names `"host": "bedrock"`, or a dialect whose own wire is frames) adds the
binary rows (`harness._providers.frame_rows`), the same for every such dialect: a bit
flipped under the prelude or the message CRC and a frame cut in its prelude or its
payload (`bad_frame`, `truncated_frame`: what a reader of the frames, the guard, says),
an exception frame mid-stream (`api_error:throttlingException`) and a frame of an
unknown `:message-type` (`bad_frame`). `catalogue(provider, host=...)` holds them where
the stream is framed so; `derive_variants` reads the host from the good cassette's
`header`. Over SSE there are none: no frame to break.

A good stream from a compatible server is good under its profile (docs/profiles.md):
`derive_variants(..., profile="vllm")` judges each row's stream as the harness's adapter
reads it under that profile (`expected_under`), and leaves out a row the profile reads
as a good stream, since that is what the server sends, not a fault.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final

from harness._cassette.codec import CassetteSource, read_cassette
from harness._directives import DONE as DONE_LINE
from harness._exceptions import ANTHROPIC, UnknownFaultError
from harness._providers import names, provider as registered, registry_cache
from harness._providers.anthropic import faults as _anthropic
from harness._providers.fault_rows import DONE, STALL_MS, Events, Fault, Variant, events_of
from harness._providers.frame_rows import FRAME_ROWS

__all__ = [
    "CATALOGUE",
    "DONE",
    "PROVIDERS",
    "STALL_MS",
    "Fault",
    "Variant",
    "catalogue",
    "derive_variants",
    "expected_under",
    "fault_named",
    "stream_lines",
]

#: Anthropic's catalogue, in the order `harness faults --list` prints it.
CATALOGUE: tuple[Fault, ...] = _anthropic.CATALOGUE
#: Anthropic's 529 and 429 answers, as the wire rows hold them.
HTTP_529: Final = _anthropic.HTTP_529
HTTP_429: Final = _anthropic.HTTP_429


@registry_cache
def _catalogues() -> Mapping[str, tuple[Fault, ...]]:
    """Provider (as a cassette header names it) -> its catalogue (its `faults` module's
    `CATALOGUE`), for each registered provider that has one, in the registry's order."""
    return {name: registered(name).catalogue for name in names() if registered(name).has("faults")}


if TYPE_CHECKING:
    #: The providers that have a catalogue, Anthropic's first (`__getattr__`).
    PROVIDERS: tuple[str, ...]


def __getattr__(name: str) -> Any:
    """`PROVIDERS`: the providers that have a catalogue, Anthropic's first (read from the
    registry when asked: an entry point's provider included)."""
    if name == "PROVIDERS":
        return tuple(_catalogues())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def catalogue(provider: str = ANTHROPIC, *, host: str | None = None) -> tuple[Fault, ...]:
    """The fault catalogue of `provider`, served on `host` (None: its own API): the binary
    rows after its own where its stream travels in event-stream frames there (none on a
    host that serves it as SSE); `ValueError` for a provider that has none, or a host it
    is not served on (`Provider.hosted`)."""
    from harness._hosts import framed

    catalogues = _catalogues()
    try:
        rows = catalogues[provider]
    except KeyError:
        known = ", ".join(catalogues)
        raise ValueError(
            f"no fault catalogue for provider {provider!r} (there is one for {known})"
        ) from None
    found = registered(provider)
    unserved = None if host is None else found.not_served_on(host)
    if unserved is not None:
        raise ValueError(f"host {host!r}: {unserved}")
    if framed(found.framing, host) is None:
        return rows
    return (*rows, *FRAME_ROWS)


def _host(header: Mapping[str, Any] | None) -> str | None:
    """The host a cassette's header says it was recorded on (None: the direct API)."""
    found = (header or {}).get("host")
    return found if isinstance(found, str) else None


def stream_lines(source: CassetteSource) -> Events:
    """A cassette's stream as the rows derive from it: its event lines, and an OpenAI Chat
    cassette's `{"harness": "done"}` lines (its `data: [DONE]`); other directives left out.
    `CassetteError` at a bad line."""
    return [
        line.data
        for line in read_cassette(source).lines()
        if line.kind == "event" or line.data["harness"] == DONE_LINE
    ]


def fault_named(name: str, *, provider: str = ANTHROPIC, host: str | None = None) -> Fault:
    """The entry of `provider`'s catalogue (on `host`) called `name`; `UnknownFaultError`
    (an `InputError`, and a `KeyError`) naming the rows if none."""
    rows = catalogue(provider, host=host)
    for fault in rows:
        if fault.name == name:
            return fault
    where = f"{provider}'s catalogue" + (f" on {host}" if host is not None else "")
    raise UnknownFaultError(
        f"no fault {name!r} in {where}; its rows: {', '.join(fault.name for fault in rows)}"
    )


def expected_under(
    fault: Fault,
    broken: Iterable[dict[str, Any]],
    *,
    provider: str = ANTHROPIC,
    profile: str | None = None,
    header: Mapping[str, Any] | None = None,
) -> str | None:
    """The outcome `fault`'s variant `broken` (any iterable of events, read once) must
    come to when the stream is read under the compatible server `profile`; None when the
    profile reads it as a good stream (the row does not apply: that is what the server
    sends, not a fault).

    With no profile, and for a wire row (a profile reads a server's chunks, never its
    transport), it is the row's own `expect`. Otherwise it is what the harness's own
    adapter makes of `broken` under the profile, with what the good cassette's `header`
    request implies (a forced `tool_choice`), as `harness replay --profile` reads it.
    `ValueError` for an unknown profile, or a provider that has none.
    """
    if profile is None or fault.wire:
        return fault.expect
    from harness._cassette.codec import CassetteLine, pass_over
    from harness._providers import provider as registered
    from harness._replay.direct import SKIP, collect, failure_code, line_reader

    found = registered(provider)
    options = {**found.request_options(header), **found.adapter_options(profile)}
    item_of = line_reader(pass_over, sdk_objects=False, read_timeout=None, dialect=found)
    lines = (
        CassetteLine(number, "directive" if "harness" in data else "event", data)
        for number, data in enumerate(broken, start=2)
    )
    items = (item for item in map(item_of, lines) if item is not SKIP)
    error = collect(found.to_model_events(items, **options)).error
    if error is None:
        return None if fault.expect != DONE else DONE
    return failure_code(error)


def derive_variants(
    events: Iterable[dict[str, Any]],
    *,
    provider: str = ANTHROPIC,
    profile: str | None = None,
    header: Mapping[str, Any] | None = None,
) -> list[Variant]:
    """Every applicable fault's variant of a good stream, in catalogue order.

    `events` may be any iterable (`Cassette(path).events()`): it is read once, and not
    modified. The expectations hold for a stream that replays to `done`:
    a cassette's `stream_lines` (an OpenAI Chat stream's include its `[DONE]` line). A
    stream from a compatible server is judged under its `profile` (`expected_under`,
    given the good cassette's `header`): a row the profile reads as good is left out. The
    header's `host` adds the binary rows where the stream travels in frames (`catalogue`).
    """
    stream = events_of(events)
    if header is not None and not isinstance(header, Mapping):
        raise ValueError(f"header must be a cassette header (a dict), not {type(header).__name__}")
    variants = []
    for fault in catalogue(provider, host=_host(header)):
        broken = fault.derive(stream)
        if broken is None:
            continue
        expected = expected_under(fault, broken, provider=provider, profile=profile, header=header)
        if expected is not None:
            variants.append(Variant(fault, expected, broken))
    return variants
