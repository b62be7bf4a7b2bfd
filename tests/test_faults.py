"""Every derived variant of every good stream replays to exactly the code its fault names."""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import LIBRARY, library_cassettes

from harness import (
    Cassette,
    CassetteError,
    DoneEvent,
    ModelEvent,
    Outcome,
    replay_outcome,
    to_model_events,
    write_cassette,
)
from harness._hosts import HOSTS
from harness._providers import provider
from harness._providers.frame_rows import FRAME_ROWS
from harness._testing.coverage import outcome_code
from harness._testing.fault_runs import run_fault
from harness.builder import StreamBuilder
from harness.faults import (
    CATALOGUE,
    PROVIDERS,
    Variant,
    catalogue,
    derive_variants,
    expected_under,
    fault_named,
    stream_lines,
)
from harness_cli.main import cli

Events = list[dict[str, Any]]

#: Good streams of shapes the library may lack, so every fault is exercised whatever it holds.
BUILT: dict[str, Events] = {
    "built:text_only": StreamBuilder().ping().text(0, "Hello", ", world").stop().events(),
    "built:zero_arg_tool": (
        StreamBuilder().tool_start(0, "now").json_delta(0, "").block_stop(0).stop("tool_use")
    ).events(),
    "built:thinking_text_tool_text": (
        StreamBuilder()
        .thinking(0, "Which file?")
        .text(1, "Reading.")
        .tool(2, "read", {"path": "a.md", "lines": [1, 2]}, pieces=5)
        .text(3, "Done.")
        .stop("tool_use")
    ).events(),
}


def _good_streams() -> dict[str, Events]:
    """The library's cassettes that replay to done, by relative path, and the built ones."""
    streams: dict[str, Events] = {}
    for path in library_cassettes():
        try:
            if replay_outcome(path).completed:
                streams[Path(path).relative_to(LIBRARY).as_posix()] = list(Cassette(path).events())
        except CassetteError:
            continue  # reported by the cassette library's own tests
    return {**streams, **BUILT}


GOOD = _good_streams()


@cache
def _good_events(name: str) -> list[ModelEvent]:
    """What the good stream yields before `done`."""
    with TemporaryDirectory() as folder:
        return [e for e in _replay(GOOD[name], Path(folder)).events if e != DoneEvent()]


CASES = [
    pytest.param(name, index, id=f"{name}:{variant.fault.name}")
    for name, events in GOOD.items()
    for index, variant in enumerate(derive_variants(events))
]


def _replay(events: Events, tmp_path: Path) -> Outcome:
    path = tmp_path / "stream.jsonl"
    write_cassette(path, events)
    return replay_outcome(path)


def _replay_variant(name: str, variant: Variant, tmp_path: Path) -> Outcome:
    """A variant's outcome: replayed directly, or through a cassette client for a wire row."""
    if not variant.fault.wire:
        return _replay(variant.events, tmp_path)
    good = tmp_path / "good.jsonl"
    write_cassette(good, GOOD[name])
    case = run_fault(to_model_events, good, variant.fault, tmp_path)
    assert case is not None
    return Outcome(case.events, case.error)  # type: ignore[arg-type]


def _is_subsequence(part: list[Any], whole: list[Any]) -> bool:
    remaining = iter(whole)
    return all(item in remaining for item in part)


@pytest.mark.parametrize(("name", "index"), CASES)
def test_variant_replays_to_exactly_its_expected_code(
    name: str, index: int, tmp_path: Path
) -> None:
    variant = derive_variants(GOOD[name])[index]
    outcome = _replay_variant(name, variant, tmp_path)
    assert outcome_code(outcome) == variant.expected_code
    events = [event for event in outcome.events if event != DoneEvent()]
    assert _is_subsequence(events, _good_events(name)), "a fault changed earlier events"


def test_every_good_stream_yields_the_tool_faults_only_when_it_has_a_tool() -> None:
    tool_faults = {
        "repeat_tool_start",
        "tool_input_null",
        "drop_tool_stop",
        "end_turn_despite_tools",
    }
    text_only = {variant.fault.name for variant in derive_variants(BUILT["built:text_only"])}
    with_tool = {variant.fault.name for variant in derive_variants(BUILT["built:zero_arg_tool"])}
    assert not text_only & tool_faults
    assert tool_faults <= with_tool


