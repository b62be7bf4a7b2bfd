"""`harness conform`: the library and the fault catalogue against an adapter in any language.

A `Case` is one stream and the outcome the harness's own adapter gives it: a cassette of
the library (or of the paths given), named by its path (`interleaved`,
`errors/missing_stop_reason`), or a fault variant of a good one, named by the cassette
and the fault row (`interleaved.drop_message_start`). `run_case` hands a case to a
command, a fresh process each time: on its standard input the case's raw events, one
JSON object a line (stdin mode), or, with `serve`, over HTTP from a `CassetteServer`
(the wire-level cases too: HTTP errors, cuts, stalls, sessions). `read_output` reads
what it printed, `judge` compares that with the expected outcome. The protocol, written
for someone implementing it in another language, is docs/conform.md.

The expected outcomes come from the adapter fed light views of the lines
(`harness._views`), not the SDK's event objects: `import anthropic` costs about 1.5 s,
which conform never pays. `tests/test_conform.py` holds the two to the same outcomes on
every case.
"""

from __future__ import annotations

import dataclasses
import os
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from itertools import zip_longest
from pathlib import Path
from typing import Any, Final

import orjson

from harness._cassette.codec import (
    Cassette,
    anthropic_only,
    expand_paths,
    make_header,
    write_cassette,
)
from harness._cassette.sessions import is_session_folder, turn_files, write_turns
from harness._directives import CUT, DONE as DONE_LINE, HTTP_ERROR, STALL
from harness._events import event_to_json
from harness._exceptions import (
    ERROR_TABLES,
    APIErrorEvent,
    InputError,
    StreamProtocolError,
    error_pattern,
)
from harness._providers import provider as registered
from harness._providers.anthropic.adapter import StreamAdapter
from harness._replay.direct import failure_code, is_stream_failure
from harness._testing.bounded import TIMED_OUT, BoundedProcess, Exchange
from harness._testing.dialects import (
    ANTHROPIC,
    conform_module,
    dialect,
    fault_variants,
    library_path,
)
from harness.faults import DONE, derive_variants, fault_named

__all__ = [
    "CASSETTE_ENV",
    "DEFAULT_TIMEOUT_S",
    "LIBRARY_GLOBS",
    "UNRECOGNISED",
    "Case",
    "Result",
    "Verdict",
    "collect_cases",
    "describe",
    "error_table",
    "expected_result",
    "judge",
    "judged_served",
    "library_path",
    "outcome_of_message",
    "read_output",
    "run_case",
    "run_cases",
    "write_case",
]

#: The library's cassettes outside its sessions.
_LOOSE_GLOBS: Final = ("*.jsonl", "errors/*.jsonl")
#: The library's cassettes that are cases (and that the wheel ships: setup.py): the top
#: level, `errors/`, and each turn of the agent sessions, a stream of its own.
LIBRARY_GLOBS: Final = (*_LOOSE_GLOBS, "sessions/*/turn-*.jsonl")
#: The variable naming the case a `--serve` command must ask for (`x-harness-cassette`).
CASSETTE_ENV: Final = "HARNESS_CASSETTE"
#: A persistent `--serve` worker's cassette name, numbered: the server points it at each case.
WORKER_CASSETTE: Final = "harness-conform-worker-"
DEFAULT_TIMEOUT_S: Final = 10.0
#: The outcome of an error line whose message no row of the error table recognises.
UNRECOGNISED: Final = "unrecognised_error"
_CONNECTION_ERROR: Final = "connection_error:"
#: What a line of output may be shown with before it is shortened.
_SHOWN: Final = 200
#: How many lines of a crashed command's standard error are shown.
_ERROR_LINES: Final = 3
#: The problem of an output that ends with neither `done` nor an error line.
CRASHED: Final = "the output ended with neither done nor an error line"


def _table(provider: str) -> dict[str, str]:
    registered(provider).table  # noqa: B018 (registers the provider's table first)
    return dict(ERROR_TABLES[provider].templates)


