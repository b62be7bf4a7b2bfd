"""`harness replay --trace`: the adapter's timeline, checked against the adapter's own outcome.

Every library cassette and every fault variant of every good stream is traced, and its
rows are held to what `harness replay --format json` prints for the same file: the emits,
concatenated, are exactly its event lines, and the row where a rule fired carries its
failure line's code and message.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from conftest import LIBRARY, library_cassettes

from harness import Cassette, CassetteError, replay_outcome, write_cassette
from harness._events import event_to_json
from harness._providers.anthropic.adapter import StreamAdapter
from harness._replay.direct import sdk_events
from harness._testing.trace import (
    END,
    OPEN_LISTED,
    OPEN_WIDTH,
    WIDTH,
    format_row,
    format_rows,
    trace,
    trace_hint,
)
from harness.builder import StreamBuilder
from harness.faults import derive_variants
from harness_cli.main import cli

FAILURES = ("protocol_error", "api_error", "connection_error")
ROW_KEYS = ["n", "event", "index", "open", "emits"]


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def json_lines(result: Result) -> list[dict[str, Any]]:
    return [json.loads(line) for line in result.stdout.splitlines()]


def _usable(path: str) -> bool:
    try:
        Cassette(path).validate()
    except CassetteError:
        return False
    return True


LIBRARY_FILES = [str(path) for path in library_cassettes() if _usable(str(path))]


def _good_streams() -> dict[str, list[dict[str, Any]]]:
    return {
        Path(path).relative_to(LIBRARY).as_posix(): list(Cassette(path).events())
        for path in LIBRARY_FILES
        if replay_outcome(path).completed
    }


GOOD = _good_streams()
VARIANTS = [
    pytest.param(name, index, id=f"{name}:{variant.fault.name}")
    for name, events in GOOD.items()
    for index, variant in enumerate(derive_variants(events))
]


def assert_trace_is_the_replay(path: str) -> list[dict[str, Any]]:
    """The trace of `path` against `harness replay --format json` of it; returns the rows."""
    replayed = run("replay", "--format", "json", path)
    traced = run("replay", "--trace", "--format", "json", path)
    assert traced.exit_code == replayed.exit_code
    lines, rows = json_lines(replayed), json_lines(traced)
    events = [line for line in lines if line["type"] not in FAILURES]
    assert [emit for row in rows for emit in row["emits"]] == events
    *before, last = rows
    assert all(list(row) == ROW_KEYS for row in before), "only the last row may carry an error"
    if lines[-1]["type"] in FAILURES:
        failure = lines[-1]
        code = failure.get("code") or f"{failure['type']}:{failure['error_type']}"
        assert list(last) == [*ROW_KEYS, "error"]
        assert last["error"] == {"code": code, "message": failure["message"]}
    else:
        assert last == {
            "n": None,
            "event": END,
            "index": None,
            "open": [],
            "emits": [{"type": "done"}],
        }
    numbers = [line.number for line in Cassette(path).lines()]
    shown = [row["n"] for row in rows if row["n"] is not None]
    assert shown == numbers[: len(shown)], "a row a line, in the cassette's order"
    if last["n"] is None:
        assert shown == numbers, "the end row comes after every line"
    else:
        assert "error" in last, "the trace stops early only where a rule fired"
    return rows


@pytest.mark.parametrize(
    "path", LIBRARY_FILES, ids=[Path(p).relative_to(LIBRARY).as_posix() for p in LIBRARY_FILES]
)
def test_the_trace_of_every_library_cassette_emits_exactly_what_replay_prints(path: str) -> None:
    rows = assert_trace_is_the_replay(path)
    assert [row.to_json() for row in trace(path)] == rows, "the SDK's objects trace the same"


@pytest.mark.parametrize(("name", "index"), VARIANTS)
def test_the_trace_of_every_fault_variant_emits_exactly_what_replay_prints(
    name: str, index: int, tmp_path: Path
) -> None:
    variant = derive_variants(GOOD[name])[index]
    for turn, events in enumerate(variant.responses, start=1):
        path = tmp_path / f"turn-{turn}.jsonl"
        write_cassette(path, events)
        assert_trace_is_the_replay(str(path))


def test_the_interleaved_stream_draws_the_open_blocks_as_they_change() -> None:
    """start(1) start(3) delta(3) delta(1) stop(1) stop(3): open {1} {1,3} {1,3} {1,3} {3} {},
    emitted tool_call(1) tool_call(3), then done."""
    rows = list(trace(LIBRARY / "interleaved.jsonl"))
    tools = [row for row in rows if row.index in (1, 3)]
    json_deltas_before = [row for row in tools if row.event == "content_block_delta"]
    picture = [row for row in tools if row not in json_deltas_before[:1]]  # delta(1) of ""
    assert [(row.event.removeprefix("content_block_"), row.index) for row in picture] == [
        ("start", 1),
        ("start", 3),
        ("delta", 3),
        ("delta", 3),
        ("delta", 1),
        ("stop", 1),
        ("stop", 3),
    ]
    assert [row.open for row in picture] == [(1,), (1, 3), (1, 3), (1, 3), (1, 3), (3,), ()]
    calls = {row.index: event_to_json(row.emits[0]) for row in picture if row.emits}
    assert [call["call"]["input"]["path"] for call in calls.values()] == [
        "notes/a.md",
        "notes/b.md",
    ]
    assert list(calls) == [1, 3]
    assert rows[-1].event == END
    assert [event.type for event in rows[-1].emits] == ["done"]


def test_a_rule_firing_mid_stream_is_the_last_row_and_carries_the_error() -> None:
    rows = json_lines(
        run(
            "replay",
            "--trace",
            "--format",
            "json",
            str(LIBRARY / "errors" / "duplicate_tool_start.jsonl"),
        )
    )
    assert [row["n"] for row in rows] == [2, 3, 4, 5]
    assert rows[-1]["event"] == "content_block_start"
    assert rows[-1]["open"] == [1]  # the machine's state is as before the event it refused
    assert rows[-1]["error"] == {
        "code": "duplicate_tool_start",
        "message": "Anthropic stream protocol error: duplicate tool_use start for block 1",
    }


def test_an_end_of_stream_error_is_on_the_end_row_with_the_blocks_left_open() -> None:
    path = LIBRARY / "errors" / "unclosed_tool_blocks_at_end.jsonl"
    rows = json_lines(run("replay", "--trace", "--format", "json", str(path)))
    assert rows[-1]["n"] is None and rows[-1]["event"] == END
    assert rows[-1]["open"] == [0]
    assert rows[-1]["error"]["code"] == "unclosed_tool_blocks"


def test_directives_are_rows_of_their_own_and_change_no_state(tmp_path: Path) -> None:
    path = tmp_path / "stalled.jsonl"
    events = StreamBuilder().tool(1, "read", {"path": "a.md"}).stop("tool_use").events()
    write_cassette(path, [*events[:2], {"harness": "stall", "ms": 5}, *events[2:]])
    rows = json_lines(run("replay", "--trace", "--format", "json", str(path)))
    directive = rows[2]  # no header: line 3
    assert directive == {"n": 3, "event": "directive", "index": None, "open": [1], "emits": []}
    text = run("replay", "--trace", str(path)).stdout.splitlines()
    assert text[3] == '   3  {1}    directive stall {"ms": 5}'


def test_a_cut_directive_ends_the_trace_on_its_row_as_the_connection_drops(tmp_path: Path) -> None:
    path = tmp_path / "cut.jsonl"
    events = StreamBuilder().text(0, "Hi").stop().events()
    write_cassette(path, [*events[:3], {"harness": "cut"}, *events[3:]])
    rows = json_lines(run("replay", "--trace", "--format", "json", str(path)))
    assert rows[-1]["event"] == "directive"
    assert rows[-1]["error"]["code"] == "connection_error:RemoteProtocolError"


def test_the_text_trace_of_the_interleaved_stream() -> None:
    result = run("replay", "--trace", str(LIBRARY / "interleaved.jsonl"))
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [
        "line  open   event                 emits",
        "   2  {}     message_start",
        '   3  {}     start(0) text ""',
        "   4  {}     ping",
        '   5  {}     delta(0) text_delta   text "I\'ll read both files"',
        '   6  {}     delta(0) text_delta   text " at once."',
        "   7  {}     stop(0)",
        "   8  {1}    start(1) tool_use read toolu_01T1x1fJ34qAmk2tNTrN7Up6 {}",
        '   9  {1}    delta(1) input_json_delta ""',
        "  10  {1,3}  start(3) tool_use read toolu_01GcQvRvBoCBcPoAW6VyJCrk {}",
        '  11  {1,3}  delta(3) input_json_delta ""',
        '  12  {1,3}  delta(3) input_json_delta "{\\"path\\": \\"notes/b.md\\"}"',
        '  13  {1,3}  delta(1) input_json_delta "{\\"path\\": \\"notes/a.md\\"}"',
        "  14  {3}    stop(1)               tool_call read toolu_01T1x1fJ34qAmk2tNTrN7Up6",
        "  15  {}     stop(3)               tool_call read toolu_01GcQvRvBoCBcPoAW6VyJCrk",
        '  16  {}     message_delta stop_reason="tool_use"',
        "  17  {}     message_stop",
        " end  {}     end of stream         done",
    ]


@pytest.mark.parametrize(
    "path", LIBRARY_FILES, ids=[Path(p).relative_to(LIBRARY).as_posix() for p in LIBRARY_FILES]
)
def test_every_text_row_fits_an_80_column_terminal(path: str) -> None:
    for line in format_rows(trace(path)):
        assert len(line) <= 80, line


def test_long_text_and_json_are_cut_to_an_excerpt_that_fits(tmp_path: Path) -> None:
    path = tmp_path / "long.jsonl"
    long = "word " * 100
    StreamBuilder().text(0, long).tool(1, "read", {"path": long}, pieces=1).stop("tool_use").write(
        path, "long text and a long tool input"
    )
    lines = list(format_rows(trace(path)))
    assert all(len(line) <= 80 for line in lines)
    assert sum(line.endswith(" wor…") or line.endswith(" w…") for line in lines) == 2


def test_cassette_text_reaches_the_terminal_escaped(tmp_path: Path) -> None:
    path = tmp_path / "hostile.jsonl"
    StreamBuilder().text(0, "\x1b[31mred\u202e").tool(1, "re\x1bad", {"p": "\x07"}).stop(
        "tool_use"
    ).write(path, "control characters in text, a tool name and its input")
    result = run("replay", "--trace", str(path))
    assert result.exit_code == 0
    assert "\x1b" not in result.stdout and "\u202e" not in result.stdout
    assert "\x07" not in result.stdout
    assert "\\u001b[31mred\\u202e" in result.stdout
    assert "tool_call re\\u001bad" in result.stdout
    assert json_lines(run("replay", "--trace", "--format", "json", str(path)))[2]["emits"] == [
        {"type": "text", "text": "\x1b[31mred\u202e"}
    ]


def test_several_cassettes_each_get_a_heading_or_a_cassette_field() -> None:
    paths = [str(LIBRARY / "text_only.jsonl"), str(LIBRARY / "errors" / "orphan_json_delta.jsonl")]
    text = run("replay", "--trace", *paths)
    assert text.exit_code == 1
    assert [line for line in text.stdout.splitlines() if line.startswith("== ")] == [
        f"== {path}" for path in paths
    ]
    rows = json_lines(run("replay", "--trace", "--format", "json", *paths))
    assert {row["cassette"] for row in rows} == set(paths)


def test_an_unusable_line_stops_the_trace_with_path_and_line_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "broken.jsonl"
    events = StreamBuilder().text(0, "Hi").stop().events()
    path.write_text(
        "\n".join(
            json.dumps(line) for line in [events[0], events[1], {"type": "content_block_delta"}]
        )
        + "\n"
    )
    result = run("replay", "--trace", str(path))
    assert result.exit_code == 2
    assert result.stdout.splitlines()[1:] == [
        "   1  {}     message_start",
        '   2  {}     start(0) text ""',
    ]
    assert f"{path}:3: " in result.stderr
    assert "Traceback" not in result.output


def test_trace_through_the_sdk_is_refused_in_one_line() -> None:
    result = run("replay", "--trace", "--via", "sdk", str(LIBRARY / "text_only.jsonl"))
    assert result.exit_code == 2
    assert "--trace replays directly" in result.output


def test_the_adapters_open_blocks_are_a_snapshot_it_never_changes() -> None:
    adapter = StreamAdapter()
    events = list(sdk_events(Cassette(LIBRARY / "interleaved.jsonl")))
    seen = []
    for event in events:
        adapter.feed(event)
        seen.append(adapter.open_tool_blocks)
    assert (1, 3) in seen and seen[-1] == ()
    assert isinstance(seen[-1], tuple)
    declared = vars(StreamAdapter)["open_tool_blocks"]
    assert isinstance(declared, property) and declared.fset is None


def test_the_hint_is_a_command_a_shell_runs_as_shown() -> None:
    assert (
        trace_hint("cassettes/interleaved.jsonl")
        == "harness replay --trace cassettes/interleaved.jsonl"
    )
    assert trace_hint(Path("my dir/a b.jsonl")) == "harness replay --trace 'my dir/a b.jsonl'"
    assert "\x1b" not in trace_hint("a\x1b.jsonl")


def test_an_outcome_names_its_cassette_and_equal_streams_stay_equal(tmp_path: Path) -> None:
    from harness.snapshot import trace_line

    copy = tmp_path / "copy.jsonl"
    copy.write_bytes((LIBRARY / "text_only.jsonl").read_bytes())
    original, copied = replay_outcome(LIBRARY / "text_only.jsonl"), replay_outcome(copy)
    assert original == copied
    assert copied.source == str(copy)
    assert trace_line(copied) == f"trace: harness replay --trace {copy}"
    assert trace_line("a summary string") is None


def test_realtime_paces_the_trace_and_shows_the_arrival_offsets(tmp_path: Path) -> None:
    path = tmp_path / "recorded.jsonl"
    events = StreamBuilder().text(0, "Hi").stop().events()
    write_cassette(path, [events[0], {"harness": "at", "ms": 1}, *events[1:]])
    result = run("replay", "--trace", "--realtime", str(path))
    assert result.exit_code == 0
    assert '   2  {}     directive at {"ms": 1}' in result.stdout.splitlines()


def test_a_stall_past_the_timeout_ends_the_trace_on_its_row_as_replay_does(tmp_path: Path) -> None:
    path = tmp_path / "stalled.jsonl"
    events = StreamBuilder().text(0, "Hi").stop().events()
    write_cassette(path, [*events[:2], {"harness": "stall", "ms": 3000}, *events[2:]])
    rows = json_lines(run("replay", "--trace", "--format", "json", "--timeout", "2", str(path)))
    assert rows[-1]["n"] == 3 and rows[-1]["event"] == "directive"
    assert rows[-1]["error"]["code"] == "connection_error:ReadTimeout"
    assert json_lines(run("replay", "--trace", "--format", "json", "--timeout", "4", str(path)))[
        -1
    ]["emits"] == [{"type": "done"}]


def test_a_fault_session_folder_is_traced_turn_by_turn_up_to_the_turn_played(
    tmp_path: Path,
) -> None:
    """`harness replay` plays http_429_then_ok as one call (the SDK retries the 429); its
    trace draws each turn that call reaches, the retried answer marked, and exits as the
    replay does."""
    assert run("faults", str(LIBRARY / "interleaved.jsonl"), "--out", str(tmp_path)).exit_code == 0
    folder = str(tmp_path / "interleaved.http_429_then_ok")
    replayed = run("replay", "--format", "json", folder)
    text = run("replay", "--trace", folder)
    assert text.exit_code == replayed.exit_code == 0
    heads = [line for line in text.stdout.splitlines() if line.startswith("-- ")]
    assert heads == ["-- turn-01.jsonl  (an answer the SDK retries)", "-- turn-02.jsonl"]
    assert "error api_error:rate_limit_error" in text.stdout
    rows = json_lines(run("replay", "--trace", "--format", "json", folder))
    turns = [Path(folder, "turn-01.jsonl"), Path(folder, "turn-02.jsonl")]
    assert [Path(row["cassette"]) for row in rows] == [turns[0], *[turns[1]] * (len(rows) - 1)]
    assert rows[0]["error"]["code"] == "api_error:rate_limit_error"
    played = [emit for row in rows[1:] for emit in row["emits"]]
    assert played == json_lines(replayed), "the played turn's emits are the replay's lines"


# -- bounds: a row costs the same however many blocks are open --------------------------------


def _open_all_then_close(path: Path, blocks: int) -> int:
    """A stream that opens `blocks` tool blocks, then stops each in turn; its event count."""
    first, stop_reason, stop = StreamBuilder().stop("tool_use").events()
    starts = [
        {
            "type": "content_block_start",
            "index": index,
            "content_block": {"type": "tool_use", "id": f"t{index}", "name": "f", "input": {}},
        }
        for index in range(blocks)
    ]
    stops = [{"type": "content_block_stop", "index": index} for index in range(blocks)]
    events = [first, *starts, *stops, stop_reason, stop]
    write_cassette(path, events)
    return len(events)


def _assert_text_trace_is_linear(path: Path, events: int) -> list[str]:
    """The text trace of `path`: one line a row, each within the width, so its size is
    linear in the events; returns its lines."""
    result = run("replay", "--trace", str(path))
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert len(lines) == 1 + events + 1, "the header, a line a row, the end row"
    assert max(len(line) for line in lines) <= WIDTH
    assert len(result.stdout) <= (WIDTH + 1) * (events + 2)
    return lines


@pytest.mark.slow
def test_many_open_tool_blocks_show_as_a_count_and_the_first_few(tmp_path: Path) -> None:
    blocks = 2000
    path = tmp_path / "open.jsonl"
    events = _open_all_then_close(path, blocks)
    lines = _assert_text_trace_is_linear(path, events)
    assert lines[1 + blocks].startswith("2001  {0,1,2,3,…+1996} start(1999) ")
    assert lines[2 + blocks].startswith("2002  {1,2,3,4,…+1995} stop(0) ")
    assert lines[-5].startswith("4000  {1999} stop(1998) ")
    assert max(len(line[6:].split(" ")[0]) for line in lines[1:]) == OPEN_WIDTH
    rows = json_lines(run("replay", "--trace", "--format", "json", str(path)))
    open_after = [*range(blocks + 1), *range(blocks - 1, -1, -1), 0, 0, 0]
    for row, count in zip(rows, open_after, strict=True):
        assert row.get("open_count", len(row["open"])) == count
        assert ("open_count" in row) == (count > OPEN_LISTED)
        assert len(row["open"]) == min(count, OPEN_LISTED)
        first = 0 if row["n"] is None or row["n"] <= blocks + 1 else row["n"] - blocks - 1
        assert row["open"] == list(range(first, first + len(row["open"])))


#: The long stream of docs/reliability.md: this many tool blocks open at once.
MANY_OPEN_BLOCKS = 100_000


@pytest.mark.slow
def test_a_hundred_thousand_open_tool_blocks_trace_in_linear_output(tmp_path: Path) -> None:
    path = tmp_path / "open.jsonl"
    events = _open_all_then_close(path, MANY_OPEN_BLOCKS)
    lines = _assert_text_trace_is_linear(path, events)
    assert lines[100_001].startswith("100001  {0,1,2,…+99997} start(99999) ")


def test_a_small_open_set_is_shown_in_full_a_wide_one_cut_to_the_width(tmp_path: Path) -> None:
    def shown(indexes: list[int]) -> str:
        path = tmp_path / "open.jsonl"
        first, _, _ = StreamBuilder().stop("tool_use").events()
        starts = [
            {
                "type": "content_block_start",
                "index": index,
                "content_block": {"type": "tool_use", "id": f"t{index}", "name": "f", "input": {}},
            }
            for index in indexes
        ]
        write_cassette(path, [first, *starts])
        *_, last_start, _ = trace(path, sdk_objects=False)
        return format_row(last_start)[0].split()[1]

    assert shown([1, 3]) == "{1,3}"
    assert shown([10, 11, 12, 13, 14]) == "{10,11,12,13,14}"  # 16 characters: in full
    assert shown([10, 11, 12, 13, 14, 15]) == "{10,11,12,…+3}"
    assert shown([123456789012345, 7]) == "{7,…+1}"
    assert shown([123456789012345]) == "{…+1}"
