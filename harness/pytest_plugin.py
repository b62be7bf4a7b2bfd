"""The pytest plugin: your own code against cassettes, and the fault catalogue against it.

Registered through the `pytest11` entry point, so `import harness` never loads pytest,
and kept cheap to load (every pytest run in an environment that has the package loads
it): the harness's own modules and the SDK are imported inside the fixtures.

    @pytest.mark.cassette("interleaved")          # cassettes/interleaved.jsonl beside the test
    def test_calls_come_in_stop_order(harness_replay):
        assert harness_replay.error is None

Configuration, later wins: fixture < marker < command line. The cassette folder is the
`harness_cassette_dir` fixture (default `cassettes/` beside the test module), then the
marker's `dir=`, then `--harness-cassette-dir`; the record mode is the
`harness_record_mode` fixture (default `none`), then the marker's `record=`, then
`--harness-record`. The adapter is the `harness_adapter` fixture, which reads the ini
option `harness_adapter = pkg.module:function` (default `harness.to_model_events`).

    @pytest.mark.cassette("two_tools")            # or several names, or "session-folder/"
    def test_summary(harness_client, harness_requests):
        assert summarize(harness_client).startswith("I'll check")
        assert harness_requests[0].json["model"] == "claude-sonnet-5"

`harness_client` / `harness_async_client` are real `anthropic.Anthropic` /
`AsyncAnthropic` clients answered from the marked cassettes (one response a request, in
order) and `harness_requests` what they were sent; an OpenAI cassette's (its header's
`provider`) are `openai.OpenAI` / `AsyncOpenAI`, and `fault_variant` runs its provider's
catalogue (what differs by provider: `harness._testing.plugin_providers`). Under
`missing`/`all` they go live and record the answers instead
(`harness._testing.client_session`), with the key of the cassettes' SDK (`ANTHROPIC_API_KEY`,
`OPENAI_API_KEY`): a cassette not recorded yet names no provider, so the marker's
`sdk="openai"` says an OpenAI client records it. Where they are served is the ini option
`harness_host`, then the marker's `host=`, then `--harness-host` (`bedrock`: an
`anthropic.AnthropicBedrock`, `vertex`: an `AnthropicVertex`; none: the cassette header's
host), the run's choice only for cassettes whose dialect is served there; recording there
goes through the host's client with the user's cloud credentials. Under `drift` they
record the cassettes that exist again into a folder of their own (`--harness-drift-dir`),
and the end of the run says which answer in another shape now (`harness._testing.drift`).
Request matching is the `harness_match_on` fixture, then the marker's `match_on=` (None:
off). Strict clients (`harness.strict`: the adapter's rules at the transport) are the ini option
`harness_strict` (default false), then the marker's `strict=`, then `--harness-strict
on|off`; their stop-reason policy is `harness_allow_stop_reasons`, then
`--harness-allow-stop-reasons`. A compatible server's profile (`harness_profile`, then
`--harness-profile`: docs/profiles.md) reads its Chat cassettes everywhere: in the strict
clients, `harness_replay`'s default adapter and `fault_variant`, whose rows are judged
under it. `fault_variant` keeps its broken variants in pytest's
cache folder (or `--harness-variants-dir`), takes the marker's `accept=` for rows the
code accepts on purpose, and the end of the run sums up each test's rows (`FaultRows`);
`--harness-report PATH.html` (or `.json`) writes them as a page of fault rows x tests,
or as data (`harness._testing.fault_report`).
"""

from __future__ import annotations

import importlib
import os
import sys
import uuid
import warnings
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NoReturn, TypeVar

import pytest

from harness._exceptions import ANTHROPIC, InputError
from harness._modes import RecordMode
from harness._testing.fault_runs import DOES_NOT_APPLY, Adapter, FaultCase

if TYPE_CHECKING:
    from anthropic import Anthropic, AsyncAnthropic
    from syrupy.assertion import SnapshotAssertion

    from harness._replay.direct import Outcome
    from harness._replay.replayer import CapturedRequest
    from harness._testing.client_session import ClientSession
    from harness._testing.record_once import RecordGate
    from harness.snapshot import OutcomeOrValueSnapshot

__all__ = ["Adapter", "CassetteMark", "FaultCase", "adapter_outcome", "load_adapter"]

MARKER_KEYWORDS: Final = (
    "dir",
    "record",
    "request",
    "match_on",
    "fault_turn",
    "strict",
    "accept",
    "sdk",
    "host",
)