def protocol_error_prefix(provider: str = ANTHROPIC) -> str:
    """The message prefix of the provider's protocol errors."""
    registered(provider).table  # noqa: B018
    return ERROR_TABLES[provider].prefix


def error_table(provider: str = ANTHROPIC) -> list[dict[str, str]]:
    """The provider's error table as data: every code, its message template and its pattern."""
    return [
        {"code": code, "template": template, "pattern": error_pattern(code, provider=provider)}
        for code, template in _table(provider).items()
    ]


@cache
def _patterns(provider: str) -> tuple[tuple[str, re.Pattern[str]], ...]:
    return tuple(
        (code, re.compile(error_pattern(code, provider=provider))) for code in _table(provider)
    )


def outcome_of_message(message: str, provider: str = ANTHROPIC) -> str:
    """The code whose pattern (of the provider's table) recognises an error message, or
    `UNRECOGNISED`."""
    for code, pattern in _patterns(provider):
        if pattern.match(message):
            return code
    return UNRECOGNISED


# -- outcomes ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Result:
    """What a stream came to: the internal events in their JSON form (`done` included),
    and the outcome: `done`, an error-table code, `api_error:<type>`,
    `connection_error:<name>`, or for a command's output `unrecognised_error`."""

    events: list[dict[str, Any]]
    outcome: str
    #: the error line's message, as the command printed it
    message: str | None = None
    #: why a command's output could not be read as the protocol says (None: it could)
    problem: str | None = None
    #: a command that died: the first lines of its standard error that name an error
    stderr: tuple[str, ...] = ()
    #: requests (`METHOD /path`) that reached no cassette of the server (`--serve`)
    asked: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        shown: dict[str, Any] = {"events": self.events, "outcome": self.outcome}
        if self.message is not None:
            shown["message"] = self.message
        if self.problem is not None:
            shown["problem"] = self.problem
        if self.stderr:
            shown["stderr"] = list(self.stderr)
        if self.asked:
            shown["asked"] = list(self.asked)
        return shown


def _wire_outcome(
    directive: Mapping[str, Any], api_error: Callable[..., Exception] | None = None
) -> str | None:
    """What a client makes of a wire directive; None for one that changes nothing (`at`).
    An HTTP error is named as the provider's reader names it (`api_error`, its direct
    replay's builder: Gemini's by its `status`), else by its error's `type`."""
    kind = directive.get("harness")
    if kind == HTTP_ERROR:
        body = directive.get("body", {})
        if api_error is not None:
            named = failure_code(api_error(body, directive.get("status")))
            if named is not None:
                return named
        details = body.get("error", {})
        return f"api_error:{details.get('type', 'APIStatusError')}"
    if kind == CUT:
        return fault_named("cut_mid_event").expect
    if kind == STALL:
        return fault_named("stall").expect
    return None


def expected_result(
    lines: Iterable[dict[str, Any]],
    provider: str = ANTHROPIC,
    options: Mapping[str, Any] | None = None,
) -> Result:
    """The harness's adapter over one response's lines, as a client reading them sees
    them: `ping` passed over, an `error` event an API error, a wire directive where the
    stream ends in an HTTP or connection error. Another provider's adapter (its driver,
    from the registry) is given `options`, the case's request fields and policy."""
    if dialect(provider).own_cases:
        return _provider_result(lines, provider, options or {})
    adapter = StreamAdapter()
    # what the stream hands a reader, as the provider reads it without the SDK: a view of
    # each event, nothing for one the SDK passes over, the API's error event raised
    view_of = registered(provider).reading.direct_builders(False).event
    events: list[dict[str, Any]] = []
    try:
        for line in lines:
            if "harness" in line:
                outcome = _wire_outcome(line)
                if outcome is not None:
                    return Result(events, outcome)
                continue
            try:
                view = view_of(line)
            except Exception as error:  # the API's error event, as its SDK raises it
                if not is_stream_failure(error):
                    raise
                details = line.get("error")
                kind = details.get("type") if isinstance(details, dict) else None
                return Result(events, f"api_error:{kind or 'APIStatusError'}")
            if view is not None:
                events += [event_to_json(event) for event in adapter.feed(view)]
        events += [event_to_json(event) for event in adapter.finish()]
    except StreamProtocolError as error:
        return Result(events, error.code)
    return Result(events, DONE)


