"""`harness diff`: outcomes compared, not raw lines; exit 0 same, 1 different, 2 unusable."""

from __future__ import annotations

import io
import json
import sys
import tracemalloc
from collections.abc import Iterator
from itertools import islice
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import LIBRARY

from harness import Cassette, write_cassette
from harness._testing.diff import diff_outcomes
from harness._testing.trace import SideBySide, TraceRow, trace
from harness.builder import StreamBuilder
from harness.faults import fault_named
from harness_cli.main import cli


def _write(path: Path, builder: StreamBuilder) -> str:
    write_cassette(path, builder.events())
    return str(path)


def _stream(*, tool_id: str = "toolu_a", text: tuple[str, ...] = ("Hi", " there")) -> StreamBuilder:
    return (
        StreamBuilder()
        .text(0, *text)
        .tool(1, "read", {"path": "a.md"}, id=tool_id)
        .stop("tool_use")
    )


def test_streams_differing_only_in_pings_and_json_chunking_have_the_same_outcome(
    tmp_path: Path,
) -> None:
    a = _write(tmp_path / "a.jsonl", _stream())
    b = _write(
        tmp_path / "b.jsonl",
        StreamBuilder()
        .ping()
        .text(0, "Hi", " there")
        .ping()
        .tool(1, "read", {"path": "a.md"}, id="toolu_a", pieces=4)
        .stop("tool_use"),
    )
    result = diff_outcomes(a, b)
    assert result.same
    assert (result.a_code, result.b_code) == ("done", "done")
    cli_result = CliRunner().invoke(cli, ["diff", a, b])
    assert cli_result.exit_code == 0
    assert cli_result.output == "same outcome: 4 lines, ending in done\n"


def test_a_changed_text_chunk_shows_as_a_unified_diff_and_exits_one(tmp_path: Path) -> None:
    a = _write(tmp_path / "a.jsonl", _stream())
    b = _write(tmp_path / "b.jsonl", _stream(text=("Hi there",)))
    result = CliRunner().invoke(cli, ["diff", a, b])
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert lines[1:3] == [f"--- {a}", f"+++ {b}"]
    assert '-{"type": "text", "text": "Hi"}' in lines
    assert '-{"type": "text", "text": " there"}' in lines
    assert '+{"type": "text", "text": "Hi there"}' in lines


def test_a_broken_re_recording_names_both_endings(tmp_path: Path) -> None:
    a = _write(tmp_path / "a.jsonl", _stream())
    broken = fault_named("truncate_tool_json").derive(_stream().events())
    assert broken is not None
    write_cassette(tmp_path / "b.jsonl", broken)
    b = str(tmp_path / "b.jsonl")
    result = CliRunner().invoke(cli, ["diff", a, b])
    assert result.exit_code == 1
    assert result.output.splitlines()[0] == (
        f"outcomes differ: {a} ends in done, {b} in invalid_tool_json"
    )
    assert any(line.startswith('+{"type": "protocol_error"') for line in result.output.splitlines())
    assert result.output.splitlines()[-1] == f"trace: harness diff --trace {a} {b}"


def test_new_tool_ids_differ_unless_ids_are_ignored(tmp_path: Path) -> None:
    a = _write(tmp_path / "a.jsonl", _stream(tool_id="toolu_first"))
    b = _write(tmp_path / "b.jsonl", _stream(tool_id="toolu_rerecorded"))
    assert not diff_outcomes(a, b).same
    assert diff_outcomes(a, b, ignore_ids=True).same
    assert CliRunner().invoke(cli, ["diff", "--ignore-ids", a, b]).exit_code == 0


def test_ignoring_ids_still_sees_calls_swap_order(tmp_path: Path) -> None:
    def two_calls(first: str, second: str) -> StreamBuilder:
        return StreamBuilder().tool(0, "read", {"path": first}).tool(1, "read", {"path": second})

    a = _write(tmp_path / "a.jsonl", two_calls("a.md", "b.md").stop("tool_use"))
    b = _write(tmp_path / "b.jsonl", two_calls("b.md", "a.md").stop("tool_use"))
    assert not diff_outcomes(a, b, ignore_ids=True).same


