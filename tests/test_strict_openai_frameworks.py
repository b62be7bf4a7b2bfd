"""The frameworks people use with OpenAI, Bedrock's Converse and Gemini, served every fault
row of two cassettes of each API, without and with `harness.strict`: docs/strict.md's
frameworks tables are this test's output, compared with the installed releases row by
row, or written with `HARNESS_WRITE_TABLES=1` (`make tables`; tests/doc_tables.py).
Every good library cassette (and imported recording) reads in every framework as the
harness's own replay reads it, strict or not. Nothing reaches for the network: a
framework that tries (tracing, a price list, a tokenizer download) fails here.

The long runs are `slow`; the inner loop keeps one good cassette and one broken row per
framework.
"""

from __future__ import annotations

import socket
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from conftest import LIBRARY_FOLDERS, ROOT, not_installed

# tests/openai_frameworks.py serves litellm through `HTTPXReplayTransport`, which needs
# `httpx` (the frameworks extra): without it, the module skips as a whole.
pytest.importorskip("httpx", reason=not_installed("httpx"))
from doc_tables import Block, check, require, version_line
from openai_frameworks import (
    BEDROCK,
    CHAT,
    FRAMEWORKS,
    GEMINI,
    RESPONSES,
    SOME_MISSING,
    Answer,
    framework_params,
    harness_answer,
)

from harness import StreamProtocolError, import_recording, replay_outcome
from harness._exceptions import CassetteImportError
from harness._testing.fault_runs import FaultCase, run_fault
from harness._testing.plugin_providers import cassette_provider, default_adapter
from harness.faults import DONE, catalogue

APIS = tuple(FRAMEWORKS)
#: Each API's library folder.
FOLDERS = {**LIBRARY_FOLDERS, BEDROCK: ROOT / "cassettes" / "bedrock" / "converse"}
#: The good cassettes each API's rows are derived from: a text answer, two tool calls.
ROW_SOURCES = {
    CHAT: ("text", "parallel_tools"),
    RESPONSES: ("text", "parallel_tools"),
    BEDROCK: ("text", "two_tools"),
    GEMINI: ("text", "parallel_tools"),
}
#: Each table: the APIs it holds, the releases it depends on, its blocks in the doc.
TABLES = {
    "openai-frameworks": (
        (CHAT, RESPONSES),
        ("openai", "pydantic-ai-slim", "langchain-openai", "openai-agents", "litellm"),
    ),
    "bedrock-frameworks": (
        (BEDROCK,),
        ("boto3", "pydantic-ai-slim", "langchain-aws", "litellm"),
    ),
    "gemini-frameworks": (
        (GEMINI,),
        ("google-genai", "pydantic-ai-slim", "langchain-google-genai"),
    ),
}
#: The rows the rules accept (expected outcome `done`), which the code must read right.
REPEATED_IDENTITY = "repeat_call_identity"
DOC = ROOT / "docs" / "strict.md"
#: The provider's own page a table is shown on as well (its figures, beside its rules).
ALSO_IN = {"gemini-frameworks": ROOT / "docs" / "gemini.md"}
RECORDINGS = ROOT / "tests" / "data" / "recordings"
LOOPBACK = {"127.0.0.1", "::1", "localhost"}


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every outbound connection or name lookup beyond the loopback is refused and noted;
    the test fails if any was tried."""
    tried: list[str] = []
    connect, connect_ex, getaddrinfo = (
        socket.socket.connect,
        socket.socket.connect_ex,
        socket.getaddrinfo,
    )

    def allowed(address: Any) -> bool:
        return not isinstance(address, tuple) or str(address[0]) in LOOPBACK

    def guarded_connect(self: socket.socket, address: Any) -> None:
        if not allowed(address):
            tried.append(f"connect {address}")
            raise OSError(f"no network in this test: connect {address}")
        connect(self, address)

    def guarded_connect_ex(self: socket.socket, address: Any) -> int:
        if not allowed(address):
            tried.append(f"connect {address}")
            raise OSError(f"no network in this test: connect {address}")
        return connect_ex(self, address)

    def guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host is not None and str(host) not in LOOPBACK:
            tried.append(f"getaddrinfo {host}")
            raise OSError(f"no network in this test: getaddrinfo {host}")
        return getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", guarded_connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", guarded_getaddrinfo)
    yield tried
    assert not tried, f"a framework reached for the network: {tried}"


@pytest.fixture(autouse=True)
def quiet_frameworks() -> Iterator[None]:
    """The frameworks' own warnings (deprecations inside litellm, pydantic) are theirs."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _api_of(framework: str) -> str:
    return next(api for api in APIS if framework in FRAMEWORKS[api])