def _provider_items(
    lines: Iterable[dict[str, Any]],
    done: object,
    ended: list[str],
    api_error: Callable[..., Exception] | None = None,
) -> Iterator[Any]:
    """The `data` objects a client reads: a `done` line as the dialect's `[DONE]`; at a
    wire directive that ends the answer, its outcome kept in `ended` and the items end."""
    for line in lines:
        if "harness" not in line:
            yield line
        elif line["harness"] == DONE_LINE:
            yield done
        else:
            outcome = _wire_outcome(line, api_error)
            if outcome is not None:
                ended.append(outcome)
                return


def _provider_result(
    lines: Iterable[dict[str, Any]], provider: str, options: Mapping[str, Any]
) -> Result:
    found = registered(provider)
    driver = found.to_model_events
    done = getattr(found.module("adapter"), "DONE", None)
    api_error = found.reading.direct_builders(False).api_error if found.has("reading") else None
    ended: list[str] = []
    events: list[dict[str, Any]] = []
    try:
        for event in driver(_provider_items(lines, done, ended, api_error), **options):
            if ended:  # the answer ended at a directive: the adapter's end is never reached
                break
            events.append(event_to_json(event))
    except StreamProtocolError as error:
        return Result(events, ended[0] if ended else error.code)
    except APIErrorEvent as error:
        details = error.body.get("error") if isinstance(error.body, dict) else None
        kind = details.get("type") if isinstance(details, dict) else None
        return Result(events, f"api_error:{kind or 'APIStatusError'}")
    if ended:
        return Result(events, ended[0])
    return Result(events, DONE)


# -- cases ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Case:
    """One stream for the command, and what the harness's adapter makes of it.

    `responses` holds one response's lines (events and directives), or a session's turns
    in the order the requests are answered; the last one is judged (the earlier ones
    answer retries). `source` is the cassette it is, or the good one it derives from."""

    name: str
    responses: tuple[list[dict[str, Any]], ...]
    expected: Result
    source: str
    fault: str | None = None
    #: what the case's stream shows, in plain words: the fault row's description, or the
    #: cassette header's
    description: str = ""
    #: the provider whose dialect the stream is in, and for one other than Anthropic the
    #: request fields its rules read and its policy (the adapter's keywords)
    provider: str = ANTHROPIC
    request: Mapping[str, Any] = field(default_factory=dict)
    policy: Mapping[str, Any] = field(default_factory=dict)

    @property
    def header_line(self) -> dict[str, Any] | None:
        """The first line of the case on the command's input (None for Anthropic's cases):
        the provider, the request fields the rules read, the policy."""
        if not dialect(self.provider).own_cases:
            return None
        return {
            "harness": "case",
            "provider": self.provider,
            "request": dict(self.request),
            "policy": dict(self.policy),
        }

    @property
    def wire(self) -> bool:
        """Whether only a client over HTTP can be given this case (stdin mode skips it)."""
        return len(self.responses) > 1 or any(
            _wire_outcome(line) is not None for line in self.responses[-1] if "harness" in line
        )

    @property
    def events(self) -> list[dict[str, Any]]:
        """The raw events of the stdin protocol: the event lines, in order, no directive
        but Chat's `[DONE]` (the line `{"harness": "done"}`)."""
        return [
            line
            for line in self.responses[-1]
            if "harness" not in line or line["harness"] == DONE_LINE
        ]

    def to_json(self) -> dict[str, Any]:
        """The case as `harness conform --list` prints it."""
        shown: dict[str, Any] = {
            "case": self.name,
            "source": self.source,
            "fault": self.fault,
            "wire": self.wire,
            "expected": self.expected.to_json(),
        }
        header = self.header_line
        if header is not None:
            shown.update(provider=self.provider, request=header["request"])
            shown["policy"] = header["policy"]
        if self.wire:
            shown["responses"] = list(self.responses)
        else:
            shown["events"] = self.events
        return shown


