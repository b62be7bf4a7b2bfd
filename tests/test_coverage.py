"""`harness coverage`: every cassette is filed under its outcome; unreached codes fail the run."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from harness import ERROR_TABLE, write_cassette
from harness._testing.coverage import DONE, measure_coverage
from harness.builder import StreamBuilder
from harness.faults import derive_variants
from harness_cli.main import cli

GOOD = StreamBuilder().text(0, "Reading.").tool(1, "read", {"path": "a.md"}).stop("tool_use")


def _library(folder: Path) -> list[str]:
    """A good cassette and every single-cassette variant derived from it, in `folder`."""
    folder.mkdir(exist_ok=True)
    write_cassette(folder / "good.jsonl", GOOD.events())
    for variant in derive_variants(GOOD.events()):
        if variant.fault.wire:
            continue  # served by a client (a session, a stall): not a cassette to replay alone
        write_cassette(folder / f"{variant.fault.name}.jsonl", variant.events)
    return sorted(str(path) for path in folder.glob("*.jsonl"))


def test_each_cassette_is_filed_under_the_outcome_it_replays_to(tmp_path: Path) -> None:
    paths = _library(tmp_path)
    report = measure_coverage(paths)
    assert report.reached[DONE] == [str(tmp_path / "good.jsonl")]
    assert report.reached["non_object_tool_input"] == [
        str(tmp_path / "tool_input_list.jsonl"),
        str(tmp_path / "tool_input_null.jsonl"),
    ]
    assert report.reached["api_error:overloaded_error"] == [
        str(tmp_path / "overloaded_mid_stream.jsonl")
    ]
    assert report.missing == []


def test_missing_lists_unreached_codes_in_table_order(tmp_path: Path) -> None:
    write_cassette(tmp_path / "good.jsonl", GOOD.events())
    report = measure_coverage([str(tmp_path / "good.jsonl")])
    assert report.missing == list(ERROR_TABLE)
    assert [code for code, _ in report.rows()] == [*ERROR_TABLE, DONE]


def test_a_complete_library_exits_zero_and_says_so(tmp_path: Path) -> None:
    _library(tmp_path)
    result = CliRunner().invoke(cli, ["coverage", str(tmp_path)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[-1] == f"{len(ERROR_TABLE)} of {len(ERROR_TABLE)} error codes reached"
    assert any(line.split()[:2] == ["api_error:overloaded_error", "1"] for line in lines)


def test_a_code_reached_by_none_exits_one_and_is_named(tmp_path: Path) -> None:
    _library(tmp_path)
    (tmp_path / "drop_message_start.jsonl").unlink()
    result = CliRunner().invoke(cli, ["coverage", str(tmp_path)])
    assert result.exit_code == 1
    assert "missing_message_start" in result.output.splitlines()[-1]
    rows = [line.split() for line in result.output.splitlines()]
    row = next(row for row in rows if row[0] == "missing_message_start")
    assert " ".join(row[1:]) == "0 -- reached by none"


def test_an_unusable_cassette_exits_two_with_its_line(tmp_path: Path) -> None:
    _library(tmp_path)
    (tmp_path / "zz_bad.jsonl").write_text('{"type": "message_start"}\n')
    result = CliRunner().invoke(cli, ["coverage", str(tmp_path)])
    assert result.exit_code == 2
    assert f"{tmp_path / 'zz_bad.jsonl'}:1: event line does not match" in result.output
    assert "Traceback" not in result.output


def test_an_empty_folder_is_refused(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["coverage", str(tmp_path)])
    assert result.exit_code == 2
    assert "no *.jsonl cassettes found" in result.output