def api_key_variable() -> str:
    """The key `harness_replay`'s recording from a marker's `request=` needs: the default
    provider's SDK's (the one `harness._record.live` records with)."""
    from harness._providers import provider

    return provider(ANTHROPIC).client_env.key_variable


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("harness", "stream-harness: replay cassettes through a stream adapter")
    group.addoption(
        "--harness-cassette-dir",
        action="store",
        dest="harness_cassette_dir",
        default=None,
        metavar="DIR",
        help="folder where @pytest.mark.cassette names are looked up; overrides the marker's "
        "dir= and the harness_cassette_dir fixture (default: cassettes/ beside the test module)",
    )
    group.addoption(
        "--harness-record",
        action="store",
        dest="harness_record",
        choices=RecordMode.choices(),
        default=None,
        help="none (default): replay only; missing (alias once): record the cassettes that do "
        "not exist; "
        "all: re-record every cassette; drift: re-record every cassette into "
        "--harness-drift-dir, leaving the stored ones as they are, and report which answer in "
        "another shape now. Recording is live and needs the key of the "
        "cassette's SDK (ANTHROPIC_API_KEY, OPENAI_API_KEY); without it such tests are skipped",
    )
    group.addoption(
        "--harness-drift-dir",
        action="store",
        dest="harness_drift_dir",
        default=None,
        metavar="DIR",
        help="folder where --harness-record=drift writes the cassettes it records again, at "
        "their paths under the rootdir, and its report.txt (default: a new folder in the "
        "temporary one)",
    )
    group.addoption(
        "--harness-strict",
        action="store",
        dest="harness_strict",
        choices=("on", "off"),
        default=None,
        help="on: harness_client and harness_async_client are harness.strict clients (a broken "
        "stream raises StreamProtocolError in the code under test); off: plain ones. Overrides "
        "the marker's strict= and the harness_strict ini option",
    )
    group.addoption(
        "--harness-variants-dir",
        action="store",
        dest="harness_variants_dir",
        default=None,
        metavar="DIR",
        help="folder where fault_variant writes the broken variants a fault report's trace "
        "command replays, one subfolder a test (default: pytest's cache folder, "
        ".pytest_cache/d/stream-harness-variants; the test's tmp_path without the cache)",
    )
    group.addoption(
        "--harness-report",
        action="append",
        dest="harness_report",
        default=None,
        metavar="PATH",
        help="write the run's fault rows (fault_variant) at its end: PATH.html a page of "
        "fault rows x tests, each verdict linked to the variant it was served; PATH.json the "
        "same data for CI tools. Give it twice for both",
    )
    group.addoption(
        "--harness-allow-stop-reasons",
        action="store",
        dest="harness_allow_stop_reasons",
        default=None,
        metavar="LIST",
        help="stop reasons (OpenAI: finish reasons) the strict clients accept as completing "
        "an answer besides end_turn and tool_use (Chat: stop and tool_calls), comma-separated "
        "(max_tokens,length for a cut answer, either API's); overrides the "
        "harness_allow_stop_reasons ini option",
    )
    group.addoption(
        "--harness-profile",
        action="store",
        dest="harness_profile",
        default=None,
        metavar="NAME",
        help="the compatible server whose Chat Completions deviations the strict OpenAI "
        "clients read into OpenAI's form (vllm, gemini, ...: docs/profiles.md); overrides "
        "the harness_profile ini option",
    )
    group.addoption(
        "--harness-host",
        action="store",
        dest="harness_host",
        default=None,
        metavar="HOST",
        help="where harness_client and harness_async_client are served: bedrock "
        "(anthropic.AnthropicBedrock), vertex (AnthropicVertex) or direct (the API's own "
        "client), for every test whose cassettes' dialect is served there; overrides the "
        "marker's host= and the harness_host ini option (default: the host the cassette's "
        "header names, else direct)",
    )
    parser.addini(
        "harness_host",
        "where the client fixtures are served: bedrock, vertex or direct, for the cassettes "
        "whose dialect is served there (default: the host each cassette's header names)",
        default="",
    )
    parser.addini(
        "harness_profile",
        "the compatible server profile of the strict OpenAI clients (default: openai, "
        "OpenAI's own API)",
        default="",
    )
    parser.addini(
        "harness_strict",
        "whether the client fixtures are harness.strict clients: true or false (default: false)",
        default="false",
    )
    parser.addini(
        "harness_allow_stop_reasons",
        "stop reasons (OpenAI: finish reasons) the strict clients accept besides end_turn and "
        "tool_use (Chat: stop and tool_calls), comma-separated, as max_tokens,length "
        "(default: none)",
        default="",
    )
    parser.addini(
        "harness_adapter",
        "adapter the harness_replay fixture and the fault catalogue run, as pkg.module:function "
        "(default: harness.to_model_events)",
        default="",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "cassette(*names_or_paths, dir=None, record=None, request=None, match_on=..., "
        "fault_turn=None, strict=None, accept=None, sdk=None, host=None): the cassettes the "
        "harness fixtures replay (several, or a session folder, answer a client's requests in "
        "order; fault_variant breaks a session's turn fault_turn, default the last; strict: "
        "harness.strict clients; accept: {fault_name: why}, rows the code accepts on purpose; "
        "host: bedrock, vertex or direct, where the clients are served); a name is looked up "
        "in the cassette folder, .jsonl added",
    )
    config.stash[_RUN_ID] = uuid.uuid4().hex
    config.stash[_STRICT_INI] = _ini_bool(config, "harness_strict")
    config.stash[_ALLOWED] = _allowed_stop_reasons(config)
    config.stash[_PROFILE] = _profile(config)
    config.stash[_HOST] = _run_host(config)
    worker = hasattr(config, "workerinput")
    if config.getoption("harness_report") and not worker:
        _register_report(config)  # before FaultRows: its line comes after their summary
    config.pluginmanager.register(FaultRows(), "stream-harness-fault-rows")
    from harness._testing.drift import DriftRows

    config.pluginmanager.register(DriftRows(worker=worker), "stream-harness-drift")


def _register_report(config: pytest.Config) -> None:
    """`--harness-report`'s files, checked now (a bad path is a usage error in one line),
    written at the end of the run by `FaultReport` (harness._testing.fault_report)."""
    from harness._testing.fault_report import FaultReport, report_paths

    try:
        paths = report_paths(config.getoption("harness_report"), config.invocation_params.dir)
    except ValueError as error:
        raise pytest.UsageError(str(error)) from None
    config.pluginmanager.register(FaultReport(paths, VERDICTS), "stream-harness-fault-report")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test that asks for `fault_variant` runs once per row of the fault catalogue; one
    whose marker's `accept=` is wrong is one item (`[accept]`) failing with that, once."""
    if "fault_variant" not in metafunc.fixturenames:
        return
    from harness.faults import PROVIDERS, catalogue

    provider, host = _collected_provider(metafunc)
    marker = metafunc.definition.get_closest_marker("cassette")
    # a cassette not found yet (a conftest's folder) is checked against every catalogue
    # here, and against its own when the fixture reads it
    problem = (
        None
        if marker is None
        else _accept_problem(
            marker.kwargs.get("accept"),
            metafunc.definition.nodeid,
            PROVIDERS if provider is None else (provider,),
        )
    )
    if problem is not None:
        metafunc.parametrize(
            "fault_variant", [_WrongAccept(problem)], ids=["accept"], indirect=True
        )
        return
    provider = provider or ANTHROPIC
    host = _served_host(metafunc.config, marker, provider, host)
    names = [fault.name for fault in catalogue(provider, host=host)]
    metafunc.parametrize("fault_variant", names, ids=names, indirect=True)


def _served_host(
    config: pytest.Config, marker: pytest.Mark | None, provider: str, recorded: str | None
) -> str | None:
    """The host a `fault_variant` test's client serves its rows on, as the client fixtures
    choose it (`_asked_host`: the ini option < the marker's `host=` < `--harness-host`),
    else `recorded`, the one the cassette's header names; None: the direct API (chosen, or
    where the provider is not served on the host chosen). Its catalogue is that host's: a
    Bedrock client gets the binary rows of its frames, the direct API none."""
    from harness._providers import provider as registered
    from harness._replay.clients import DIRECT

    chosen, _ = _asked_host(config, None if marker is None else marker.kwargs.get("host"))
    if chosen is None or _host_problem(chosen) is not None:
        return recorded  # none chosen, or a name the client fixtures refuse in one line
    if chosen == DIRECT or chosen not in registered(provider).hosted:
        return None
    return str(chosen)


@dataclass(frozen=True, slots=True)
class _WrongAccept:
    """The one parameter of a `fault_variant` test whose `accept=` is wrong: why."""

    problem: str