def _lines(path: str | Path) -> list[dict[str, Any]]:
    return [line.data for line in Cassette(path).lines()]


def _provider_cases(name: str, path: str, cassette: Cassette) -> Iterator[Case]:
    """An OpenAI cassette's case, its variants under another request or policy, then, for
    a good stream, one case per applicable fault of the provider's catalogue."""
    provider = cassette.provider
    module = conform_module(provider)
    request, policy = dict(module.REQUEST), dict(module.POLICY)
    lines = [line.data for line in cassette.lines()]

    def made(case_name: str, responses: tuple[list[dict[str, Any]], ...], **fields: Any) -> Case:
        asked, ruled = fields.pop("request", request), fields.pop("policy", policy)
        expected = expected_result(responses[-1], provider, {**asked, **ruled})
        return Case(
            case_name,
            responses,
            expected,
            path,
            provider=provider,
            request=asked,
            policy=ruled,
            **fields,
        )

    case = made(name, (lines,), description=cassette.description)
    yield case
    for variant, varied, asked, ruled, words in module.variants(name, lines):
        yield made(
            f"{name}.{variant}",
            (varied,),
            request=asked,
            policy=ruled,
            fault=variant,
            description=words,
        )
    if case.expected.outcome != DONE or case.wire:
        return
    for fault in fault_variants(provider, lines):
        yield made(
            f"{name}.{fault.fault.name}",
            tuple(fault.responses),
            fault=fault.fault.name,
            description=fault.fault.description,
        )


def _cassette_cases(name: str, path: str, provider: str = ANTHROPIC) -> Iterator[Case]:
    """The cassette's case, then, for a good stream, one case per applicable fault."""
    cassette = Cassette(path)
    if cassette.provider != provider:
        raise InputError(
            f"{path}: a cassette of {cassette.provider}, not of {provider} "
            f"(harness conform --provider {cassette.provider} judges it)"
        )
    if dialect(provider).own_cases:
        yield from _provider_cases(name, path, cassette)
        return
    anthropic_only(cassette, "harness conform")
    lines = [line.data for line in cassette.lines()]
    case = Case(name, (lines,), expected_result(lines), path, description=cassette.description)
    yield case
    if case.expected.outcome != DONE or case.wire:
        return
    for variant in derive_variants(case.events):
        responses = tuple(variant.responses)
        yield Case(
            f"{name}.{variant.fault.name}",
            responses,
            expected_result(responses[-1]),
            path,
            variant.fault.name,
            variant.fault.description,
        )


def _session_case(name: str, folder: str, turns: list[str]) -> Case:
    responses = tuple(_lines(turn) for turn in turns)
    description = Cassette(turns[-1]).description if turns else ""
    return Case(name, responses, expected_result(responses[-1]), folder, description=description)


def _found(root: str) -> Iterator[tuple[str, str, list[str]]]:
    """(name, path, turns) of a PATH: a session folder is one case, its turns in order;
    any other folder, each `*.jsonl` below it (turns of sessions inside it included)."""
    if not os.path.isdir(root):
        yield Path(root).stem, root, []
        return
    if is_session_folder(root):
        yield Path(root).name, root, [str(path) for path in turn_files(root)]
        return
    for path in expand_paths([root]):
        yield os.path.relpath(path, root).removesuffix(".jsonl"), path, []


def _library_files() -> list[str]:
    """The library's cases: its loose cassettes by name, then each session's turns in turn
    order (what a turn is: `harness._cassette.sessions`)."""
    root = library_path()
    sessions = root / "sessions"
    files = sorted(str(path) for pattern in _LOOSE_GLOBS for path in root.glob(pattern))
    folders = sorted(sessions.iterdir()) if sessions.is_dir() else []
    turns = [turn for folder in folders if folder.is_dir() for turn in turn_files(folder)]
    return files + [str(turn) for turn in turns]