def _follow_up(api: str) -> Path:
    """An answer for any later turn (a framework that runs the tools asks again)."""
    return FOLDERS[api] / "text.jsonl"


@dataclass(frozen=True, slots=True)
class Row:
    """A fault row applied to a good cassette, and the answer the good cassette gives."""

    case: FaultCase
    good: Answer

    @property
    def name(self) -> str:
        return f"{self.case.path.parent.name}/{self.case.fault.name}"

    @property
    def broken(self) -> bool:
        return self.case.expected_code != DONE


def _rows(api: str, folder: Path) -> list[Row]:
    """Every catalogue row of `api` that applies to its two row sources."""
    found = []
    for source in ROW_SOURCES[api]:
        good = FOLDERS[api] / f"{source}.jsonl"
        into = folder / source
        into.mkdir(parents=True)
        for fault in catalogue(api):
            case = run_fault(default_adapter(api), good, fault, into)
            if case is not None:
                found.append(Row(case, harness_answer(good)))
    return found


@pytest.fixture(scope="module")
def rows(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Row]]:
    folder = tmp_path_factory.mktemp("rows")
    return {api: _rows(api, folder / api) for api in APIS}


def _run(framework: str, row: Row, strict: bool) -> Answer | BaseException:
    """What the framework gave the code for the row's variant: its answer, or what it raised."""
    served = [*row.case.served, _follow_up(_api_of(framework))]
    try:
        return FRAMEWORKS[_api_of(framework)][framework](served, row.case.client_options, strict)
    except Exception as error:
        return error


def _protocol_error(error: BaseException) -> StreamProtocolError | None:
    """The `StreamProtocolError` in the chain of what a framework raised, if there is one."""
    seen: set[int] = set()
    found: BaseException | None = error
    while found is not None and id(found) not in seen:
        if isinstance(found, StreamProtocolError):
            return found
        seen.add(id(found))
        found = found.__cause__ or found.__context__
    return None


@dataclass(slots=True)
class Verdicts:
    """One framework's runs over the rows: which broken rows it returned from (silently),
    which of those with wrong data, which strict let through, and the repeated identity."""

    accepted: list[str]
    wrong: list[str]
    strict_accepted: list[str]
    identity: str


def _verdicts(framework: str, rows: list[Row]) -> Verdicts:
    verdicts = Verdicts([], [], [], "")
    for row in rows:
        plain, guarded = _run(framework, row, False), _run(framework, row, True)
        if row.broken:
            if isinstance(plain, Answer):
                verdicts.accepted.append(row.name)
                if plain != row.good:
                    verdicts.wrong.append(row.name)
            if isinstance(guarded, Answer):
                verdicts.strict_accepted.append(row.name)
        elif row.case.fault.name == REPEATED_IDENTITY:
            assert guarded == row.good, f"{framework}, strict, {row.name}: {guarded!r}"
            if not isinstance(plain, Answer):
                verdicts.identity = "raised"
            else:
                verdicts.identity = "right" if plain == row.good else "wrong data"
        else:  # the SDK's retry recovers: strict or not, the code gets the answer
            assert plain == guarded == row.good, f"{framework}, {row.name}: {plain!r} {guarded!r}"
    return verdicts