def _accept_problem(accept: object, where: str, providers: Sequence[str]) -> str | None:
    """What is wrong with a marker's `accept=` (None: nothing): not `{fault_name: 'why'}`,
    or a name no row of the `providers`' catalogues has (the hint lists them)."""
    if accept is None:
        return None
    usage = f"{where}: @pytest.mark.cassette accept= takes {{fault_name: 'why'}}"
    if not isinstance(accept, dict) or not all(
        isinstance(name, str) and isinstance(why, str) and why.strip()
        for name, why in accept.items()
    ):
        return f"{usage}, each with its reason"
    from harness._providers import provider as registered
    from harness.faults import catalogue

    known = {
        fault.name
        for provider in providers
        for host in (None, *registered(provider).hosted)  # its own API, each host serving it
        for fault in catalogue(provider, host=host)
    }
    unknown = sorted(set(accept) - known)
    if not unknown:
        return None
    if len(providers) > 1:
        where_not, listed = "any catalogue", "harness faults --list [--provider NAME]"
    else:
        where_not = f"the {providers[0]} catalogue, the cassette's"
        listed = f"harness faults --list --provider {providers[0]}"
    return f"{usage}: {', '.join(unknown)}: no such row in {where_not} ({listed} names them)"


def _collected_provider(metafunc: pytest.Metafunc) -> tuple[str | None, str | None]:
    """The provider and the host of the cassette a `fault_variant` test marks, as far as
    collection can find it (`--harness-cassette-dir`, the marker's `dir=`, else
    `cassettes/` beside the test module: a conftest's `harness_cassette_dir` is not known
    yet), whose catalogue's rows the test runs (a host's frames add the binary rows);
    None for one not found or unreadable (Anthropic's rows run)."""
    from harness._exceptions import HarnessError
    from harness._testing.plugin_providers import cassette_host, cassette_provider

    marker = metafunc.definition.get_closest_marker("cassette")
    if marker is None or len(marker.args) != 1 or not isinstance(marker.args[0], str):
        return None, None
    option_dir: str | None = metafunc.config.getoption("harness_cassette_dir")
    folder = metafunc.definition.path.parent / "cassettes"
    if option_dir is not None:
        folder = metafunc.config.invocation_params.dir / option_dir
    elif isinstance(marker.kwargs.get("dir"), str | os.PathLike):
        folder = metafunc.definition.path.parent / marker.kwargs["dir"]
    path = cassette_path(marker.args[0], folder)
    if not path.exists():
        return None, None
    try:
        return cassette_provider(path), cassette_host(path)
    except HarnessError:
        return None, None  # the fixture reports the cassette's problem, with the test


_RUN_ID = pytest.StashKey[str]()
_STRICT_INI = pytest.StashKey[bool]()
_ALLOWED = pytest.StashKey[tuple[str, ...]]()
_PROFILE = pytest.StashKey["str | None"]()
_HOST = pytest.StashKey["str | None"]()


def _host_problem(name: object) -> str | None:
    """What is wrong with a host's name (None: nothing): not `direct` or a known host."""
    from harness._hosts import HOSTS
    from harness._replay.clients import DIRECT

    known = (DIRECT, *HOSTS)
    return None if name in known else f"takes {', '.join(known)}, not {name!r}"


def _run_host(config: pytest.Config) -> str | None:
    """The run's host for the client fixtures: `--harness-host`, else the ini option; None
    (each cassette's header's) when unset; an unknown name is a usage error."""
    option: str | None = config.getoption("harness_host")
    name = option if option is not None else str(config.getini("harness_host")).strip()
    if not name:
        return None
    problem = _host_problem(name)
    if problem is not None:
        where = "--harness-host" if option is not None else "ini option harness_host"
        raise pytest.UsageError(f"{where} {problem}")
    return name


def _profile(config: pytest.Config) -> str | None:
    """The strict OpenAI clients' profile: `--harness-profile`, else the ini option; None
    (the default) when unset; an unknown name is a usage error naming the known ones."""
    option: str | None = config.getoption("harness_profile")
    name = option if option is not None else str(config.getini("harness_profile")).strip()
    if not name:
        return None
    from harness._providers import check_profile

    where = "--harness-profile" if option is not None else "harness_profile"
    try:
        check_profile(name)
    except ValueError as error:
        raise pytest.UsageError(f"{where}: {error}") from None
    return name


#: The ini spellings of a bool, as pytest's own `type="bool"` reads them.
_TRUE: Final = frozenset({"y", "yes", "t", "true", "on", "1"})
_FALSE: Final = frozenset({"n", "no", "f", "false", "off", "0"})


def _ini_bool(config: pytest.Config, name: str) -> bool:
    """An ini option read as a bool; any other value is a usage error naming the option."""
    value = str(config.getini(name)).strip()
    if value.lower() in _TRUE | _FALSE:
        return value.lower() in _TRUE
    raise pytest.UsageError(f"ini option {name} = {value!r}: expected true or false")


def _allowed_stop_reasons(config: pytest.Config) -> tuple[str, ...]:
    """The strict clients' extra stop reasons: `--harness-allow-stop-reasons`, else the ini
    option, as `harness proxy --allow-stop-reasons` spells them (`stop_reasons_from`); none
    when unset; a malformed list is a usage error naming its source."""
    from harness._strict.policy import stop_reasons_from

    option: str | None = config.getoption("harness_allow_stop_reasons")
    where = "--harness-allow-stop-reasons" if option is not None else "harness_allow_stop_reasons"
    text = option if option is not None else str(config.getini("harness_allow_stop_reasons"))
    if option is None and not text.strip():
        return ()
    try:
        return stop_reasons_from(text)
    except InputError as error:
        raise pytest.UsageError(f"{where} {text!r}: {error}") from None


#: Set by `fault_variant` when the client fixtures record its good cassette: how to derive
#: the pending case once they have.
_DERIVE = pytest.StashKey[Callable[[], bool]]()
#: Set by `harness_cassette` when it leaves the recording to the client fixtures.
_DEFERRED = pytest.StashKey[bool]()
#: The fixtures that share a test's `ClientSession` (and record with the code's own
#: requests, when a test uses a client).
_CLIENT_FIXTURES: Final = frozenset({"harness_client", "harness_async_client", "harness_requests"})
#: The test's `ClientSession`, made by the first of them the test asks for.
_SESSION: pytest.StashKey[ClientSession] = pytest.StashKey()


def run_id(config: pytest.Config) -> str:
    """One id for the whole run: xdist's `testrunuid` in a worker, else this process's own."""
    workerinput: dict[str, Any] | None = getattr(config, "workerinput", None)
    if workerinput is not None and "testrunuid" in workerinput:
        return str(workerinput["testrunuid"])
    return config.stash[_RUN_ID]


