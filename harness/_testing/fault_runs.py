"""Run the fault catalogue against any adapter, or your own code, and report what it misses.

A `FaultCase` is one row of `harness.faults.CATALOGUE` applied to a good cassette: the
broken variant is written as a cassette of its own (so it can be replayed by hand with
`harness replay`), replayed through the adapter under test, and compared with the code
the row must produce. Unlike `replay`, every exception the adapter raises is kept, since
a crash (a `ValueError` from `json.loads`, say) is exactly what the report should show.
The HTTP-level and wire-level rows are served by a cassette client, so the adapter
reads what the SDK makes of them.

With a client fixture, the client serves the variant instead, and the test calls your
own function under `with fault_variant.expect_failure():`. It passes when the code
raised anything (it noticed; given exception types, one of those), and fails with one
line naming the function and what it returned when the broken stream was accepted
silently, unless the marker's `accept=` says why the code accepts that row on purpose.
For a row whose expected outcome is `done` it is the other way round: the code must
return normally. Raising is `not recovered` on the row a retry recovers from
(`http_429_then_ok`, a session whose first answer is retried: the SDK's own where it
retries by default, else one the client or the request sets up), and a crash on any other
(a deviation the adapter tolerates, Chat's `repeat_call_identity`). Each case keeps its
`verdict`, which the plugin sums up at the end of the run.
"""

from __future__ import annotations

import functools
import inspect
import json
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType, TracebackType
from typing import TYPE_CHECKING, Any, Final

from harness._exceptions import ANTHROPIC, error_chain

if TYPE_CHECKING:
    from harness._cassette.codec import CassetteSource
    from harness._events import ModelEvent
    from harness.faults import Fault

__all__ = ["DOES_NOT_APPLY", "Adapter", "ExpectFailure", "FaultCase", "run_fault"]

#: An adapter: the SDK's raw stream events in, internal events out (as `to_model_events`).
Adapter = Callable[[Iterable[Any]], Iterable["ModelEvent"]]

#: The read timeout a client serving the `stall` row gets (its stall is far longer), so the
#: timeout fires at once instead of after the SDK's default 600 s.
STALL_TIMEOUT_S: Final = 0.05
#: `derive_into`'s host when none is chosen: the one the good cassette's header names
RECORDED_HOST: Final = "recorded"