def test_an_unusable_cassette_exits_two_with_its_line(tmp_path: Path) -> None:
    a = _write(tmp_path / "a.jsonl", _stream())
    missing = str(tmp_path / "missing.jsonl")
    result = CliRunner().invoke(cli, ["diff", a, missing])
    assert result.exit_code == 2
    assert result.output.startswith(f"{missing}:1: cannot read")
    assert "Traceback" not in result.output


def test_a_folder_is_named_as_one_not_as_an_unreadable_file(tmp_path: Path) -> None:
    a = _write(tmp_path / "a.jsonl", _stream())
    result = CliRunner().invoke(cli, ["diff", str(tmp_path), a])
    assert result.exit_code == 2
    assert result.output == f"{tmp_path}:1: cannot read: a folder, not a cassette file\n"


# -- --trace: both traces side by side, up to the first row where they differ -------------------


def test_trace_shows_both_traces_up_to_the_row_where_a_broken_stream_parts(
    tmp_path: Path,
) -> None:
    a = _write(tmp_path / "a.jsonl", _stream())
    broken = fault_named("drop_tool_stop").derive(_stream().events())
    assert broken is not None
    write_cassette(tmp_path / "b.jsonl", broken)
    b = str(tmp_path / "b.jsonl")
    result = CliRunner().invoke(cli, ["diff", "--trace", a, b])
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert lines[0] == f"outcomes differ: {a} ends in done, {b} in unclosed_tool_blocks"
    full = lines.index("first difference (!), in full:")
    rows = lines[2:full]
    assert [row[39] for row in rows] == ["|"] * (len(rows) - 1) + ["!"]
    assert "stop(1) tool_call read" in rows[-1][:38]
    assert "message_delta" in rows[-1][41:]
    assert lines[full + 1 :] == [
        "A    9  {}     stop(1)               tool_call read toolu_a",
        'B    9  {1}    message_delta stop_reason="tool_use"',
    ]
    assert all(len(line) <= 80 for line in lines[1:])


def test_trace_passes_over_pings_and_sees_json_chunked_otherwise(tmp_path: Path) -> None:
    a = _write(tmp_path / "a.jsonl", _stream())
    b = _write(
        tmp_path / "b.jsonl",
        StreamBuilder()
        .ping()
        .text(0, "Hi", " there")
        .ping()
        .tool(1, "read", {"path": "a.md"}, id="toolu_a")
        .stop("tool_use"),
    )
    same = CliRunner().invoke(cli, ["diff", "--trace", a, b])
    assert same.exit_code == 0
    assert same.output.splitlines()[-1] == "the traces agree row for row"
    c = _write(
        tmp_path / "c.jsonl",
        StreamBuilder()
        .text(0, "Hi", " there")
        .tool(1, "read", {"path": "a.md"}, id="toolu_a", pieces=4)
        .stop("tool_use"),
    )
    chunked = CliRunner().invoke(cli, ["diff", "--trace", a, c])
    assert chunked.exit_code == 0, "the same outcome"
    assert "first difference (!), in full:" in chunked.output.splitlines()


def test_trace_with_ignore_ids_compares_tool_calls_by_position(tmp_path: Path) -> None:
    a = _write(tmp_path / "a.jsonl", _stream(tool_id="toolu_first"))
    b = _write(tmp_path / "b.jsonl", _stream(tool_id="toolu_rerecorded"))
    differ = CliRunner().invoke(cli, ["diff", "--trace", a, b]).output.splitlines()
    assert differ[-2:] == [
        "A    6  {1}    start(1) tool_use read toolu_first {}",
        "B    6  {1}    start(1) tool_use read toolu_rerecorded {}",
    ]
    same = CliRunner().invoke(cli, ["diff", "--trace", "--ignore-ids", a, b])
    assert same.exit_code == 0
    assert same.output.splitlines()[-1] == "the traces agree row for row"