def test_truncation_needs_some_json_so_a_zero_argument_tool_is_not_truncated() -> None:
    names = {variant.fault.name for variant in derive_variants(BUILT["built:zero_arg_tool"])}
    assert "truncate_tool_json" not in names
    assert "cut_connection_in_tool" in names


def test_every_rows_description_reads_as_english_before_a_vowel() -> None:
    """`harness faults --list` prints each row's description: none says `a` before a
    word that begins with a vowel (Converse's rows named after an exception did:
    `a internalServerException event`)."""
    import re

    wrong = [
        f"{name} {host}: {fault.description}"
        for name in PROVIDERS
        for host in (None, *provider(name).hosted)
        for fault in catalogue(name, host=host)
        if re.search(r"\ba [aeiouAEIOU]", fault.description)
    ]
    assert wrong == []


def test_the_catalogue_reaches_every_code_of_the_error_table() -> None:
    from harness._exceptions import ERROR_TABLE

    assert {fault.expect for fault in CATALOGUE} >= set(ERROR_TABLE)
    assert len({fault.name for fault in CATALOGUE}) == len(CATALOGUE)


def test_deriving_leaves_the_good_stream_untouched() -> None:
    good = BUILT["built:thinking_text_tool_text"]
    before = copy.deepcopy(good)
    for variant in derive_variants(good):
        for event in variant.events:
            event["mutated"] = True
    assert good == before


def test_any_iterable_of_events_gives_the_variants_a_list_does() -> None:
    path = LIBRARY / "interleaved.jsonl"
    assert derive_variants(Cassette(path).events()) == derive_variants(
        list(Cassette(path).events())
    )
    good = BUILT["built:thinking_text_tool_text"]
    assert derive_variants(iter(good)) == derive_variants(good)
    served = stream_lines(Path(__file__).parent / "data" / "server_streams" / "vllm.jsonl")
    fault = fault_named("cut_connection", provider="openai-chat")
    broken = fault.derive(served)
    assert broken is not None
    assert expected_under(fault, iter(broken), provider="openai-chat", profile="vllm") == (
        "missing_done"
    )


def test_a_cut_connection_is_the_stream_ending_early() -> None:
    good = BUILT["built:thinking_text_tool_text"]
    for name in ("cut_connection", "cut_connection_in_tool"):
        cut = fault_named(name).derive(good)
        assert cut is not None
        assert cut == good[: len(cut)]
        assert 1 <= len(cut) < len(good)


def test_fault_named_rejects_an_unknown_name() -> None:
    with pytest.raises(KeyError):
        fault_named("no_such_fault")


# -- the command line ---------------------------------------------------------------------------


def test_list_prints_every_fault_with_its_expected_code() -> None:
    result = CliRunner().invoke(cli, ["faults", "--list"])
    assert result.exit_code == 0
    rows = [line.split() for line in result.output.splitlines()]
    assert [(row[0], row[1]) for row in rows] == [(f.name, f.expect) for f in CATALOGUE]


def _on_hosts(served: bool) -> list[Any]:
    """Each provider with a catalogue on each host that serves it (`hosted`), or on each
    host that does not, as the registry has them."""
    return [
        pytest.param(name, host, id=f"{name}-{host}")
        for name in PROVIDERS
        for host in sorted(HOSTS)
        if (host in provider(name).hosted) is served
    ]


@pytest.mark.parametrize(("name", "host"), _on_hosts(served=True))
def test_list_on_a_host_adds_the_binary_rows_only_where_its_streams_travel_in_frames(
    name: str, host: str
) -> None:
    result = CliRunner().invoke(cli, ["faults", "--list", "--provider", name, "--host", host])
    assert result.exit_code == 0, result.output
    listed = tuple(line.split()[0] for line in result.output.splitlines())
    own = tuple(fault.name for fault in catalogue(name))
    binary = tuple(fault.name for fault in FRAME_ROWS) if HOSTS[host].frames else ()
    assert listed == (*own, *binary)


@pytest.mark.parametrize(("name", "host"), _on_hosts(served=False))
def test_list_on_a_host_the_provider_is_not_served_on_is_refused_in_one_line(
    name: str, host: str
) -> None:
    result = CliRunner().invoke(cli, ["faults", "--list", "--provider", name, "--host", host])
    assert result.exit_code == 2
    assert result.output.startswith(f"--host {host}: {name} streams are served on ")
    assert len(result.output.splitlines()) == 1 and "Traceback" not in result.output
    with pytest.raises(ValueError, match=f"host '{host}': {name} streams are served on "):
        catalogue(name, host=host)


