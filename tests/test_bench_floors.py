"""The floors benchmark runs and prints every figure and target (none is asserted: people
read them, `make bench`)."""

from __future__ import annotations

import pytest

from bench.floors import main

SECTIONS = ("(1) harness replay", "(2) 10 tests", "(3) 40 streams", "(4) 20 vcrpy", "Targets")
TARGETS = (
    "harness replay <= 5x python -c pass",
    "harness_client test <= 1.10x bare MockTransport",
    "harness serve <= 1.5x minimal aiohttp",
    "harness import <= 3x vcrpy loading",
)


@pytest.mark.slow
def test_a_quick_run_prints_every_section_and_every_target_with_a_ratio(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--quick"]) == 0
    printed = capsys.readouterr().out
    for heading in SECTIONS:
        assert heading in printed
    assert "40/40" in printed  # every served body identical, on each server
    assert "the bare client made in the test's body" in printed  # the reference peers
    assert "the whole body at once" in printed
    targets = printed.split("Targets")[1].splitlines()
    for name in TARGETS:
        (row,) = [line for line in targets if name in line]
        ratio, met = row.split()[-2:]
        assert ratio.endswith("x") and float(ratio[:-1]) > 0, row
        assert met in ("yes", "NO"), row
