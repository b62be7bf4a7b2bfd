"""The serve load benchmark runs and prints every figure (none is asserted: people read them)."""

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