def _provider_library(folder: Path) -> list[tuple[str, str, list[str]]]:
    """A provider's default cases: its library's cassettes (the top level, `errors/`)."""
    if not folder.is_dir():
        raise InputError(f"{folder}: the provider's cassette library is not here: give PATH")
    files = sorted(str(path) for pattern in _LOOSE_GLOBS for path in folder.glob(pattern))
    return [(os.path.relpath(path, folder).removesuffix(".jsonl"), path, []) for path in files]


def collect_cases(paths: Sequence[str] = (), provider: str = ANTHROPIC) -> list[Case]:
    """The cases of the paths given (files, folders of `*.jsonl`, session folders), or of
    the provider's library; each good cassette followed by its fault variants (and, for
    a provider whose rules read the request or a policy, its variants under those).

    A bad cassette raises `CassetteError`; two cases of one name, a cassette of another
    provider or an unknown provider raise `InputError`."""
    found: list[tuple[str, str, list[str]]]
    library = dialect(provider).library
    if paths:
        found = []
        for root in paths:
            below = list(_found(root))
            if not below:
                raise InputError(f"{root}: no cassettes (*.jsonl) in the folder")
            found += below
    elif library is not None:
        found = _provider_library(library)
    else:
        root = str(library_path())
        found = [
            (os.path.relpath(path, root).removesuffix(".jsonl"), path, [])
            for path in _library_files()
        ]
    cases: list[Case] = []
    for name, path, turns in found:
        if turns and not dialect(provider).own_cases:
            cases.append(_session_case(name, path, turns))
        elif turns:
            raise InputError(f"{path}: harness conform takes no session folder of {provider}")
        else:
            cases.extend(_cassette_cases(name, path, provider))
    seen: dict[str, Case] = {}
    for case in cases:
        other = seen.setdefault(case.name, case)
        if other is not case:
            raise InputError(f"{case.source}: two cases named {case.name!r} (also {other.source})")
    return cases


def write_case(case: Case, folder: str | os.PathLike[str]) -> Path:
    """Write the case's cassette (`<name>.jsonl`), or its session folder (`<name>/turn-NN`)."""
    metadata: dict[str, Any] = {"fault": case.fault} if case.fault else {}
    origin = case.source
    case_header = case.header_line
    if case_header is not None:  # what replay does not know: the request and the policy
        metadata["provider"] = case.provider
        asked = orjson.dumps(case_header["request"]).decode()
        origin += f"; request {asked}, policy {orjson.dumps(case_header['policy']).decode()}"
    header = make_header(
        f"harness conform case {case.name} (from {origin})",
        expect=case.expected.outcome,
        **metadata,
    )
    if len(case.responses) == 1:
        path = Path(folder, f"{case.name}.jsonl")
        path.parent.mkdir(parents=True, exist_ok=True)
        write_cassette(path, case.responses[0], header=header)
        return path
    session = Path(folder, case.name)
    write_turns(session, case.responses, header=header)
    return session


# -- running a command ------------------------------------------------------------------


def _shown(text: str) -> str:
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."


#: A line of standard error that names an error: `TypeError: ...`, Python's last
#: traceback line, `panic: ...`, Rust's `thread 'main' panicked at ...`, `error: ...`.
_ERROR_LINE: Final = re.compile(
    r"^([\w.$]*(Error|Exception)\b|(panic|error|fatal)\b)|panicked at", re.IGNORECASE
)


def first_error_lines(stderr: bytes, count: int = _ERROR_LINES) -> list[str]:
    """What a crashed command's standard error says first: from its first line that names
    an error, `count` lines (or its first lines when none does), each shortened."""
    lines = [line.strip() for line in stderr.decode("utf-8", errors="replace").splitlines()]
    lines = [line for line in lines if line]
    at = next((n for n, line in enumerate(lines) if _ERROR_LINE.search(line)), 0)
    return [_shown(line) for line in lines[at : at + count]]