def _table(
    rows: dict[str, list[Row]], apis: tuple[str, ...]
) -> tuple[str, str, dict[str, list[str]]]:
    """The Markdown table of `apis`, the rows each framework read as wrong data, and per
    framework the rows strict still let through."""
    lines = [
        "| API | framework | broken rows accepted silently | with wrong data "
        "| with `harness.strict` | a call's id and name repeated (good) |",
        "|---|---|---|---|---|---|",
    ]
    findings = []
    let_through: dict[str, list[str]] = {}
    for api in apis:
        broken = sum(row.broken for row in rows[api])
        repeated = any(row.case.fault.name == REPEATED_IDENTITY for row in rows[api])
        for framework in FRAMEWORKS[api]:
            verdicts = _verdicts(framework, rows[api])
            let_through[framework] = verdicts.strict_accepted
            identity = verdicts.identity if repeated else "n/a"
            lines.append(
                f"| {api} | {framework} | {len(verdicts.accepted)} of {broken} "
                f"| {len(verdicts.wrong)} | {len(verdicts.strict_accepted)} | {identity} |"
            )
            wrong = ", ".join(f"`{name}`" for name in verdicts.wrong) or "none"
            findings.append(f"- {framework}: {wrong}")
    return "\n".join(lines) + "\n", "\n".join(findings) + "\n", let_through


@pytest.mark.slow
@pytest.mark.parametrize("name", TABLES)
def test_strict_lets_no_broken_row_through_any_framework_and_the_doc_table_shows_it(
    rows: dict[str, list[Row]], name: str
) -> None:
    require(SOME_MISSING and f"the table needs every framework: {SOME_MISSING}")
    apis, releases = TABLES[name]
    table, findings, let_through = _table(rows, apis)
    assert let_through == {framework: [] for api in apis for framework in FRAMEWORKS[api]}
    versions = version_line(releases)
    shown = Block(f"{name}-table", versions, table, key_cells=2)
    check(DOC, shown, Block(f"{name}-wrong-data", versions, findings))
    if name in ALSO_IN:
        check(ALSO_IN[name], shown)


@cache
def _imported(folder: Path) -> tuple[Path, ...]:
    """The OpenAI cassettes imported from tests/data/recordings/ that replay to done."""
    for recording in sorted(RECORDINGS.iterdir()):
        if recording.suffix == ".md":
            continue
        try:
            import_recording(str(recording), str(folder / recording.name))
        except CassetteImportError:
            continue
    return tuple(
        path
        for path in sorted(folder.rglob("*.jsonl"))
        if cassette_provider(path) != "anthropic" and replay_outcome(path).error is None
    )


def _good_cassettes(api: str, folder: Path) -> list[Path]:
    """The library's good cassettes of `api`, a session's turns among them, and the
    imported recordings of it."""
    library = FOLDERS[api]
    good = [
        path
        for path in sorted([*library.glob("*.jsonl"), *library.glob("sessions/*/turn-*.jsonl")])
        if replay_outcome(path).error is None
    ]
    return good + [path for path in _imported(folder) if cassette_provider(path) == api]