class _Sink(io.TextIOBase):
    """A standard output that keeps nothing: what is printed is counted, never held."""

    def __init__(self) -> None:
        self.lines = 0

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.lines += text.count("\n")
        return len(text)


def _peak_memory_of_diff_trace(tmp_path: Path, deltas: int, monkeypatch: pytest.MonkeyPatch) -> int:
    """The most memory `harness diff --trace` holds at once over two equal streams of
    `deltas` text deltas (every row printed), its output thrown away as it comes."""
    a, b = (tmp_path / f"{side}{deltas}.jsonl" for side in "ab")
    for path in (a, b):
        _write(path, StreamBuilder().text(0, *["w"] * deltas).stop())
    sink = _Sink()
    monkeypatch.setattr(sys, "stdout", sink)
    tracemalloc.start()
    try:
        with pytest.raises(SystemExit) as exited:
            cli.main(["diff", "--trace", str(a), str(b)], standalone_mode=False)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        monkeypatch.undo()
    assert exited.value.code == 0
    rows = deltas + 6  # and message_start, the block's start and stop, message_delta, _stop, end
    assert sink.lines == 2 + rows + 1, "the verdict, the labels, a line a row, the agreement"
    return peak


@pytest.mark.slow
def test_trace_prints_rows_as_they_come_holding_neither_stream(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ten times the rows, the same memory: neither the traces nor the outcomes are held
    (holding them took 10x here). tracemalloc counts every thread's allocations, and a
    worker's own threads allocate tens of KB at times: the least of two runs counts."""
    _peak_memory_of_diff_trace(tmp_path, 50, monkeypatch)  # imports and caches, once
    short = min(_peak_memory_of_diff_trace(tmp_path, 500, monkeypatch) for _ in range(2))
    long = min(_peak_memory_of_diff_trace(tmp_path, 5000, monkeypatch) for _ in range(2))
    assert long < 1.5 * short


def test_side_by_side_gives_each_line_once_its_rows_are_read() -> None:
    rows = [row for row in trace(LIBRARY / "text_only.jsonl") if row.event != "ping"]

    def two_rows_then_broken() -> Iterator[TraceRow]:
        yield from rows[:2]
        raise AssertionError("read past the rows the lines need")

    sides = SideBySide(two_rows_then_broken(), two_rows_then_broken(), ("a", "b"))
    lines = list(islice(sides, 3))
    assert [line[39] for line in lines[1:]] == ["|", "|"]
    assert sides.agree is None, "known once every line is out"
    whole = SideBySide(iter(rows), iter(rows), ("a", "b"))
    assert len(list(whole)) == 1 + len(rows) and whole.agree is True


def test_trace_reads_standard_input_once_for_both_passes() -> None:
    path = str(LIBRARY / "interleaved.jsonl")
    result = CliRunner().invoke(cli, ["diff", "--trace", "-", path], input=Path(path).read_bytes())
    assert result.exit_code == 0
    assert result.output.splitlines()[-1] == "the traces agree row for row"


# -- OpenAI cassettes ----------------------------------------------------------------------

OPENAI = Path(__file__).resolve().parent.parent / "cassettes" / "openai"


def _openai_copy(path: Path, source: Path, change: Any) -> str:
    """`source` (an OpenAI library cassette) with each of its lines after the header
    passed through `change` (which returns a line, or a list of lines in its place)."""
    header, *lines = source.read_text().splitlines()
    out = [header]
    for text in lines:
        changed = change(json.loads(text))
        out.extend(
            json.dumps(line) for line in (changed if isinstance(changed, list) else [changed])
        )
    path.write_text("\n".join(out) + "\n")
    return str(path)


def test_an_openai_re_recording_with_a_new_id_and_no_usage_has_the_same_outcome(
    tmp_path: Path,
) -> None:
    def rerecorded(line: dict[str, Any]) -> Any:
        if "choices" not in line:
            return line  # the done line
        return [{**line, "id": "chatcmpl-Rerecorded"}] if line["choices"] else []

    b = _openai_copy(tmp_path / "b.jsonl", OPENAI / "chat" / "text.jsonl", rerecorded)
    assert '"usage"' not in Path(b).read_text()
    result = CliRunner().invoke(cli, ["diff", str(OPENAI / "chat" / "text.jsonl"), b])
    assert result.exit_code == 0, result.output
    assert result.output == "same outcome: 4 lines, ending in done\n"


def test_an_openai_stream_and_its_broken_variant_differ_with_a_diff_and_a_trace_hint() -> None:
    a = str(OPENAI / "responses" / "text.jsonl")
    b = str(OPENAI / "responses" / "errors" / "sequence_gap.jsonl")
    result = CliRunner().invoke(cli, ["diff", a, b])
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert lines[0] == f"outcomes differ: {a} ends in done, {b} in sequence_gap"
    assert lines[1:3] == [f"--- {a}", f"+++ {b}"]
    assert '-{"type": "text", "text": "Paris is "}' in lines
    assert lines[-2].startswith('+{"type": "protocol_error", "code": "sequence_gap"')
    assert lines[-1] == f"trace: harness diff --trace {a} {b}"
    traced = CliRunner().invoke(cli, ["diff", "--trace", a, b])
    assert traced.exit_code == 1
    assert "first difference (!), in full:" in traced.output
    assert "sequence_gap" in traced.output


def test_new_openai_call_ids_differ_unless_ids_are_ignored(tmp_path: Path) -> None:
    source = OPENAI / "responses" / "one_tool.jsonl"

    def renamed(line: dict[str, Any]) -> Any:
        return json.loads(json.dumps(line).replace("call_01Weather", "call_99Other"))

    b = _openai_copy(tmp_path / "b.jsonl", source, renamed)
    assert "call_99Other" in Path(b).read_text()
    assert CliRunner().invoke(cli, ["diff", str(source), b]).exit_code == 1
    assert CliRunner().invoke(cli, ["diff", "--ignore-ids", str(source), b]).exit_code == 0


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (OPENAI / "chat" / "text.jsonl", OPENAI / "responses" / "text.jsonl"),
        (LIBRARY / "text_only.jsonl", OPENAI / "chat" / "text.jsonl"),
        (OPENAI / "responses" / "text.jsonl", LIBRARY / "text_only.jsonl"),
        (LIBRARY / "text_only.jsonl", LIBRARY / "gemini" / "text.jsonl"),
        (LIBRARY / "gemini" / "text.jsonl", LIBRARY / "bedrock" / "converse" / "text.jsonl"),
    ],
    ids=[
        "chat-responses",
        "anthropic-chat",
        "responses-anthropic",
        "anthropic-gemini",
        "gemini-bedrock",
    ],
)
@pytest.mark.parametrize(
    "command", [["diff"], ["diff", "--trace"], ["view"]], ids=["outcomes", "trace", "view"]
)
def test_cassettes_of_two_providers_are_one_line_and_exit_2(
    a: Path, b: Path, command: list[str], tmp_path: Path
) -> None:
    """The line needs no article before a provider's name (`an gemini cassette`, once)."""
    out = ["--out", str(tmp_path / "page.html")] if command == ["view"] else []
    result = CliRunner().invoke(cli, [*command, str(a), str(b), *out])
    assert result.exit_code == 2
    assert result.stdout == ""
    a_name, b_name = (Cassette(path).provider for path in (a, b))
    assert result.stderr == (
        f"{b}:1: a cassette of {b_name}, and {a} is one of {a_name}: "
        f"harness {command[0]} compares cassettes of one provider\n"
    )
