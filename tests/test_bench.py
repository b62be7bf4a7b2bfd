"""The benchmark runs and prints every figure; its synthetic streams are what they claim.

No timing is asserted here: figures are for people to read (`harness bench`).
"""

from __future__ import annotations

import io
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench.run import parse_sizes
from bench.synthetic import SHAPES, synthetic_events
from harness import make_header, replay_outcome, write_cassette
from harness_cli.main import cli

TARGET_ROWS = (
    "adapter >= 50x SDK, mixed 1,000",
    "adapter >= 500x SDK, one block of 300",
    "adapter ns/event flat, mixed",
    "replay <= 1.3x floor at 1,000",
    "replay peak memory at 1,000 < 150 MB",
    "harness --help <= 0.15x import anthropic",
    "small replay <= 1.15x import anthropic",
    "cassette client per request <= vcrpy",
    "harness.strict <= 1.10x plain, messages.stream()",
    "harness.strict <= 1.10x plain, chat.completions.stream()",
    "harness.strict <= 1.10x plain, responses.stream()",
    "anthropic adapter <= 2x orjson.loads",
    "chat adapter <= 2x orjson.loads",
    "responses adapter <= 2x orjson.loads",
    "converse adapter <= 2x orjson.loads",
    "gemini adapter <= 2x orjson.loads",
    "event-stream decoding <= 1.5x botocore's",
)


@pytest.mark.slow
def test_quick_run_prints_every_section_and_every_target_with_a_figure() -> None:
    result = CliRunner().invoke(cli, ["bench", "--quick"])
    assert result.exit_code == 0, result.output
    for heading in (
        "(a) adapter",
        "(b, c) harness replay",
        "(d) start-up",
        "(e) one",
        "(f) harness.strict",
        "(f') harness.strict, openai",
        "(g) harness conform",
        "(h) adapters vs orjson.loads",
        "(i) harness view",
        "(j) AWS event-stream decoding",
        "Targets",
    ):
        assert heading in result.output
    targets = result.output.split("Targets")[1].splitlines()
    for name in TARGET_ROWS:
        (row,) = [line for line in targets if name in line]
        assert row.split()[-1] in ("yes", "NO"), row
    assert "not run" not in result.output
    conform_row = next(line for line in targets if "conform --serve --persistent" in line)
    assert conform_row.split()[-1] == "n/a"  # the quick run judges one cassette's cases


@pytest.mark.parametrize("sizes", ["x", "", "5", "1e3,abc", "1e400"])
def test_bad_sizes_are_a_usage_error_naming_the_option(sizes: str) -> None:
    result = CliRunner().invoke(cli, ["bench", "--sizes", sizes])
    assert result.exit_code == 2
    assert "Invalid value for '--sizes'" in result.output
    assert "Traceback" not in result.output


def test_sizes_accept_scientific_notation() -> None:
    assert parse_sizes("1e3,2000,1e6") == (1000, 2000, 1_000_000)


def deltas(shape: str, size: int) -> Counter[str]:
    return Counter(
        event["delta"]["type"]
        for event in synthetic_events(shape, size)
        if event["type"] == "content_block_delta"
    )


@pytest.mark.slow
def test_mixed_stream_of_100k_holds_90k_text_and_10k_tool_deltas() -> None:
    assert deltas("mixed", 100_000) == {"text_delta": 90_000, "input_json_delta": 10_000}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_every_shape_has_the_asked_delta_count_and_replays_to_done(
    shape: str, tmp_path: Path
) -> None:
    assert sum(deltas(shape, 5000).values()) == 5000
    path = tmp_path / f"{shape}.jsonl"
    write_cassette(path, synthetic_events(shape, 5000), header=make_header(shape))
    outcome = replay_outcome(path)
    assert outcome.error is None
    assert outcome.events[-1].type == "done"


def test_the_view_section_prints_each_page_size_rows_and_build_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import bench.view
    from bench.run import Report

    monkeypatch.setattr(bench.view, "browser", lambda: None)  # no browser: the paint is "-"
    out = io.StringIO()
    bench.view.section_view((300, 3000, 10**6), Report(out))
    header, *rows, note, blank = out.getvalue().splitlines()[1:]
    assert blank == ""
    assert header.split() == ["events", "page", "KiB", "rows", "build", "cpu", "s", "paint", "s"]
    assert [row.split()[0] for row in rows] == ["300", "3,000"]  # 10^6 is past the section's
    for row in rows:
        _, kib, count, cpu, paint = row.split()
        assert float(kib.replace(",", "")) > 0 and int(count) > 0 and float(cpu) >= 0
        assert paint == "-"
    assert note == "  paint: no Chromium installed (chromium, google-chrome on the PATH)"