SEARCH = {"query": "capital of France"}
#: The `functionCall` parts of Gemini's streamed call after its opening (two of
#: `partialArgs` pieces, the closing `{}`): google-genai's `chunk.function_calls` and
#: langchain-google-genai give each as a call of its own, of no name.
STREAMED_PARTS = 3
#: Good cassettes a framework reads otherwise than the harness, as observed with the locked
#: releases. Converse's server tool (docs/bedrock-converse.md, "What frameworks make of a
#: server tool"), a `toolUse` start of `type` `server_tool_use` and its `toolResult`, which
#: the harness passes over as boto3's model says. Gemini's call streamed as Vertex sends it
#: (docs/gemini.md, "What frameworks make of a streamed call"): a `functionCall` opened with
#: `willContinue`, its arguments in `partialArgs` pieces, which the harness assembles. A
#: framework that changes its reading fails here, and the doc is changed with it.
READ_OTHERWISE: dict[str, dict[str, Answer | type[Exception]]] = {
    "streamed_arguments.jsonl": {
        "SDK generate_content_stream()": Answer(
            "", ((None, "plan_trip", {}), *[(None, None, {})] * STREAMED_PARTS)
        ),
        "pydantic-ai GoogleModel": Answer("", ((None, "plan_trip", {}),)),
        "langchain-google-genai ChatGoogleGenerativeAI": Answer(
            "", ((None, "plan_trip", {}), *[(None, "", {})] * STREAMED_PARTS)
        ),
    },
    "server_tool.jsonl": {
        "pydantic-ai BedrockConverseModel": IndexError,
        "langchain-aws ChatBedrockConverse": Answer("Paris.", ((None, "", SEARCH),)),
        "litellm completion(model=bedrock/converse/...)": Answer(
            "Paris.", (("srvtool_Search01", "web_search", SEARCH),)
        ),
    },
}


def _reads(driver: Any, served: list[Path], use_strict: bool) -> Answer | type[Exception]:
    try:
        return driver(served, {}, use_strict)  # type: ignore[no-any-return]
    except Exception as error:
        return type(error)


@pytest.mark.slow
@pytest.mark.parametrize("framework", [param for api in APIS for param in framework_params(api)])
def test_every_good_cassette_reads_as_the_harness_reads_it_strict_or_not(
    framework: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    api = _api_of(framework)
    driver = FRAMEWORKS[api][framework]
    cassettes = _good_cassettes(api, tmp_path_factory.getbasetemp() / "imported")
    assert len(cassettes) >= 5
    for path in cassettes:
        served = [path, _follow_up(api), _follow_up(api)]
        expected = READ_OTHERWISE.get(path.name, {}).get(framework) or harness_answer(path)
        assert _reads(driver, served, False) == expected, path.name
        assert _reads(driver, served, True) == expected, path.name


#: The inner loop's row of each API, and the code strict raises for it: a tool call's
#: JSON cut short, which the SDK's readers hand on; on Gemini, whose calls come whole, an
#: answer cut before its finish reason, which google-genai reads as a whole answer.
FAST_ROWS = {
    **dict.fromkeys((CHAT, RESPONSES, BEDROCK), ("truncate_tool_json", "invalid_tool_json")),
    GEMINI: ("drop_finish_reason", "missing_finish_reason"),
}


def _fast_params() -> list[Any]:
    """Every driver; those of a framework beyond the SDK are `slow`: importing one takes
    3.5 s (pydantic-ai) to 10 s (litellm) on the 2-core machine, before any request."""
    params = []
    for param in [param for api in APIS for param in framework_params(api)]:
        (name,) = param.values
        marks = [*param.marks, *([] if name.startswith("SDK ") else [pytest.mark.slow])]
        params.append(pytest.param(name, marks=marks, id=param.id))
    return params


@pytest.mark.parametrize("framework", _fast_params())
def test_a_good_answer_reads_right_and_a_broken_one_raises_under_strict(
    framework: str, tmp_path: Path
) -> None:
    api = _api_of(framework)
    good = FOLDERS[api] / f"{ROW_SOURCES[api][1]}.jsonl"
    driver = FRAMEWORKS[api][framework]
    served = [good, _follow_up(api)]
    assert driver(served, {}, False) == driver(served, {}, True) == harness_answer(good)
    row, code = FAST_ROWS[api]
    (fault,) = [fault for fault in catalogue(api) if fault.name == row]
    case = run_fault(default_adapter(api), good, fault, tmp_path)
    assert case is not None
    raised = _run(framework, Row(case, harness_answer(good)), True)
    assert isinstance(raised, Exception), f"{framework} returned {raised!r} under strict"
    found = _protocol_error(raised)
    assert found is not None, f"{framework} raised {raised!r}, no StreamProtocolError in its chain"
    assert found.code == code