@dataclass(frozen=True, slots=True)
class CassetteMark:
    """The arguments of a test's `@pytest.mark.cassette(...)`, checked."""

    names: tuple[str, ...]
    dir: str | None = None
    record: RecordMode | None = None
    request: dict[str, Any] | None = None
    #: the fields compared with a cassette's recorded request, when the marker names them
    match_on: tuple[str, ...] | None = None
    match_on_given: bool = False
    #: the session folder's turn `fault_variant` breaks (1 is the first; None: the fixture's)
    fault_turn: int | None = None
    #: whether the client fixtures are strict (None: the ini option decides)
    strict: bool | None = None
    #: the fault rows the code accepts on purpose, and why: `{fault_name: reason}`
    accept: dict[str, str] = field(default_factory=dict)
    #: which SDK's client the fixtures give (`anthropic`, `openai`): the one a cassette not
    #: recorded yet is recorded with (None: the headers', else Anthropic's)
    sdk: str | None = None
    #: where the client fixtures are served (`bedrock`, `vertex`, `direct`; None: the
    #: run's `--harness-host` or ini option, else the cassettes' header's)
    host: str | None = None

    @property
    def name(self) -> str:
        return self.names[0]


def _fail(message: str) -> NoReturn:
    """Fail the test with one line, no traceback into the plugin."""
    __tracebackhide__ = True
    pytest.fail(message, pytrace=False)


def _record_mode(value: object, where: str) -> RecordMode:
    """The record mode named `value`, or the test fails with one line naming the choices."""
    try:
        return RecordMode.parse(str(value))
    except InputError as error:
        problem = f"{where}: {error}"
    _fail(problem)


_MARK = pytest.StashKey[CassetteMark]()


def cassette_mark(node: pytest.Item, fixture: str = "harness_replay") -> CassetteMark:
    """The closest `cassette` marker of a test; a misuse fails the test with one clear line.
    Read once a test (several fixtures ask)."""
    kept = node.stash.get(_MARK, None)
    if kept is None:
        kept = node.stash[_MARK] = _read_mark(node, fixture)
    return kept


def _read_mark(node: pytest.Item, fixture: str) -> CassetteMark:
    marker = node.get_closest_marker("cassette")
    where = node.nodeid
    if marker is None:
        _fail(f"{where}: the {fixture} fixture needs @pytest.mark.cassette('name-or-path')")
    if not marker.args or not all(isinstance(arg, str | os.PathLike) for arg in marker.args):
        _fail(f"{where}: @pytest.mark.cassette takes cassette names or paths")
    unknown = sorted(set(marker.kwargs) - set(MARKER_KEYWORDS))
    if unknown:
        _fail(
            f"{where}: @pytest.mark.cassette got unknown keyword(s) {', '.join(unknown)} "
            f"(known: {', '.join(MARKER_KEYWORDS)})"
        )
    record = marker.kwargs.get("record")
    if record is not None:
        record = _record_mode(record, f"{where}: @pytest.mark.cassette")
    request = marker.kwargs.get("request")
    if request is not None and not isinstance(request, dict):
        _fail(
            f"{where}: @pytest.mark.cassette request= must be a dict of messages.create arguments"
        )
    match_on = marker.kwargs.get("match_on")
    if match_on is not None and (
        isinstance(match_on, str) or not all(isinstance(field, str) for field in match_on)
    ):
        _fail(f"{where}: @pytest.mark.cassette match_on= takes a list of request fields, or None")
    fault_turn = marker.kwargs.get("fault_turn")
    if fault_turn is not None and (
        isinstance(fault_turn, bool) or not isinstance(fault_turn, int) or fault_turn < 1
    ):
        _fail(f"{where}: @pytest.mark.cassette fault_turn= takes a turn number (1 is the first)")
    strict = marker.kwargs.get("strict")
    if strict is not None and not isinstance(strict, bool):
        _fail(f"{where}: @pytest.mark.cassette strict= takes True or False")
    folder = marker.kwargs.get("dir")
    sdk = marker.kwargs.get("sdk")
    if sdk is not None:
        from harness._replay.clients import sdk_choices, sdk_named

        try:
            sdk_named(sdk)
        except InputError:
            _fail(f"{where}: @pytest.mark.cassette sdk= takes {sdk_choices()}")
    host = marker.kwargs.get("host")
    if host is not None and _host_problem(host) is not None:
        _fail(f"{where}: @pytest.mark.cassette host= {_host_problem(host)}")
    return CassetteMark(
        host=host,
        accept=_accepted(
            marker.kwargs.get("accept"), where, "fault_variant" in getattr(node, "fixturenames", ())
        ),
        names=tuple(os.fspath(arg) for arg in marker.args),
        dir=None if folder is None else os.fspath(folder),
        record=record,
        request=request,
        match_on=None if match_on is None else tuple(match_on),
        match_on_given="match_on" in marker.kwargs,
        fault_turn=fault_turn,
        strict=strict,
        sdk=sdk,
    )


def _accepted(accept: object, where: str, faults: bool) -> dict[str, str]:
    """The marker's `accept=`: fault names of a catalogue, each with its reason. A
    `fault_variant` test's was checked when it was collected, and is against its
    cassette's catalogue (`_check_accept_once`): told once there, not here for each row."""
    from harness.faults import PROVIDERS

    problem = None if faults else _accept_problem(accept, where, PROVIDERS)
    if problem is not None:
        _fail(problem)
    return dict(accept) if isinstance(accept, dict) and problem is None else {}


def cassette_path(name: str, folder: Path) -> Path:
    """An absolute `name` as it is, anything else inside `folder`; `.jsonl` added if missing.

    Only `.jsonl` counts as the extension: `faults` writes names like `good.truncate_tool_json`.
    A session folder (`turn-NN.jsonl` inside) is named as it is, or with a trailing `/`
    when it does not exist yet.
    """
    base = Path(name) if Path(name).is_absolute() else folder / name
    if name.endswith(("/", os.sep)) or base.is_dir():
        return base
    return base if name.endswith(".jsonl") else base.with_name(f"{base.name}.jsonl")


def load_adapter(spec: str) -> Adapter:
    """Import `pkg.module:function`; raises `ValueError` with a one-line reason."""
    module_name, colon, attribute = spec.partition(":")
    if not colon or not module_name or not attribute:
        raise ValueError(f"harness_adapter = {spec!r} is not of the form pkg.module:function")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ValueError(
            f"harness_adapter = {spec!r}: cannot import {module_name}: {error}"
        ) from None
    adapter = getattr(module, attribute, None)
    if not callable(adapter):
        raise ValueError(f"harness_adapter = {spec!r}: {module_name} has no function {attribute}")
    loaded: Adapter = adapter
    return loaded


def adapter_outcome(adapter: Adapter, path: str | os.PathLike[str]) -> Outcome:
    """Replay a cassette's SDK event objects through `adapter`, to the end.

    A `StreamProtocolError`, or the SDK's `APIStatusError` for an `error` event, ends the
    stream and becomes `.error`; any other exception is the adapter's bug and propagates.
    """
    from harness._cassette.codec import Cassette
    from harness._replay.direct import collect
    from harness._testing.plugin_providers import adapter_items

    outcome = collect(adapter(adapter_items(Cassette(path))))
    outcome.source = os.fspath(path)
    return outcome


