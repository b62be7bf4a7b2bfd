"""Whether replay refuses a cassette, asked as its lines go by: `harness validate`'s rule check.

The schema accepts a stream that breaks its dialect's rules (a call's arguments cut
JSON, a Chat body without `[DONE]`, a Responses `sequence_number` skipped): that is
what the library's `errors/` cassettes are for. `RuleCheck` passes a cassette's lines on
to another reader (validate's schema count and live-API warnings: one pass, so standard
input is read once) and feeds each to the strict adapter of the cassette's provider, as
direct replay does (`harness._replay.direct.feed_reader`, the header's request read as
replay reads it). Its `warning()` is the line replay fails at and why, unless the
cassette says it is meant to fail there (`declared`). An API error or a connection
failure (an `error` line, an `http_error` or `cut` directive) is what the cassette says
happens, never a rule broken: the check ends there silently.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from harness._cassette.codec import Cassette, CassetteLine
from harness._exceptions import StreamProtocolError
from harness._providers import provider
from harness._replay.direct import SKIP, failure_code, feed_reader, is_stream_failure

__all__ = ["RuleCheck", "declared"]


def declared(cassette: Cassette) -> str | None:
    """The outcome a cassette says it replays to: its header's `expect` (the fault
    catalogue's variants, conform's cases, anyone's), else the library's naming, a file
    in an `errors/` folder named after its code (`errors/<code>.jsonl` or
    `errors/<code>_<what it adds>.jsonl`); None: it says nothing (it should replay to done)."""
    expect = (cassette.header or {}).get("expect")
    if isinstance(expect, str):
        return expect
    path = Path(cassette.path)
    if path.parent.name != "errors":
        return None
    codes = provider(cassette.provider).table.templates
    stem = path.stem
    return next((code for code in codes if stem == code or stem.startswith(f"{code}_")), None)


class RuleCheck:
    """A cassette's lines passed through, each fed to its provider's strict adapter."""

    def __init__(self, cassette: Cassette, lines: Iterable[CassetteLine]) -> None:
        self._cassette = cassette
        self._lines = lines
        found = provider(cassette.provider)
        options = found.request_options(cassette.header)
        self._machine = found.module("tracing").machine(**options)
        self._item_of = feed_reader(cassette, sdk_objects=False)
        self._last = 0
        self._ended = False
        #: (line, the adapter's error, at the end?) where replay refuses the stream
        self._refused: tuple[int, StreamProtocolError, bool] | None = None

    def __iter__(self) -> Iterator[CassetteLine]:
        for line in self._lines:
            self._feed(line)
            yield line

    def _feed(self, line: CassetteLine) -> None:
        self._last = line.number
        if self._ended:
            return
        try:
            item = self._item_of(line)
            if item is not SKIP:
                self._machine.feed(item)
        except Exception as error:
            if not is_stream_failure(error):
                raise
            self._end(error, line.number, at_end=False)

    def _end(self, error: Exception, number: int, *, at_end: bool) -> None:
        self._ended = True
        if isinstance(error, StreamProtocolError):
            self._refused = (number, error, at_end)

    def warning(self) -> tuple[int, str] | None:
        """Once every line has gone through: `(line, reason)` where replay refuses the
        cassette and it does not say so (`declared`), else None."""
        if not self._ended:
            try:
                self._machine.finish()
            except Exception as error:
                if not is_stream_failure(error):
                    raise
                self._end(error, self._last, at_end=True)
        if self._refused is None:
            return None
        number, refusal, at_end = self._refused
        code = failure_code(refusal)
        expected = declared(self._cassette)
        if code == expected:
            return None
        where = "at the end" if at_end else "here"
        said = (
            f'mark a cassette meant to fail with "expect": "{code}" in its header'
            if expected is None
            else f"its header expects {expected}"
        )
        return number, f"replay fails {where}: {code}: {refusal} ({said})"