@dataclass(slots=True, repr=False)
class FaultCase:
    """One fault row against one adapter: what it must give, and what the adapter gave.

    Public fields: `fault` (the catalogue row: `.name`, `.expect`, `.description`),
    `expected_code` (the outcome the harness's own adapter gives: an error-table code,
    `api_error:<type>`, `connection_error:<class>`, or `done`), `path` (the broken
    variant's cassette, to replay by hand), `responses` (every file a client is answered
    from, in order: one, or a session's turns with the broken one among them), `events`
    and `error` (what the adapter under test made of the variant). `caught`, `report()`,
    `assert_caught()` judge the adapter; `expect_failure()` judges your own code, served
    the variant by a client.
    """

    fault: Fault
    expected_code: str
    path: Path
    events: list[ModelEvent] = field(default_factory=list)
    error: BaseException | None = None
    responses: list[Path] = field(default_factory=list)
    #: what the cassettes could not answer while the client fixtures served the variant
    #: (a read-only view of the serving replayer's `errors`, given when it is made)
    replay_errors: Sequence[Exception] = ()
    #: where the variant stands in `responses` (after a session's earlier turns)
    variant_index: int = 0
    #: the stop (finish) reasons the strict clients accept besides each API's own (the
    #: plugin's `harness_allow_stop_reasons`), for the report's strict verdict
    allow_stop_reasons: tuple[str, ...] = ()
    #: the compatible server whose profile the good stream, the row's expected outcome and
    #: the report's strict verdict are read under (docs/profiles.md), or None: the default
    profile: str | None = None
    #: set when the profile reads the row's variant as a good stream (it does not apply)
    tolerated: bool = False
    #: why the test accepts this row on purpose (the marker's `accept=`), or None
    accepted_because: str | None = None
    #: what the judged code raised: the code in `expect_failure()`'s block, or the
    #: adapter under `assert_caught()` (its `error`); None: nothing, or not judged yet
    raised: BaseException | None = None
    #: how the row was judged, for the session's summary: "caught", "accepted silently",
    #: "accepted on purpose", "wrong code" (the adapter's), "crashed", "not answered",
    #: "not recovered", "does not apply" (None: not judged)
    verdict: str | None = None

    def __repr__(self) -> str:
        return f"<FaultCase {self.fault.name}: expects {self.expected_code}>"

    @property
    def code(self) -> str | None:
        """What the adapter's outcome came to, in the catalogue's terms (None: no such code)."""
        from harness._replay.direct import failure_code

        return None if self.error is None else failure_code(self.error)

    @property
    def recoverable(self) -> bool:
        """Whether this row's stream completes (its expected outcome is `done`): the SDK's
        own retry recovers (`http_429_then_ok`), or the adapter tolerates it."""
        from harness.faults import DONE

        return self.expected_code == DONE

    @property
    def caught(self) -> bool:
        if self.recoverable:
            return self.error is None
        return self.code == self.expected_code

    @property
    def pending(self) -> bool:
        """Whether the variant is still to be derived (its good cassette is being recorded)."""
        return not self.responses

    @property
    def served(self) -> list[Path]:
        """The responses a client is answered from, in order: a session's earlier turns, the
        variant (repeated for the SDK's retries when it is the last), the later turns."""
        from harness._replay.calls import SDK_ATTEMPTS  # a broken server answers every retry

        responses = self.responses or [self.path]
        upto, later = responses[: self.variant_index + 1], responses[self.variant_index + 1 :]
        return [*upto, *[upto[-1]] * (0 if later else SDK_ATTEMPTS - 1), *later]

    @property
    def turn_served(self) -> list[Path]:
        """The faulted turn alone, as `served` answers it (one request and its retries)."""
        from harness._replay.calls import SDK_ATTEMPTS

        first = self.variant_index - len(self.fault.before)
        upto = (self.responses or [self.path])[first : self.variant_index + 1]
        return [*upto, *[upto[-1]] * (SDK_ATTEMPTS - 1)]

    @property
    def client_options(self) -> dict[str, Any]:
        """Options for a client serving this row: a short read timeout for `stall`."""
        return {"timeout": STALL_TIMEOUT_S} if self.fault.name == "stall" else {}

    def not_applying(self, good: str) -> str:
        """Judge the row as not applying to the good cassette named `good`; the line saying
        why, which the test is skipped with."""
        self.verdict = DOES_NOT_APPLY
        if self.tolerated:
            return (
                f"fault {self.fault.name} does not apply to {good} under profile "
                f"{self.profile}: the profile reads its variant as a good stream"
            )
        return f"fault {self.fault.name} does not apply to {good}"

    def expect_failure(
        self, *exception_types: type[BaseException], match: str | re.Pattern[str] | None = None
    ) -> ExpectFailure:
        """`with fault_variant.expect_failure(): your_function(client)` — see the module doc;
        with `exception_types` (and `match`), only those count as the code noticing."""
        __tracebackhide__ = True
        return ExpectFailure(self, exception_types, match)

    def report(self) -> str:
        """A few readable lines: the fault, what was expected, what came out, and the command
        that prints the variant's trace."""
        from harness._events import event_to_json
        from harness._testing.trace import trace_hint

        if self.error is None:
            got = "done" if self.recoverable else "the stream completed, as if nothing were wrong"
        elif self.code is None:
            got = f"the adapter crashed: {type(self.error).__name__}: {self.error}"
        else:
            got = f"{self.code} ({self.error})"
        shown = ", ".join(json.dumps(event_to_json(event)) for event in self.events)
        return "\n".join(
            [
                f"fault {self.fault.name}: {self.fault.description}",
                f"  expected: {self.expected_code}",
                f"  got:      {got}",
                f"  events:   {shown or '(none)'}",
                f"  trace:    {trace_hint(self.path)}",
            ]
        )

    def assert_caught(self) -> None:
        """Raise `AssertionError` with `report()` unless the adapter gave the expected code."""
        __tracebackhide__ = True
        if self.pending:
            raise AssertionError(
                f"fault {self.fault.name}: no variant yet: its good cassette is being recorded "
                "by the code's first request through the client; judge the adapter after it"
            )
        self.raised = self.error
        if self.caught:
            self.verdict = "caught"
        elif self.accepted_because is not None:
            self.verdict = "accepted on purpose"
        else:
            if self.error is None:
                self.verdict = "accepted silently"
            else:
                self.verdict = "crashed" if self.code is None else "wrong code"
            raise AssertionError(self.report())