# The three defaults below are made once a module or a session (a fixture made again for
# every test costs more than the test's own replay); an override of any scope wins.
@pytest.fixture(scope="module")
def harness_cassette_dir(request: pytest.FixtureRequest) -> Path:
    """Folder of cassette names: `cassettes/` beside the test module. Override it in a conftest."""
    return request.path.parent / "cassettes"


@pytest.fixture(scope="session")
def harness_record_mode() -> str | RecordMode:
    """Record mode when neither the marker nor the command line sets one. Override to change."""
    return "none"


@pytest.fixture
def harness_adapter(request: pytest.FixtureRequest) -> Adapter:
    """The adapter under test: the ini option `harness_adapter`, else the harness's own."""
    spec = str(request.config.getini("harness_adapter")).strip()
    if not spec:
        from harness._providers import provider

        return provider(ANTHROPIC).to_model_events
    try:
        return load_adapter(spec)
    except ValueError as error:
        _fail(str(error))


@pytest.fixture
def harness_cassette(
    request: pytest.FixtureRequest,
    harness_cassette_dir: Path,
    harness_record_mode: str | RecordMode,
) -> Path:
    """The marked cassette's path, recorded first if the record mode asks for it.

    A test that also uses a client fixture (and not `harness_replay`), with no `request=`
    on the marker, leaves the recording to the client: the code's own request records it.
    """
    from harness._testing.record_once import RecordGate

    mark = cassette_mark(request.node)
    if len(mark.names) != 1:
        _fail(
            f"{request.node.nodeid}: harness_replay and fault_variant take one cassette; "
            "several, or a session folder, answer harness_client's requests"
        )
    stored = cassette_path(mark.name, _cassette_folder(request, mark, harness_cassette_dir))
    mode = _chosen_mode(request, mark, harness_record_mode)
    path = stored
    if mode is RecordMode.DRIFT:
        path = _drift_copies(request, [stored], _checked_sdk(stored, mark, request.node.nodeid))[0]
    gate = RecordGate([path], mode=mode, run_id=run_id(request.config))
    if gate.needs_recording():
        sdk = _checked_sdk(stored, mark, request.node.nodeid)
        if mark.request is None and _records_by_client(request):
            request.node.stash[_DEFERRED] = True
            return path
        _refuse_recording(path, request.node.nodeid, mode, sdk)
        _record(path, gate, mark, request.node.nodeid)
    elif not path.exists():
        from harness._testing.plugin_providers import key_variable

        key = key_variable(_checked_sdk(stored, mark, request.node.nodeid))
        _fail(f"cassette not found: {path} (record it with --harness-record=missing and {key} set)")
    return path


#: Record mode `drift`: the test's (stored cassette, copy recorded again) pairs.
_DRIFT_PAIRS = pytest.StashKey[list[tuple[Path, Path]]]()


def _drift_copies(request: pytest.FixtureRequest, stored: Sequence[Path], sdk: str) -> list[Path]:
    """Record mode `drift`: where the `stored` cassettes (of `sdk`) are recorded again, in
    the run's drift folder (`harness._testing.drift`), each pair noted on the test for its
    verdict; a stored cassette missing fails the test in one line."""
    from harness._testing.drift import copy_path
    from harness._testing.plugin_providers import key_variable

    for path in stored:
        if not path.exists():
            _fail(
                f"cassette not found: {path} (record mode drift records the cassettes kept "
                f"again; record it first with --harness-record=missing and {key_variable(sdk)} "
                "set)"
            )
    folder = _drift_folder(request.config)
    pairs = request.node.stash.setdefault(_DRIFT_PAIRS, [])
    copies = [copy_path(path, request.config.rootpath, folder) for path in stored]
    pairs += [pair for pair in zip(stored, copies, strict=True) if pair not in pairs]
    return copies


def _drift_folder(config: pytest.Config) -> Path:
    """`--harness-drift-dir` (relative to where pytest runs), else the run's own folder."""
    from harness._testing.drift import drift_folder

    chosen: str | None = config.getoption("harness_drift_dir")
    given = None if chosen is None else config.invocation_params.dir / chosen
    return drift_folder(given, run_id(config))


def _checked_sdk(path: Path, mark: CassetteMark, where: str) -> str:
    """The SDK of `path` (its header's, else the marker's `sdk=`), or the test fails in one
    line saying how they disagree."""
    from harness._testing.plugin_providers import cassette_sdk

    try:
        return cassette_sdk([path], mark.sdk, where)
    except InputError as error:
        problem = str(error)
    _fail(problem)


def _refuse_recording(path: Path, where: str, mode: RecordMode, sdk: str) -> None:
    """Fail the test in one line when `path` is a cassette the plugin cannot record so."""
    from harness._testing.plugin_providers import refuse_recording

    try:
        refuse_recording([path], where, mode, sdk)
    except InputError as error:
        refused = str(error)
    else:
        return
    _fail(refused)


def _cassette_folder(request: pytest.FixtureRequest, mark: CassetteMark, fixture: Path) -> Path:
    """Where names are looked up: the command line, else the marker's `dir=`, else the fixture."""
    option_dir: str | None = request.config.getoption("harness_cassette_dir")
    if option_dir is not None:
        return request.config.invocation_params.dir / option_dir
    if mark.dir is not None:
        return request.path.parent / mark.dir
    return Path(fixture)


def _chosen_mode(
    request: pytest.FixtureRequest, mark: CassetteMark, fixture: str | RecordMode
) -> RecordMode:
    chosen = request.config.getoption("harness_record") or mark.record or fixture
    return _record_mode(chosen, "harness_record_mode fixture")


def _strict_chosen(request: pytest.FixtureRequest) -> bool:
    """Whether the client fixtures are strict: ini < marker's `strict=` < `--harness-strict`."""
    option: str | None = request.config.getoption("harness_strict")
    if option is not None:
        return option == "on"
    mark = cassette_mark(request.node, "harness_client")
    if mark.strict is not None:
        return mark.strict
    return request.config.stash[_STRICT_INI]


def _chosen_host(request: pytest.FixtureRequest, mark: CassetteMark) -> dict[str, Any]:
    """Where the client fixtures are served: the ini option `harness_host` < the marker's
    `host=` < `--harness-host` (later wins), as the `ClientSession`'s keywords. The run's host (the
    command line's, the ini option's) is for the cassettes whose dialect is served there;
    a marker's is the test's own, an error where it is not. None: the header's host."""
    host, for_all = _asked_host(request.config, mark.host)
    return {"host": host, "host_for_all": for_all}


def _asked_host(config: pytest.Config, marked: Any) -> tuple[Any, bool]:
    """The host asked for (the ini option < the marker's `host=`, `marked` < the command
    line's), and whether it is the run's (True) rather than the test's own marker's."""
    if config.getoption("harness_host") is None and marked is not None:
        return marked, False
    return config.stash[_HOST], True