def read_output(
    stdout: bytes, stderr: bytes = b"", status: int | None = 0, provider: str = ANTHROPIC
) -> Result:
    """A command's standard output as the protocol reads it: events, then perhaps an error
    line `{"type": "error", "message": ..., "error_type"?: ...}`, which must be the last
    (its message read against the provider's table)."""
    return read_lines(stdout.splitlines(), stderr, status, provider)


def read_lines(
    lines: Sequence[bytes],
    stderr: bytes = b"",
    status: int | None = 0,
    provider: str = ANTHROPIC,
) -> Result:
    """`read_output` over the output's lines."""
    events: list[dict[str, Any]] = []
    outcome: str | None = None
    message: str | None = None
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            line = orjson.loads(raw)
        except orjson.JSONDecodeError:
            line = None
        text = _shown(raw.decode("utf-8", errors="replace"))
        if not isinstance(line, dict):
            return Result(
                events, outcome or "", message, f"line {number} is not a JSON object: {text}"
            )
        if outcome is not None:
            return Result(events, outcome, message, f"line {number} follows the error line: {text}")
        if line.get("type") != "error":
            events.append(line)
            continue
        message = str(line.get("message", ""))
        error_type = line.get("error_type")
        outcome = f"api_error:{error_type}" if error_type else outcome_of_message(message, provider)
    if outcome is not None:
        return Result(events, outcome, message)
    if events and events[-1] == {"type": "done"}:
        return Result(events, DONE)
    return Result(
        events,
        "",
        problem=f"{CRASHED} (exit status {status})",
        stderr=tuple(first_error_lines(stderr)),
    )


def _payload(case: Case, *, events: bool = True) -> bytes:
    """What the command reads of a case: its header line (not for Anthropic), then its
    events (in stdin mode)."""
    header = case.header_line
    lines = ([header] if header is not None else []) + (case.events if events else [])
    return b"".join(orjson.dumps(line) + b"\n" for line in lines)


def run_case(
    case: Case,
    command: Sequence[str],
    *,
    timeout: float = DEFAULT_TIMEOUT_S,
    env: Mapping[str, str] | None = None,
    stdin: bool = True,
) -> Result:
    """Run `command` once for `case`: its events on standard input (or nothing, with
    `stdin=False`: the command asks a server), and read what it prints.

    The command runs in a process group of its own, read with caps (`harness._testing
    .bounded`) and killed whole when it outlives `timeout` seconds."""
    process = BoundedProcess(command, env)
    process.send(_payload(case, events=stdin), close=True)
    return exchange_result(process.exchange(time.monotonic() + timeout), timeout, case.provider)


def exchange_result(exchange: Exchange, timeout: float, provider: str = ANTHROPIC) -> Result:
    """The result of one case's exchange: its output read, or the cap or timeout it hit."""
    if exchange.failure is None:
        return read_lines(exchange.lines, exchange.stderr, exchange.status, provider)
    got = read_lines(exchange.lines, provider=provider)
    failure = exchange.failure
    if failure.startswith(TIMED_OUT):
        failure = f"{TIMED_OUT} after {timeout:g} s{failure.removeprefix(TIMED_OUT)}"
    return Result(got.events, got.outcome, got.message, failure)


# -- judging ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Verdict:
    """One case judged: whether the command agreed, and where it first did not."""

    case: Case
    got: Result
    agree: bool
    difference: str | None = field(default=None)

    @property
    def outcome_agrees(self) -> bool:
        """Whether the outcomes agree (the events may still differ)."""
        return _outcome_agrees(self.case.expected.outcome, self.got.outcome)

    def to_json(self) -> dict[str, Any]:
        return {
            "case": self.case.name,
            "expected": self.case.expected.to_json(),
            "got": self.got.to_json(),
            "agree": self.agree,
        }