def _in_asyncio(frame: FrameType) -> bool:
    return str(frame.f_globals.get("__name__", "")).startswith("asyncio")


#: Modules whose functions are never "the function the test called": the harness's own,
#: the SDK's and its HTTP stack's (inline code calling the client), and pytest's (its
#: output capture runs at the block's level when the block prints).
_NOT_THE_CODE: Final = (
    "harness.",
    "anthropic.",
    "openai.",
    "httpx",
    "httpcore",
    "_pytest.",
    "pluggy.",
)
_GENERATOR_FLAGS: Final = inspect.CO_GENERATOR | inspect.CO_ASYNC_GENERATOR


@functools.cache
def _standard_library() -> tuple[str, ...]:
    """The standard library's folders: its machinery (a thread pool's shutdown and weakref
    callback, `contextlib`, the text codecs a `print` runs) is never the code's call."""
    import sysconfig

    paths = sysconfig.get_paths()
    return tuple({os.path.join(paths[key], "") for key in ("stdlib", "platstdlib")})


def _in_standard_library(filename: str) -> bool:
    if filename.startswith("<"):  # <frozen importlib._bootstrap>, <string>
        return True
    installed = f"{os.sep}site-packages{os.sep}" in filename or "dist-packages" in filename
    return not installed and filename.startswith(_standard_library())


def _the_codes_call(frame: FrameType) -> bool:
    """Whether a frame returning to the `with` block is a function the block called by its
    name: not a generator resumed or closed, a protocol method, or library machinery."""
    code = frame.f_code
    if code.co_flags & _GENERATOR_FLAGS:
        return False
    name = code.co_name
    if name.startswith("<") or (name.startswith("__") and name.endswith("__")):
        return False  # <lambda>, <genexpr>; `__exit__`, `__get__`: never called by name
    module = str(frame.f_globals.get("__name__", ""))
    return not module.startswith(_NOT_THE_CODE) and not _in_standard_library(code.co_filename)