def _records_by_client(request: pytest.FixtureRequest) -> bool:
    """Whether the client fixtures record the test's cassette with the code's own requests
    (`harness_replay` reads it before the code runs: it needs the marker's `request=`)."""
    names = request.fixturenames
    return not _CLIENT_FIXTURES.isdisjoint(names) and "harness_replay" not in names


def _record(path: Path, gate: RecordGate, mark: CassetteMark, where: str) -> None:
    """Record `path` live from the marker's `request=` (once a run: `gate`), or skip the
    test saying why it cannot be."""
    __tracebackhide__ = True
    mode = gate.mode
    key_variable = api_key_variable()
    if not os.environ.get(key_variable):
        pytest.skip(
            f"record mode {mode}: recording {path} live needs {key_variable}, which is not set"
        )
    if mark.request is None:
        _fail(
            f"{where}: record mode {mode} needs the request to send: "
            "@pytest.mark.cassette(..., request={'model': ..., 'max_tokens': ..., 'messages': ...})"
        )
    from harness._exceptions import RecordError
    from harness._record.live import record

    if not gate.acquire():
        return  # another test recorded it while this one waited
    try:
        earlier = gate.earlier_failure()
        if earlier is not None:
            failure = f"{where}: not recorded again in this run: {earlier}"
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            record(
                dict(mark.request),
                os.fspath(path),
                force=mode.rerecords,
                description=f"Recorded by {where} (record mode {mode})",
            )
            gate.recorded()
            return
    except RecordError as error:
        failure = f"{where}: recording {path} failed: {error}"
        gate.failed(failure)
    finally:
        gate.release()
    _fail(failure)


@pytest.fixture
def harness_replay(
    request: pytest.FixtureRequest, harness_cassette: Path, harness_adapter: Adapter
) -> Outcome:
    """The marked cassette replayed through `harness_adapter`: `.events` and `.error`.

    `.error` is the `StreamProtocolError`, or the SDK's `APIStatusError` for a cassette's
    `error` event, or None; an unusable cassette fails the test with `PATH:LINE: reason`.
    The harness's own Chat Completions adapter reads under the run's profile
    (`--harness-profile`).
    """
    from harness._exceptions import CassetteError

    try:
        adapter = _provider_adapter(harness_adapter, harness_cassette, request.config)
        return adapter_outcome(adapter, harness_cassette)
    except CassetteError as error:
        unusable = str(error)
    _fail(unusable)


def _provider_adapter(adapter: Adapter, cassette: Path, config: pytest.Config) -> Adapter:
    """`adapter`, unless it is the default (the default provider's, Anthropic's): then the
    cassette's provider's own (`harness_adapter` cannot know the cassette), under the
    run's profile where the provider has profiles."""
    from harness._providers import provider as registered
    from harness._testing.plugin_providers import cassette_provider, default_adapter, profile_for

    if adapter is not registered(ANTHROPIC).to_model_events:
        return adapter
    provider = cassette_provider(cassette)
    return default_adapter(provider, profile_for(provider, config.stash[_PROFILE]))


@pytest.fixture
def replay(harness_replay: Outcome) -> Outcome:
    """Deprecated name of `harness_replay` (it collided with users' own fixtures)."""
    warnings.warn(
        "the replay fixture is deprecated and will be removed in 0.3: use harness_replay",
        DeprecationWarning,
        stacklevel=2,
    )
    return harness_replay


@pytest.fixture
def harness_fault_turn() -> int | None:
    """The turn of a session-folder cassette `fault_variant` breaks (1 is the first; None,
    the default: the last). The marker's `fault_turn=` wins."""
    return None


@pytest.fixture
def fault_variant(
    request: pytest.FixtureRequest,
    harness_cassette: Path,
    harness_adapter: Adapter,
    harness_fault_turn: int | None,
    tmp_path: Path,
) -> FaultCase:
    """One catalogue row's broken variant of the marked (good) cassette, run through the adapter.

    The test is parametrised over the catalogue, one id a fault; a row that does not apply
    to the cassette is skipped. `fault_variant.assert_caught()` fails with a readable report.
    With `harness_client` or `harness_async_client` in the same test, the client serves the
    variant: `with fault_variant.expect_failure(): your_function(harness_client)`. A session
    folder keeps its turns: the variant breaks one (`fault_turn=`, default the last), the
    turns before it are answered as recorded.
    """
    from harness._exceptions import HarnessError, UnknownFaultError
    from harness._testing.fault_runs import derive_into, pending_fault
    from harness._testing.plugin_providers import cassette_host, cassette_provider, profile_for
    from harness.faults import fault_named

    if isinstance(request.param, _WrongAccept):
        _fail(request.param.problem)
    try:
        provider = cassette_provider(harness_cassette)
        host = _served_host(
            request.config,
            request.node.get_closest_marker("cassette"),
            provider,
            cassette_host(harness_cassette),
        )
        fault = fault_named(request.param, provider=provider, host=host)
    except UnknownFaultError:  # an InputError too: told first, with why it can happen
        _fail(
            f"{request.node.nodeid}: {harness_cassette} is a cassette of {provider}, which has "
            f"no fault {request.param}: the rows were chosen when the test was collected, "
            "before the harness_cassette_dir fixture was known; name the cassette's folder "
            "with the marker's dir= or --harness-cassette-dir"
        )
    except HarnessError as error:
        _fail(str(error))
    harness_adapter = _provider_adapter(harness_adapter, harness_cassette, request.config)
    mark = cassette_mark(request.node, "fault_variant")
    _check_accept_once(request, mark, provider)
    turn = harness_fault_turn if mark.fault_turn is None else mark.fault_turn
    folder = _variants_folder(request, tmp_path)
    case = pending_fault(fault, folder)
    case.accepted_because = mark.accept.get(fault.name)
    case.allow_stop_reasons = request.config.stash[_ALLOWED]
    case.profile = profile_for(provider, request.config.stash[_PROFILE])
    request.node.stash[_CASE] = case

    def derive() -> bool:
        return derive_into(case, harness_adapter, harness_cassette, folder, turn, host=host)

    if request.node.stash.get(_DEFERRED, False):
        if harness_cassette.is_dir() or harness_cassette.suffix != ".jsonl":
            _fail(
                f"{request.node.nodeid}: fault_variant breaks a recorded session folder, and "
                f"{harness_cassette} is still to be recorded: record it with a test of the code "
                "without fault_variant first"
            )
        request.node.stash[_DERIVE] = derive  # the client records it, then derives
        return case
    try:
        applies = derive()
    except HarnessError as error:
        problem = str(error)
    else:
        if not applies:
            pytest.skip(case.not_applying(harness_cassette.name))
        return case
    _fail(problem)