def _outcome_agrees(expected: str, got: str) -> bool:
    """Equal outcomes; a connection failure is any error line that is neither a table
    message nor an API error (each SDK names its own exception: docs/conform.md)."""
    return got == expected or (expected.startswith(_CONNECTION_ERROR) and got == UNRECOGNISED)


def describe(result: Result) -> str:
    """An outcome in a few words: the code, or what went wrong with the output."""
    if result.problem is not None:
        if result.stderr:
            return f"{result.problem}, stderr: {' | '.join(result.stderr)}"
        return result.problem
    if result.outcome == UNRECOGNISED:
        return f"an error no row of the table recognises: {_shown(str(result.message))!r}"
    return result.outcome


def _event_text(event: dict[str, Any] | None, result: Result) -> str:
    if event is not None:
        return _shown(orjson.dumps(event).decode())
    return f"the end ({describe(result)})"


def judge(case: Case, got: Result) -> Verdict:
    """Compare a command's result with the expected one: events equal, outcomes agreeing."""
    expected = case.expected
    agree = (
        got.problem is None
        and got.events == expected.events
        and _outcome_agrees(expected.outcome, got.outcome)
    )
    if agree:
        return Verdict(case, got, True)
    for number, (want, have) in enumerate(zip_longest(expected.events, got.events), start=1):
        if want != have:
            difference = (
                f"event {number}: expected {_event_text(want, expected)}, "
                f"got {_event_text(have, got)}"
            )
            return Verdict(case, got, False, difference)
    agreeing = f"the {len(got.events)} events agree" if got.events else "no events before it"
    return Verdict(case, got, False, f"the outcome differs ({agreeing})")


# -- a run ------------------------------------------------------------------------------