def test_out_writes_one_cassette_per_variant_naming_fault_and_expectation(tmp_path: Path) -> None:
    good = tmp_path / "good.jsonl"
    StreamBuilder().text(0, "Reading.").tool(1, "read", {"path": "a.md"}).stop("tool_use").write(
        good, "a text block and a tool call"
    )
    out = tmp_path / "broken"
    result = CliRunner().invoke(cli, ["faults", str(good), "--out", str(out)])
    assert result.exit_code == 0, result.output
    written = sorted(out.glob("*.jsonl"))
    expected = derive_variants(list(Cassette(good).events()))
    sessions = [variant for variant in expected if len(variant.responses) > 1]
    assert len(written) + len(sessions) == len(expected) == len(result.output.splitlines())
    for variant in expected:
        if variant in sessions:
            continue
        path = out / f"good.{variant.fault.name}.jsonl"
        header = Cassette(path).header
        assert header is not None
        assert (header["fault"], header["expect"]) == (variant.fault.name, variant.expected_code)
        if not variant.fault.wire:
            assert outcome_code(replay_outcome(path)) == variant.expected_code


def test_a_session_row_is_written_as_a_folder_of_turns(tmp_path: Path) -> None:
    good = tmp_path / "good.jsonl"
    StreamBuilder().text(0, "Hi").stop().write(good, "a text block")
    out = tmp_path / "broken"
    result = CliRunner().invoke(cli, ["faults", str(good), "--out", str(out)])
    assert result.exit_code == 0, result.output
    session = out / "good.http_429_then_ok"
    assert [line.split() for line in result.output.splitlines() if "429" in line] == [
        ["done", str(session)]
    ]
    first, second = sorted(session.glob("turn-*.jsonl"))
    assert [line.data["status"] for line in Cassette(first).lines()] == [429]
    assert list(Cassette(second).events()) == list(Cassette(good).events())


def test_a_cassette_that_does_not_complete_is_refused(tmp_path: Path) -> None:
    broken = tmp_path / "broken.jsonl"
    write_cassette(broken, StreamBuilder().text(0, "cut").events())
    result = CliRunner().invoke(cli, ["faults", str(broken), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert f"{broken}: does not complete (it ends in missing_message_stop)" in result.output
    assert not (tmp_path / "out").exists()


def test_an_unusable_cassette_is_named_with_its_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"type": "message_start", "message": {}}) + "\nnot json\n")
    result = CliRunner().invoke(cli, ["faults", str(bad), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert result.output.startswith(f"{bad}:2: not valid JSON")
    assert "Traceback" not in result.output


def test_without_a_cassette_or_out_folder_it_says_what_to_give() -> None:
    result = CliRunner().invoke(cli, ["faults"])
    assert result.exit_code == 2
    assert "give GOOD.jsonl (or a session folder) and --out DIR, or --list" in result.output


def test_the_nan_variant_is_written_and_counted_by_coverage_as_invalid_tool_json(
    tmp_path: Path,
) -> None:
    good = tmp_path / "good.jsonl"
    StreamBuilder().tool(0, "read", {"path": "a.md"}).stop("tool_use").write(good, "one tool")
    out = tmp_path / "broken"
    assert CliRunner().invoke(cli, ["faults", str(good), "--out", str(out)]).exit_code == 0
    variant = out / "good.tool_input_nan.jsonl"
    assert "NaN" in variant.read_text()
    result = CliRunner().invoke(cli, ["coverage", str(variant)])
    row = next(line for line in result.output.splitlines() if line.startswith("invalid_tool_json"))
    assert row.split()[1:] == ["1", str(variant)]


@pytest.mark.parametrize("name", PROVIDERS)
@pytest.mark.parametrize(
    ("events", "header", "says"),
    [
        (None, None, "events must be an iterable of dicts, not NoneType"),
        ("abc", None, "events must be an iterable of dicts, not str"),
        ([{}, 3], None, "event 2 is not a dict but int"),
        ([None], None, "event 1 is not a dict but NoneType"),
        ([], "host", "header must be a cassette header (a dict), not str"),
    ],
    ids=["none", "string", "int-event", "none-event", "string-header"],
)
def test_derive_variants_refuses_events_that_are_no_dicts_in_one_line(
    name: str, events: Any, header: Any, says: str
) -> None:
    with pytest.raises(ValueError) as raised:
        derive_variants(events, provider=name, header=header)
    assert str(raised.value) == says