#: The test functions whose `accept=` named a row their cassette's catalogue lacks, told
#: by the first of their rows run (the others are skipped, pointing at it).
_WRONG_ACCEPT_TOLD = pytest.StashKey[dict[str, str]]()


def _check_accept_once(request: pytest.FixtureRequest, mark: CassetteMark, provider: str) -> None:
    """Fail the first row run of a test whose `accept=` names a row the cassette's own
    catalogue (`provider`'s) lacks; skip its other rows, naming the one that failed. (Found
    here only when collection could not read the cassette: then every row was collected.)"""
    function = request.node.nodeid.partition("[")[0]
    problem = _accept_problem(mark.accept or None, function, (provider,))
    if problem is None:
        return
    told = request.config.stash.setdefault(_WRONG_ACCEPT_TOLD, {})
    if function in told:
        pytest.skip(f"accept= names a row {provider} cassettes lack: told on {told[function]}")
    told[function] = request.node.nodeid
    _fail(problem)


#: Where a test's broken variants are kept between runs, under pytest's cache folder.
VARIANTS_CACHE: Final = "stream-harness-variants"
_CASE = pytest.StashKey["FaultCase"]()


def _variants_folder(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """The test's own folder for its broken variants, kept between runs so a report's trace
    command still works later: `--harness-variants-dir`, else pytest's cache folder, else
    (the cache provider off) the test's `tmp_path`."""
    config = request.config
    chosen: str | None = config.getoption("harness_variants_dir")
    cache = getattr(config, "cache", None)
    if chosen is not None:
        base = config.invocation_params.dir / chosen
    elif cache is not None:
        base = Path(cache.mkdir(VARIANTS_CACHE))
    else:
        return tmp_path
    folder = base / _folder_name(request.node.nodeid)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _folder_name(nodeid: str) -> str:
    """A test id as one readable folder name, nothing a shell must quote:
    `tests/test_a.py::test_b[row]` becomes `tests__test_a.py__test_b.row`; an id too long
    is cut and keeps a hash of the whole."""
    import hashlib
    import re

    readable = nodeid.replace("/", "__").replace("::", "__").replace("[", ".").replace("]", "")
    name = re.sub(r"[^\w.-]+", "_", readable)
    if len(name) <= 150:
        return name
    return f"{name[:130]}-{hashlib.sha256(nodeid.encode()).hexdigest()[:16]}"


# -- the session's summary of fault rows -----------------------------------------------------

#: The order the summary lists a test's rows in, and what it calls each verdict.
VERDICTS: Final = (
    "caught",
    "accepted silently",
    "accepted on purpose",
    "wrong code",
    "crashed",
    "not answered",
    "not recovered",
    "not judged",
    DOES_NOT_APPLY,
)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Label a fault row's report with its verdict (and, for `--harness-report`, its
    cell), and a drift run's teardown report with its cassettes' (xdist carries them to
    the controller)."""
    report = yield
    pairs = item.stash.get(_DRIFT_PAIRS, None)
    if pairs and report.when == "teardown":
        from harness._testing.drift import drift_rows

        config = item.config
        report.harness_drift_rows = drift_rows(  # type: ignore[attr-defined]
            pairs,
            test=item.nodeid,
            here=config.invocation_params.dir,
            folder=_drift_folder(config),
            run_id=run_id(config),
        )
    case = item.stash.get(_CASE, None)
    if case is None or not (report.when == "call" or report.skipped):
        return report
    verdict = case.verdict
    if report.skipped and verdict != DOES_NOT_APPLY:
        return report  # skipped for another reason (recording needs a key): no verdict
    if verdict is None or (verdict == "caught" and report.failed):
        verdict = "not judged"
    row = case.fault.name
    if verdict == "accepted on purpose":
        row = f"{row} ({case.accepted_because})"
    callspec = getattr(item, "callspec", None)
    order = list(callspec.indices.values()) if callspec is not None else []
    report.harness_fault_row = [item.nodeid.partition("[")[0], verdict, row, order]  # type: ignore[attr-defined]
    if item.config.getoption("harness_report"):
        from harness._testing.fault_report import report_cell

        report.harness_report_cell = report_cell(case, verdict, item, report, call)  # type: ignore[attr-defined]
    return report


class FaultRows:
    """The session's fault rows, by test function, shown at the end of the run: each
    verdict's rows in the order the test's parameters were collected, however the runs
    finished (under xdist, in whatever order the workers report)."""

    def __init__(self) -> None:
        self.rows: dict[str, dict[str, list[tuple[list[int], str]]]] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        row = getattr(report, "harness_fault_row", None)
        if row is not None:
            test, verdict, name, order = row
            self.rows.setdefault(test, {}).setdefault(verdict, []).append((order, name))

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """Per test function: the rows caught, accepted silently, accepted on purpose..."""
        if not self.rows:
            return
        terminalreporter.write_sep("=", "stream-harness fault rows")
        for test, verdicts in self.rows.items():
            terminalreporter.write_line(test)
            for verdict in VERDICTS:
                names = [name for _, name in sorted(verdicts.get(verdict, []))]
                if names:
                    shown = "" if verdict == DOES_NOT_APPLY else f": {', '.join(names)}"
                    terminalreporter.write_line(f"  {verdict} ({len(names)}){shown}")


@pytest.fixture(scope="session")
def harness_match_on() -> Sequence[str] | None:
    """Request fields compared with a cassette's recorded request (None: no matching).

    Default `model`, `messages`, `system`, `tools`; the marker's `match_on=` wins.
    """
    return ("model", "messages", "system", "tools")


def _client_session(
    request: pytest.FixtureRequest,
    cassette_dir: Path,
    record_mode: str | RecordMode,
    match_on: Sequence[str] | None,
) -> ClientSession:
    """The test's cassette clients, replaying or recording (`harness._testing.client_session`):
    made by the first client fixture the test asks for, closed at that one's teardown (one
    fixture a client test, not two: pytest's own steps cost as much as the session's)."""
    node: pytest.Item = request.node
    session = node.stash.get(_SESSION, None)
    if session is None:
        session = _open_session(request, cassette_dir, record_mode, match_on)
        node.stash[_SESSION] = session
        request.addfinalizer(lambda: _close_session(node))
    return session


def _open_session(
    request: pytest.FixtureRequest,
    cassette_dir: Path,
    record_mode: str | RecordMode,
    match_on: Sequence[str] | None,
) -> ClientSession:
    from harness._exceptions import HarnessError
    from harness._testing.client_session import ClientSession

    mark = cassette_mark(request.node, "harness_client")
    folder = _cassette_folder(request, mark, cassette_dir)
    fault: FaultCase | None = None
    if "fault_variant" in request.fixturenames:
        fault = request.getfixturevalue("fault_variant")
    session: ClientSession | None = None
    paths = [cassette_path(name, folder) for name in mark.names]
    mode = _chosen_mode(request, mark, record_mode)
    try:
        sdk = mark.sdk
        if mode is RecordMode.DRIFT:
            from harness._testing.plugin_providers import cassette_sdk

            sdk = cassette_sdk(paths, mark.sdk, request.node.nodeid)  # the stored ones'
            paths = _drift_copies(request, paths, sdk)
        session = ClientSession(
            paths,
            mode=mode,
            match_on=mark.match_on if mark.match_on_given else match_on,
            run_id=run_id(request.config),
            where=request.node.nodeid,
            fault=fault,
            derive=request.node.stash.get(_DERIVE, None),
            sdk=sdk,
            **_chosen_host(request, mark),
        )
        skip = session.open()
    except HarnessError as error:
        problem: str | None = str(error)
    else:
        problem = None
    if problem is not None or session is None:
        _fail(str(problem))
    if skip is not None:
        pytest.skip(skip)
    return session


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    """A request the test's cassettes could not answer is the test's one failure, reported
    in one line in place of what the SDK raised in the code (its traceback says nothing
    more), whether the code swallowed it or not."""
    try:
        yield
    except (KeyboardInterrupt, SystemExit):
        raise  # the run is stopping: nothing to report
    except BaseException:
        _report_unanswered(item)  # in place of what the code raised
        raise
    _report_unanswered(item)  # the code swallowed it


def _report_unanswered(item: pytest.Item) -> None:
    """Fail the test with its session's first unanswered request, once (none: nothing)."""
    session = item.stash.get(_SESSION, None)
    unanswered = None if session is None or session.reported else session.unanswered()
    if session is not None and unanswered is not None:
        session.reported = True  # the teardown does not report it again
        failure = pytest.fail.Exception(unanswered, pytrace=False)
        raise failure from None  # what the SDK raised in the code says nothing more


