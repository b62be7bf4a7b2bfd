"""The serve load and stall benchmarks run and print every figure (none is asserted: people
read them)."""

from __future__ import annotations

import pytest

from bench.serve_load import main


@pytest.mark.slow
def test_a_small_load_prints_every_figure_with_nothing_lost(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--clients", "4", "--rounds", "2", "--samples", "4"]) == 0
    printed = capsys.readouterr().out
    for row in (
        "outcomes identical to direct replay  8/8",
        "event lists identical to direct replay  8/8",
        "events/s",
        "time to first event, p50",
        "time to first event, p99",
        "added by the proxy, p50",
    ):
        assert row in printed
    assert printed.count(" / 0\n") == 2  # events lost, for each kind of client


@pytest.mark.slow
def test_the_stall_benchmark_prints_every_figure(capsys: pytest.CaptureFixture[str]) -> None:
    from bench.stall import main as stall

    sizes = ["--mb", "0.1", "--frame-mb", "0.1", "--event-mb", "0.1", "--element-mb", "0.1"]
    assert stall(sizes) == 0
    printed = capsys.readouterr().out
    for row in (
        "serve, 0.1 MB",
        "proxy, 0.1 MB",
        "proxy, a 0.1 MB Bedrock chunk frame from upstream",
        "proxy --strict, a 0.1 MB ConverseStream frame from upstream",
        "proxy --strict, a 0.1 MB SSE event from upstream",
        "proxy, a 0.1 MB Gemini array element of {}s from upstream",
        "proxy --strict, a 0.1 MB Gemini array element of text from upstream",
        "hostile request: HTTP/1.1 ",
        "small requests meanwhile",
        "the worst (the stall)",
        "server's peak memory",
    ):
        assert row in printed