def _shown(value: object, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _first_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__


#: The verdict of a row the good cassette, or the code's request, gives nothing to break.
DOES_NOT_APPLY: Final = "does not apply"
#: The verdicts the marker's `accept=` turns into a pass: the code took the row as it came
#: (or refused a stream that completes: `crashed` on a `done` row counts only then).
_ACCEPTABLE: Final = frozenset({"accepted silently", "not recovered"})


class ExpectFailure:
    """The context manager of `FaultCase.expect_failure()`.

    It watches (with `sys.setprofile`, restored after) which function the `with` block
    called last and what that returned, so the report can name both: a function the block
    called by its name, never a generator it resumed, a `with` statement's exit, or the
    harness's, the SDK's or the standard library's machinery (a thread pool's helpers);
    the block's own line when it called none (inline code). When that function is
    asyncio's (`asyncio.run(agent_step(client))`), the coroutine the event loop ran is
    named instead.

    `exception_types` (and `match`, a regular expression searched in the exception's
    text) narrow what counts as caught: an exception of one of the types, raised or in
    the raised one's chain (`__cause__`, `__context__`). Anything else fails the row as a
    crash. Without them, any exception counts.
    """

    def __init__(
        self,
        case: FaultCase,
        exception_types: tuple[type[BaseException], ...] = (),
        match: str | re.Pattern[str] | None = None,
    ) -> None:
        __tracebackhide__ = True
        for kind in exception_types:
            if not (isinstance(kind, type) and issubclass(kind, BaseException)):
                raise TypeError(f"expect_failure() takes exception types, not {kind!r}")
        self.case = case
        self.exception_types = exception_types
        self.match = match
        self._frame: FrameType | None = None
        self._previous: Any = None
        self.called: str | None = None
        self.returned: object = None
        self._called_asyncio = False
        self._coroutine: tuple[str, object] | None = None
        self._line = 0

    def _watch(self, frame: FrameType, event: str, arg: object) -> None:
        if self._previous is not None:
            self._previous(frame, event, arg)
        if event != "return" or frame.f_code is ExpectFailure.__enter__.__code__:
            return
        if frame.f_back is self._frame:
            if _in_asyncio(frame):
                self.called, self.returned = frame.f_code.co_name, arg
                self._called_asyncio = True
            elif _the_codes_call(frame):
                self.called, self.returned = frame.f_code.co_name, arg
                self._called_asyncio = False
        elif (
            frame.f_code.co_flags & inspect.CO_COROUTINE
            and frame.f_back is not None
            and _in_asyncio(frame.f_back)
            and not _in_asyncio(frame)
        ):
            self._coroutine = (frame.f_code.co_name, arg)  # the last return is the value

    def __enter__(self) -> ExpectFailure:
        self._frame = sys._getframe(1)
        self._line = self._frame.f_lineno
        self._previous = sys.getprofile()
        sys.setprofile(self._watch)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> bool:
        __tracebackhide__ = True
        sys.setprofile(self._previous)
        block = self._frame
        self._frame = None
        if self._called_asyncio and self._coroutine is not None:
            self.called, self.returned = self._coroutine
        if error is not None and not isinstance(error, Exception):
            return False  # KeyboardInterrupt, a pytest exit: not the code's answer
        where = "the block"
        if block is not None:
            where = f"the block at {Path(block.f_code.co_filename).name}:{self._line}"
        if traceback is not None and traceback.tb_next is None:
            self.called = None  # the block raised it itself, not the function it called
        self.case.raised = error
        problem = self._problem(error, where)
        if problem is None:
            self.case.verdict = "caught"
        elif self.case.accepted_because is not None and (
            self.case.verdict in _ACCEPTABLE
            or (self.case.recoverable and self.case.verdict == "crashed")
        ):
            self.case.verdict = "accepted on purpose"
            return True
        else:
            raise AssertionError(problem) from None
        return True

    def _expected(self, error: BaseException) -> bool:
        """Whether `error` (or its chain) is one this block expects."""
        if not self.exception_types and self.match is None:
            return True
        kinds = self.exception_types or (Exception,)
        return any(
            isinstance(link, kinds) and (self.match is None or re.search(self.match, str(link)))
            for link in error_chain(error)
        )

    def _expectation(self) -> str:
        kinds = " or ".join(kind.__name__ for kind in self.exception_types) or "an exception"
        return kinds if self.match is None else f"{kinds} matching {str(self.match)!r}"

    def _problem(self, error: BaseException | None, where: str) -> str | None:
        from harness._testing.trace import trace_hint

        case = self.case
        name = case.fault.name
        code = self.called or where
        if case.replay_errors:
            case.verdict = "not answered"
            return f"{code} on {name}: the cassettes could not answer: {case.replay_errors[0]}"
        if case.recoverable and error is not None and case.fault.before:
            case.verdict = "not recovered"
            return (
                f"{code} raised {_first_line(error)} on {name}: a retry recovers from it (the "
                "harness's adapter completes the stream), the SDK's own where it retries by "
                "default, else one the client or the request sets up"
            )
        if case.recoverable and error is not None:
            case.verdict = "crashed"
            return (
                f"{code} crashed with {_first_line(error)} on {name}, a stream the harness's "
                f"adapter completes ({case.fault.description})"
            )
        if error is not None and not case.recoverable and not self._expected(error):
            case.verdict = "crashed"
            return (
                f"{code} crashed with {_first_line(error)} on {name}, not a caught fault "
                f"(expect_failure expects {self._expectation()})"
            )
        if not case.recoverable and error is None:
            from harness._strict.report import strict_verdict

            case.verdict = "accepted silently"
            did = (
                f"{code} returned {_shown(self.returned)}"
                if self.called is not None
                else f"{where} raised nothing"
            )
            verdict = strict_verdict(
                case.turn_served, case.client_options, case.allow_stop_reasons, case.profile
            )
            return (
                f"{did} on {name}: the broken stream was "
                f"accepted silently (the harness's adapter fails it with {case.expected_code}; "
                f"{verdict}; "
                f"trace: {trace_hint(case.path)})"
            )
        return None


def _write_responses(
    variant_responses: list[list[dict[str, Any]]],
    case: FaultCase,
    good: str,
    folder: Path,
    provider: str = ANTHROPIC,
    host: str | None = None,
) -> list[Path]:
    """The variant's files: `<fault>.jsonl`, or a session folder `<fault>/turn-NN.jsonl`;
    their header names `provider` unless it is Anthropic (a header's default), the `host`
    the good stream was recorded on (its client's, its frames'), and the profile the
    expected outcome holds under, if any."""
    from harness._cassette.codec import make_header, write_cassette
    from harness._cassette.sessions import write_turns

    fault = case.fault
    named = {} if provider == ANTHROPIC else {"provider": provider}
    if host is not None:
        named["host"] = host
    judged = {} if case.profile is None else {"profile": case.profile}
    header = make_header(
        f"{fault.name}: {fault.description} (from {good})",
        fault=fault.name,
        expect=case.expected_code,
        **named,
        **judged,
    )
    if len(variant_responses) > 1:
        return write_turns(folder / fault.name, variant_responses, header=header)
    path = folder / f"{fault.name}.jsonl"
    write_cassette(path, variant_responses[0], header=header)
    return [path]


def _client_events(case: FaultCase, provider: str) -> Iterator[Any]:
    """The SDK's stream of a wire row, read by a cassette client (errors raised as it would)."""
    from harness._replay.clients import cassette_client
    from harness._testing.plugin_providers import request_items

    client = cassette_client(case.turn_served, match_on=None, **case.client_options)
    try:
        yield from request_items(client, provider)
    finally:
        client.close()


def _turns(good: Path) -> list[Path]:
    """A good cassette's responses: the file itself, or a session folder's turns in order."""
    from harness._replay.replayer import cassettes_from

    if not good.is_dir():
        return [good]
    return [Path(cassette.path) for cassette in cassettes_from([good])]


def faulted_turn(good: str | os.PathLike[str], turn: int | None) -> Path:
    """The response of `good` a fault breaks: the cassette, or turn `turn` of a session
    folder (1 is the first; None: the last). `InputError` for a turn the folder lacks."""
    from harness._exceptions import InputError

    turns = _turns(Path(good))
    if turn is None:
        return turns[-1]
    if not 1 <= turn <= len(turns):
        held = f"{len(turns)} turn{'s' if len(turns) != 1 else ''}"
        raise InputError(f"{good}: fault_turn={turn}, but the session folder holds {held}")
    return turns[turn - 1]


def derive_into(
    case: FaultCase,
    adapter: Adapter,
    good: str | os.PathLike[str],
    folder: Path,
    turn: int | None = None,
    *,
    host: str | None = RECORDED_HOST,
) -> bool:
    """Derive `case.fault`'s variant of the good cassette into `case`, write it in `folder`,
    replay it through `adapter`; False when the fault does not apply (no tool block, or a
    variant `case.profile` reads as a good stream: `case.tolerated`). The variant's header
    names `host`, where it is served (None or `direct`: the direct API), else the host the
    good stream was recorded on: a Bedrock row's frames are read as the client reads them.

    A session folder keeps its turns: the fault breaks turn `turn` (None: the last), the
    turns before it are answered as recorded, then the variant (and the row's own earlier
    responses, a 429), then the turns after it. The broken turn must replay to `done`
    (under `case.profile`), or `InputError` says it does not; the row's expected outcome
    is judged under the profile too (`harness.faults.expected_under`).
    """
    from harness._cassette.codec import Cassette
    from harness._exceptions import InputError
    from harness._replay.clients import DIRECT
    from harness._replay.direct import replay_outcome
    from harness._testing.plugin_providers import adapter_items

    turns = _turns(Path(good))
    broken_turn = faulted_turn(good, turn)
    reference = replay_outcome(broken_turn, profile=case.profile).error
    if reference is not None:
        under = "" if case.profile is None else f" under profile {case.profile}"
        good_under = [] if case.profile is not None else profiles_reading_good(broken_turn)
        hint = ""
        if good_under:
            hint = (
                f" (it replays to done under profile {', '.join(good_under)}: "
                "--harness-profile NAME, docs/profiles.md)"
            )
        raise InputError(
            f"the fault catalogue derives variants from a good stream, but {broken_turn} "
            f"ends in an error{under}: {reference}{hint}"
        )
    from harness.faults import expected_under, stream_lines

    fault = case.fault
    cassette = Cassette(broken_turn)
    provider = cassette.provider
    broken = fault.derive(stream_lines(cassette))
    if broken is None:
        return False
    expected = expected_under(
        fault, broken, provider=provider, profile=case.profile, header=cassette.header
    )
    if expected is None:
        case.tolerated = True
        return False
    case.expected_code = expected
    if host == RECORDED_HOST:
        host = cassette.host
    written = _write_responses(
        [*fault.before, broken],
        case,
        os.fspath(good),
        folder,
        provider,
        None if host == DIRECT else host,
    )
    at = turns.index(broken_turn)
    case.path = written[-1]
    case.responses = [*turns[:at], *written, *turns[at + 1 :]]
    case.variant_index = at + len(written) - 1
    wire = fault.wire
    events = _client_events(case, provider) if wire else adapter_items(Cassette(case.path))
    try:
        for event in adapter(events):
            case.events.append(event)
    except Exception as error:
        case.error = error
    return True


def profiles_reading_good(source: CassetteSource) -> list[str]:
    """The compatible-server profiles (docs/profiles.md) under which a cassette that does
    not replay to `done` by default does: what a good stream's refusal suggests. None for
    a provider without profiles."""
    from harness._cassette.codec import read_cassette
    from harness._providers import provider
    from harness._replay.direct import replay_outcome

    cassette = read_cassette(source)
    if not provider(cassette.provider).has_profiles:
        return []
    names = provider(cassette.provider).module("profiles").PROFILES
    return [
        name
        for name in names
        if replay_outcome(cassette, sdk_objects=False, profile=name).error is None
    ]


def pending_fault(fault: Fault, folder: Path) -> FaultCase:
    """A case whose good cassette is still to be recorded: `derive_into` fills it in."""
    return FaultCase(fault, fault.expect, folder / f"{fault.name}.jsonl")


def run_fault(
    adapter: Adapter,
    good: str | os.PathLike[str],
    fault: Fault,
    folder: Path,
    turn: int | None = None,
    *,
    profile: str | None = None,
) -> FaultCase | None:
    """Derive `fault`'s variant of the good cassette (or of a session folder's turn `turn`,
    None: the last), write it in `folder`, replay it through `adapter`; the good stream
    and the row's expected outcome read under the compatible server `profile`, if given.

    None when the fault does not apply to this cassette (no tool block: no tool faults; a
    variant the profile reads as a good stream).
    """
    case = pending_fault(fault, folder)
    case.profile = profile
    return case if derive_into(case, adapter, good, folder, turn) else None
