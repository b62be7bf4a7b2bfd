"""Section (i) of the benchmark: `harness view` on streams of 10^3 to 10^5 events (issue 40).

The mixed stream of `bench.synthetic` (90% text deltas, 10% tool blocks of up to 1000
pieces) at each size, drawn as one page (`harness._view.stream_page`): the page's size,
its rows (`<tr>` elements, folds and their samples included: what a browser lays out),
and the CPU seconds to build it. Where a Chromium is installed, the seconds a headless
one takes to load, lay out and paint the page from disk (a screenshot), less what it
takes for an empty page: the render time a reader waits (wall time, the median of a few
runs after one that warms the browser up: a shared machine moves it by tenths). The
full run measures 10^3, 10^4 and 10^5 events (the sizes of the run up to 10^5); the
quick run its own small ones. Figures are printed, never asserted: a page stays about
the same size from 10^4 events on, since its runs of similar rows fold (docs/view.md).
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final

from bench.synthetic import synthetic_events
from harness._cassette.codec import make_header, write_cassette

if TYPE_CHECKING:
    from bench.run import Report

__all__ = ["LARGEST", "browser", "section_view"]

#: The largest stream the section draws (issue 40 asks for 10^3, 10^4 and 10^5 events).
LARGEST: Final = 10**5
BROWSERS: Final = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def browser() -> str | None:
    """A Chromium on the PATH, or None."""
    return next((found for name in BROWSERS if (found := shutil.which(name))), None)


def _paint_seconds(command: str, page: Path, folder: Path) -> float | None:
    """Wall seconds for a headless Chromium to load `page` from disk and paint it (a
    screenshot); None if it fails."""
    argv = [command, "--headless", "--disable-gpu", "--hide-scrollbars", "--no-first-run"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        argv.append("--no-sandbox")  # Chromium refuses to run as root with its sandbox
    argv += [
        f"--user-data-dir={folder / 'profile'}",
        f"--screenshot={folder / 'shot.png'}",
        "--window-size=1280,2000",
        page.as_uri(),
    ]
    begin = time.perf_counter()
    try:
        done = subprocess.run(argv, capture_output=True, timeout=120, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    wall = time.perf_counter() - begin
    return wall if done.returncode == 0 else None


def _median_paint(command: str, page: Path, folder: Path, runs: int) -> float | None:
    """The median of `runs` paints of `page` (None if one fails)."""
    found = [_paint_seconds(command, page, folder) for _ in range(runs)]
    if any(seconds is None for seconds in found):
        return None
    return statistics.median(seconds for seconds in found if seconds is not None)


def section_view(sizes: Sequence[int], report: Report, *, runs: int = 3) -> None:
    """Print section (i): each size's page, its rows, the seconds to build and paint it
    (the median of `runs` paints, after one to warm the browser's profile up)."""
    from harness._view import stream_page

    chosen = [size for size in sizes if size <= LARGEST] or [min(sizes)]
    command = browser()
    report.line(
        "(i) harness view: the mixed stream drawn as one page, its size, its rows, "
        "CPU seconds to build it"
        + (", a headless Chromium's seconds to paint it" if command else "")
    )
    rows: list[list[str]] = []
    with tempfile.TemporaryDirectory(prefix="harness-bench-view-") as temporary:
        folder = Path(temporary)
        blank = folder / "blank.html"
        blank.write_text("<!DOCTYPE html><title>blank</title>", encoding="utf-8")
        baseline = None
        if command is not None and _paint_seconds(command, blank, folder) is not None:
            baseline = _median_paint(command, blank, folder, runs)
        for size in chosen:
            path = folder / f"mixed-{size}.jsonl"
            write_cassette(path, synthetic_events("mixed", size), header=make_header("bench"))
            begin = time.process_time()
            html = stream_page(path)
            cpu = time.process_time() - begin
            page = folder / f"mixed-{size}.html"
            page.write_text(html, encoding="utf-8")
            painted = "-"
            if command is not None and baseline is not None:
                seconds = _median_paint(command, page, folder, runs)
                painted = "failed" if seconds is None else f"{max(seconds - baseline, 0):.2f}"
            rows.append(
                [
                    f"{size:,}",
                    f"{len(html.encode()) / 1024:,.0f}",
                    f"{html.count('<tr'):,}",
                    f"{cpu:.2f}",
                    painted,
                ]
            )
    report.table(["events", "page KiB", "rows", "build cpu s", "paint s"], rows)
    if command is None:
        report.line("  paint: no Chromium installed (chromium, google-chrome on the PATH)")
    elif baseline is None:
        report.line(f"  paint: {command} did not run headless here")
    report.line()


def main() -> int:
    """`python -m bench.view [SIZES]`: this section alone (`1e3,1e4,1e5` by default)."""
    from bench.run import Report, parse_sizes

    sizes = parse_sizes(sys.argv[1]) if len(sys.argv) > 1 else (10**3, 10**4, 10**5)
    section_view(sizes, Report(sys.stdout))
    return 0


if __name__ == "__main__":
    sys.exit(main())