def _close_session(node: pytest.Item) -> None:
    """Release the test's session (the item keeps nothing of it); fail the test with the
    first request its cassettes could not answer, unless its call reported it."""
    session = node.stash[_SESSION]
    del node.stash[_SESSION]
    unanswered = session.close()
    if unanswered is not None:
        _fail(unanswered)


Client = TypeVar("Client", "Anthropic", "AsyncAnthropic")


def _made(request: pytest.FixtureRequest, make: Callable[[], Client]) -> Client:
    """The client `make` makes; the SDK of the cassettes not installed (the `openai`
    extra) is the test's error in one line, naming the extra (docs/pytest-plugin.md)."""
    try:
        return make()
    except InputError as error:
        problem = f"{request.node.nodeid}: {error}"
    _fail(problem)


def _as_chosen(request: pytest.FixtureRequest, client: Client) -> Client:
    """`client`, or `harness.strict(client)` when the `strict` option says so."""
    if not _strict_chosen(request):
        return client
    from harness._strict.client import strict

    allowed: tuple[str, ...] = request.config.stash[_ALLOWED]
    profile = request.config.stash[_PROFILE]
    if profile is not None and _reads_profiles(client):
        # a profile is the Chat Completions servers': Anthropic clients keep the default
        return strict(client, allow_stop_reasons=allowed, profile=profile)
    return strict(client, allow_stop_reasons=allowed)


def _reads_profiles(client: object) -> bool:
    """Whether `client` is a client of the SDK of a provider that has profiles."""
    from harness._providers import providers

    return any(found.has_profiles and found.sdk.is_client(client) for found in providers())


@pytest.fixture
def harness_client(
    request: pytest.FixtureRequest,
    harness_cassette_dir: Path,
    harness_record_mode: str | RecordMode,
    harness_match_on: Sequence[str] | None,
) -> Anthropic:
    """An `anthropic.Anthropic` answered from the marked cassettes, one response a request
    (an `openai.OpenAI` for OpenAI cassettes).

    Streaming, non-streaming and `messages.stream()` calls alike; the SDK's own retries
    run. A request the cassettes cannot answer fails the test with one line. Strict
    (`harness.strict`) when the `strict` option says so.
    """
    session = _client_session(request, harness_cassette_dir, harness_record_mode, harness_match_on)
    return _as_chosen(request, _made(request, session.client))


@pytest.fixture
def harness_async_client(
    request: pytest.FixtureRequest,
    harness_cassette_dir: Path,
    harness_record_mode: str | RecordMode,
    harness_match_on: Sequence[str] | None,
) -> AsyncAnthropic:
    """An `anthropic.AsyncAnthropic` answered from the marked cassettes (the same order as
    `harness_client`'s, when a test uses both); strict as `harness_client` is."""
    session = _client_session(request, harness_cassette_dir, harness_record_mode, harness_match_on)
    return _as_chosen(request, _made(request, session.async_client))


@pytest.fixture
def harness_requests(
    request: pytest.FixtureRequest,
    harness_cassette_dir: Path,
    harness_record_mode: str | RecordMode,
    harness_match_on: Sequence[str] | None,
) -> Sequence[CapturedRequest]:
    """Every request the test's clients sent, in order (`.method`, `.path`, `.headers`,
    `.body`, `.json`), credentials removed."""
    session = _client_session(request, harness_cassette_dir, harness_record_mode, harness_match_on)
    return session.requests


@pytest.fixture
def snapshot_outcome(request: pytest.FixtureRequest) -> OutcomeOrValueSnapshot:
    """syrupy's `snapshot` storing an outcome as a readable `.jsonl` file, the error last,
    and any JSON-serialisable value (what your own code returned) as an indented `.json`.

    `assert harness_replay == snapshot_outcome`, `assert summarize(client) == snapshot_outcome`;
    `pytest --snapshot-update` writes the file.
    """
    try:
        from harness.snapshot import OutcomeOrValueSnapshot
    except ImportError:
        _fail("the snapshot_outcome fixture needs syrupy: pip install 'stream-harness[pytest]'")
    snapshot: SnapshotAssertion = request.getfixturevalue("snapshot")
    return OutcomeOrValueSnapshot(snapshot)


def pytest_assertrepr_compare(
    config: pytest.Config, op: str, left: object, right: object
) -> list[str] | None:
    """The snapshot diff for `assert value == snapshot_outcome`, as syrupy shows its own."""
    module = sys.modules.get("harness.snapshot")  # not loaded: no such comparison was made
    if module is None:
        return None
    snapshot_side = module.OutcomeOrValueSnapshot
    if not isinstance(left, snapshot_side) and not isinstance(right, snapshot_side):
        return None
    import syrupy

    shown = [side.last if isinstance(side, snapshot_side) else side for side in (left, right)]
    explained: list[str] | None = syrupy.pytest_assertrepr_compare(config, op, *shown)
    hint = next(filter(None, map(module.trace_line, (left, right))), None)
    return explained if explained is None or hint is None else [*explained, hint]