def _judged(cases: Sequence[Case], run: Any, jobs: int) -> Iterator[Verdict]:
    """Each case run (by `run(case) -> Result`) and judged, `jobs` at a time, in case order."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for case, got in zip(cases, pool.map(run, cases), strict=True):
            yield judge(case, got)


def run_cases(
    cases: Sequence[Case],
    command: Sequence[str],
    *,
    jobs: int = 1,
    timeout: float = DEFAULT_TIMEOUT_S,
    serve: bool = False,
    persistent: bool = False,
    environ: Mapping[str, str] = os.environ,
) -> Iterator[Verdict]:
    """Run the command on each case and judge it. Stdin mode takes the cases that are not
    `wire`; with `serve`, every case is answered over HTTP by a `CassetteServer` on
    127.0.0.1, the command told where (`ANTHROPIC_BASE_URL`) and which (`HARNESS_CASSETTE`,
    for the `x-harness-cassette` header), with a dummy API key in place of any real one.
    With `persistent`, `jobs` processes of the command each handle case after case
    (`harness._testing.persistent`)."""
    from harness._testing.persistent import Worker, Workers

    if not serve:
        stdin_cases = [case for case in cases if not case.wire]
        if not persistent:

            def run_one(case: Case) -> Result:
                return run_case(case, command, timeout=timeout)

            yield from _judged(stdin_cases, run_one, jobs)
            return
        workers = Workers(lambda number: Worker(command), jobs)

        def run_next(case: Case) -> Result:
            with workers.lend() as worker:
                exchange = worker.exchange(_payload(case), timeout)
                return exchange_result(exchange, timeout, case.provider)

        try:
            yield from _judged(stdin_cases, run_next, jobs)
        finally:
            workers.close()
        return
    if cases and dialect(cases[0].provider).own_cases:
        from harness._testing.served_cases import run_served as served_run

        yield from served_run(
            cases, command, jobs=jobs, timeout=timeout, persistent=persistent, environ=environ
        )
        return
    import tempfile

    from harness._http.hosting import ServerThread
    from harness._http.server import CassetteServer
    from harness._replay.clients import DUMMY_API_KEY

    with tempfile.TemporaryDirectory(prefix="harness-conform-") as folder:
        for case in cases:
            write_case(case, folder)
        server = CassetteServer([folder], match_on=None)
        unanswered = _Unanswered()
        aliases = _Aliases()
        app = server.app()
        app.middlewares.append(aliases.middleware())
        app.router.add_route("*", "/{path:.*}", unanswered.answer)
        env = dialect(ANTHROPIC).client_env
        with ServerThread(app) as url:
            keys = dict.fromkeys(env.key_variables, DUMMY_API_KEY)  # never a real key
            base = {**environ, env.base_url_variable: url, **keys}
            yield from judged_served(
                cases,
                command,
                base,
                jobs=jobs,
                timeout=timeout,
                persistent=persistent,
                point=aliases.point,
                noted=unanswered.noted,
                payload=lambda case: b"",
            )


def judged_served(
    cases: Sequence[Case],
    command: Sequence[str],
    base: Mapping[str, str],
    *,
    jobs: int,
    timeout: float,
    persistent: bool,
    point: Callable[[str, str], None],
    noted: Callable[[str, Result], Result],
    payload: Callable[[Case], bytes],
) -> Iterator[Verdict]:
    """Each case run by `command` against a server already listening (its address in the
    environment `base`), the case named by `CASSETTE_ENV`, and judged. With `persistent`,
    one process a job: `point(worker, case)` tells the server which case a worker's own
    name stands for, and `payload(case)` is what the worker reads for it on stdin.
    `noted(case, result)` adds what the server saw of the case (requests it could not
    answer)."""
    from harness._testing.persistent import Worker, Workers

    def run(case: Case) -> Result:
        env = {**base, CASSETTE_ENV: case.name}
        got = run_case(case, command, timeout=timeout, env=env, stdin=False)
        return noted(case.name, got)

    if not persistent:
        yield from _judged(cases, run, jobs)
        return

    def worker(number: int) -> Worker:
        name = f"{WORKER_CASSETTE}{number}"
        return Worker(command, {**base, CASSETTE_ENV: name}, name)

    pool = Workers(worker, jobs)

    def run_next(case: Case) -> Result:
        with pool.lend() as lent:
            point(lent.name, case.name)
            exchange = lent.exchange(payload(case), timeout)
            got = exchange_result(exchange, timeout, case.provider)
        return noted(case.name, got)

    try:
        yield from _judged(cases, run_next, jobs)
    finally:
        pool.close()


class _Aliases:
    """Each persistent worker's own cassette name, pointed at the case it is handling:
    the server hands out the cases in turn, a session's turns in order."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}

    def point(self, alias: str, name: str) -> None:
        self.names[alias] = name

    def middleware(self) -> Any:
        from aiohttp import web

        from harness._http.server import CASSETTE_HEADER

        @web.middleware
        async def aliased(request: web.Request, handler: Any) -> web.StreamResponse:
            target = self.names.get(request.headers.get(CASSETTE_HEADER, ""))
            if target is not None:
                headers = request.headers.copy()
                headers[CASSETTE_HEADER] = target
                request = request.clone(headers=headers)
            response: web.StreamResponse = await handler(request)
            return response

        return aliased


class _Unanswered:
    """The requests a `--serve` run's server had no route for (a base URL without `/v1`),
    kept by the case their header names, the first few of each, to be shown."""

    KEPT: Final = 3

    def __init__(self) -> None:
        self.asked: dict[str, list[str]] = {}

    async def answer(self, request: Any) -> Any:
        from harness._http.hosting import api_error
        from harness._http.server import CASSETTE_HEADER

        path = f"{request.method} {request.path}"
        kept = self.asked.setdefault(request.headers.get(CASSETTE_HEADER, ""), [])
        if len(kept) < self.KEPT:
            kept.append(path)
        return api_error(404, f"harness conform: no cassette answers {path}")

    def noted(self, name: str, got: Result) -> Result:
        """The result with the requests of the case that reached no cassette."""
        asked = self.asked.pop(name, None)
        return dataclasses.replace(got, asked=tuple(asked)) if asked else got
