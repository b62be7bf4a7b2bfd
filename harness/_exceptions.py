"""Every error the harness raises, in one hierarchy, and the providers' error tables.

    HarnessError                  base of everything the harness raises on purpose
    ├── StreamProtocolError       the stream broke the protocol (the adapter); `.code`
    │                             is a key of ERROR_TABLE, `str()` starts with the prefix
    ├── APIErrorEvent             the API's error in a stream replayed without the SDK
    │                             (where the SDK would raise its `APIStatusError`)
    ├── InputError (ValueError)   input the harness cannot use, reported as `WHERE: reason`
    │   ├── CassetteError         a cassette file: `PATH:LINE: reason`
    │   ├── CassetteImportError   a recording to import (vcrpy, HAR): `PATH: reason`
    │   ├── SessionError          an agent session folder: `PATH: reason`
    │   └── UnknownFaultError     no fault row of that name (`fault_named`); a KeyError too
    ├── OutputError               a file could not be written (a full disk, a read-only
    │                             folder): `PATH: cannot write: reason`; the old one stays
    ├── RecordError               a live recording failed; nothing was written
    ├── ReplayError               the code under test and the recording disagree
    │   │                         (a request the cassettes cannot answer, turns left unplayed)
    │   └── RequestMismatchError  a request differs from the one its cassette was recorded for
    └── AgentError                the agent loop's own failures
        ├── EmptyTurnError        a model turn with nothing to commit
        ├── AgentFailed           a run failed in a model turn (the cause is `.error`)
        └── ToolError             a tool could not do what a call asked

Exit codes are the command line's business (`harness_cli.exit.Exit`), never carried here.

One `StreamProtocolError` serves every provider (a wire dialect: `harness._providers`).
Each provider's table, its message prefix and its fields' patterns are one `ErrorTable`,
registered under the provider's name in `ERROR_TABLES`. Anthropic's ("anthropic", the
default) is data in `harness._providers.anthropic.errors`, read here as `ERROR_TABLE`,
`ERROR_FIELDS` and `PROTOCOL_ERROR_PREFIX`; another provider's is data in its subpackage,
registered when its module is imported (`register_error_table`).
`StreamProtocolError(code, provider="openai-chat", ...)` then reads that table; with no
`provider` it is Anthropic's error exactly as before. A provider's error pickles through
its table's own rebuild function, which lives in the provider's module: unpickling
imports that module, so the table is there to read.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from harness._providers.anthropic.errors import (
    ERROR_FIELDS,
    ERROR_TABLE,
    PROTOCOL_ERROR_PREFIX,
    PROVIDER,
)

__all__ = [
    "ANTHROPIC",
    "ERROR_FIELDS",
    "ERROR_TABLE",
    "ERROR_TABLES",
    "PROTOCOL_ERROR_PREFIX",
    "APIErrorEvent",
    "AgentError",
    "AgentFailed",
    "CassetteError",
    "CassetteImportError",
    "EmptyTurnError",
    "ErrorTable",
    "HarnessError",
    "InputError",
    "OutputError",
    "RecordError",
    "ReplayError",
    "RequestMismatchError",
    "SessionError",
    "StreamProtocolError",
    "ToolError",
    "UnknownFaultError",
    "check_usable",
    "error_chain",
    "error_pattern",
    "register_error_table",
]

#: the default provider: the one a `StreamProtocolError` is of when none is named, and a
#: cassette whose header names none (its name is its own subpackage's)
ANTHROPIC: Final = PROVIDER


@dataclass(frozen=True, slots=True)
class ErrorTable:
    """One provider's error table as data: its message prefix, code -> message template
    (after the prefix), each field's pattern (as `ERROR_FIELDS`), and the module-level
    function that rebuilds one of its errors from `(code, fields)` (for pickling)."""

    prefix: str
    templates: Mapping[str, str]
    fields: Mapping[str, str]
    rebuild: Callable[[str, dict[str, Any]], StreamProtocolError] | None = None


#: provider name -> its table; Anthropic's is here, each other provider registers its own
ERROR_TABLES: Final[dict[str, ErrorTable]] = {
    ANTHROPIC: ErrorTable(PROTOCOL_ERROR_PREFIX, ERROR_TABLE, ERROR_FIELDS),
}


def register_error_table(provider: str, table: ErrorTable) -> None:
    """Make `table` the one `StreamProtocolError(..., provider=provider)` reads. Every
    template's field has a pattern, and a provider other than Anthropic names its
    `rebuild` function. A module imported again (pytest's in-process runs unload
    modules) registers its table again, replacing the old one."""
    for template in table.templates.values():
        missing = set(re.findall(r"\{(\w+)\}", template)) - set(table.fields)
        if missing:
            raise ValueError(f"{provider}: no pattern for field(s) {sorted(missing)}")
    if table.rebuild is None:
        raise ValueError(f"{provider}: an error table needs its rebuild function")
    ERROR_TABLES[provider] = table


def _literal(text: str) -> str:
    """`text` as a pattern: only the metacharacters escaped (`re.escape` also escapes
    spaces, which JavaScript's `u` mode and Rust refuse)."""
    return re.sub(r"([\\.^$|?*+()\[\]{}])", r"\\\1", text)


def error_pattern(code: str, *, provider: str = ANTHROPIC) -> str:
    """The pattern a whole message of `code` matches, with or without the prefix: the
    template, its literal text escaped and its fields as the table's fields say."""
    table = ERROR_TABLES[provider]
    pattern = ""
    for number, part in enumerate(re.split(r"\{(\w+)\}", table.templates[code])):
        pattern += table.fields[part] if number % 2 else _literal(part)
    return f"^({_literal(table.prefix)})?{pattern}$"


class HarnessError(Exception):
    """Base of every error the harness raises on purpose."""


class StreamProtocolError(HarnessError):
    """The provider's stream broke the protocol; `code` is a key of the provider's table
    (`ERROR_TABLE` for Anthropic, the default), `str()` starts with the table's prefix."""

    def __init__(self, code: str, *, provider: str = ANTHROPIC, **fields: object) -> None:
        table = ERROR_TABLES[provider]
        self.code = code
        self.provider = provider
        self.fields: dict[str, Any] = fields
        self.detail = table.templates[code].format(**fields)
        super().__init__(table.prefix + self.detail)

    def __reduce__(self) -> tuple[object, ...]:
        if self.provider == ANTHROPIC:
            return (_rebuild_protocol_error, (self.code, self.fields))
        return (ERROR_TABLES[self.provider].rebuild, (self.code, self.fields))


def _rebuild_protocol_error(code: str, fields: dict[str, Any]) -> StreamProtocolError:
    return StreamProtocolError(code, **fields)


class APIErrorEvent(HarnessError):
    """An API `error` event, or an `http_error` answer, met by a replay that builds no SDK
    objects (`harness replay`, `coverage`, `faults`, `diff`): where the SDK raises its
    `APIStatusError`, these commands report the same type and message from `body`."""

    def __init__(self, body: dict[str, object], status_code: int = 200) -> None:
        super().__init__(f"{body}")
        self.body = body
        self.status_code = status_code


def check_usable(
    error: StreamProtocolError | APIErrorEvent | None, finished: bool, name: str
) -> None:
    """What an adapter raises at every call once it failed (`error`) or finished (`name`:
    its class): a new error of the first one's kind, chained from it (re-raising the same
    object would grow its traceback at every call)."""
    if isinstance(error, StreamProtocolError):
        raise StreamProtocolError(error.code, provider=error.provider, **error.fields) from error
    if error is not None:
        raise APIErrorEvent(error.body, error.status_code) from error
    if finished:
        raise RuntimeError(f"{name}.finish() was already called")


class InputError(HarnessError, ValueError):
    """Input the harness cannot use: a bad file, option, request or missing key."""


class CassetteError(InputError):
    """A cassette cannot be used: unreadable, not JSON Lines, or off the schema."""

    def __init__(self, path: str, line: int, reason: str) -> None:
        self.path = path
        self.line = line
        self.reason = reason
        super().__init__(f"{path}:{line}: {reason}")


class CassetteImportError(InputError):
    """A recording cannot be imported, or an output file exists: `PATH: reason`."""


class SessionError(InputError):
    """A session folder cannot be used: `PATH: reason`."""


class UnknownFaultError(InputError, KeyError):
    """A fault catalogue has no row of the name asked for; its message lists the rows. A
    `KeyError` as well, as a lookup by name is (and as `fault_named` raised before)."""

    __str__ = Exception.__str__  # the message as written, not quoted as a KeyError's key


class OutputError(HarnessError):
    """A file could not be written (a full disk, a read-only folder); the old file, if
    any, is left as it was. `PATH: cannot write: reason`."""


class RecordError(HarnessError):
    """A live recording could not be made; nothing was written."""


class ReplayError(HarnessError):
    """The code under test and the recording disagree: a request no cassette answers,
    recorded turns left unplayed."""


class RequestMismatchError(ReplayError):
    """A request differs, on the fields compared, from the one its cassette was recorded for."""


class AgentError(HarnessError):
    """Base of the agent loop's errors."""


class EmptyTurnError(AgentError):
    """The model's turn cannot be committed: no text and no call, or no `done` at the end."""


class AgentFailed(AgentError):
    """The run failed in a model turn; `messages` keeps what was committed before it (the
    loop's `harness.agent.Message`s: typed loosely here, so that the core, below every
    subpackage, names nothing of the agent's)."""

    def __init__(self, error: Exception, messages: list[Any], turn: int) -> None:
        super().__init__(f"turn {turn}: {error}")
        self.error = error
        self.messages = messages
        self.turn = turn


class ToolError(AgentError):
    """A tool could not do what the call asked; the message goes back to the model."""


def error_chain(error: BaseException) -> Iterator[BaseException]:
    """`error`, then its causes and contexts, each once: where an SDK that wrapped an
    error (`APIConnectionError` from `RemoteProtocolError`) keeps the one it wrapped."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__
