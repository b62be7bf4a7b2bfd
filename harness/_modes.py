"""The named choices of the harness, each checked in one place: record modes and replay paths."""

from __future__ import annotations

from enum import StrEnum
from typing import Final

from harness._exceptions import InputError

__all__ = ["RecordMode", "Via"]


class RecordMode(StrEnum):
    """When a cassette is recorded live (vcrpy's modes, by the same names).

    `none` replays only; `missing` records the cassettes that do not exist (`once` is
    its vcrpy name, accepted as an alias); `all` re-records every cassette; `drift`
    re-records every cassette that exists into a folder of its own, leaving the stored
    ones as they are, and says which answer in another shape now (the plugin's drift
    check, `harness._testing.drift`).
    """

    NONE = "none"
    MISSING = "missing"
    ALL = "all"
    DRIFT = "drift"

    @property
    def rerecords(self) -> bool:
        """Whether a cassette that exists is recorded again (once a run): `all`, `drift`."""
        return self in (RecordMode.ALL, RecordMode.DRIFT)

    @classmethod
    def parse(cls, value: str | RecordMode) -> RecordMode:
        """The mode named `value`; `InputError` naming the choices otherwise."""
        name = _RECORD_ALIASES.get(str(value), str(value))
        try:
            return cls(name)
        except ValueError:
            raise InputError(
                f"record mode {value!r} is not one of none, missing (alias once), all, drift"
            ) from None

    @classmethod
    def choices(cls) -> tuple[str, ...]:
        """Every accepted name, aliases included (for option parsers)."""
        return (*(mode.value for mode in cls), *_RECORD_ALIASES)


_RECORD_ALIASES: Final = {"once": RecordMode.MISSING.value}


class Via(StrEnum):
    """How replay reaches the adapter: `direct` builds the SDK's event objects from the
    lines; `sdk` sends the lines as SSE bytes through a real SDK client (in-process)."""

    DIRECT = "direct"
    SDK = "sdk"

    @classmethod
    def parse(cls, value: str | Via) -> Via:
        try:
            return cls(str(value))
        except ValueError:
            raise InputError(f"via {value!r} is not one of direct, sdk") from None
