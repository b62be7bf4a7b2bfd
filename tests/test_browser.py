"""The pages the harness writes, in a real browser: headless Chromium (tests/browser.py).

Each page loads from disk and asks for nothing; its DOM holds the rows it must, the
failing ones marked; a screenshot shows them in their colours; a cassette holding
`</script>` runs nothing. Each check is shown to fail on a page that breaks it (a page
that fetches an image, one that does not escape). Skipped, saying why, where no
Chromium is installed (`make test` installs one where it can).
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser import (
    Browser,
    BrowserError,
    Image,
    Page,
    css_colour,
    decode_png,
    element_box,
    why_no_browser,
)
from click.testing import CliRunner
from fault_run_project import HOSTILE_REASON, HOSTILE_TEXT, write_project

from harness._view.report import CLASS_COLOURS, FAILED_BORDER, VERDICT_COLOURS
from harness_cli.main import cli

VIEWPORT = (1200, 800)
#: Seconds the inner pytest run that writes the report may take.
RUN_TIMEOUT = 300


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    why = why_no_browser()
    if why is not None:
        pytest.skip(why)
    with Browser.launch() as launched:
        yield launched


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The page `pytest --harness-report` writes for tests/fault_run_project.py's run."""
    folder = tmp_path_factory.mktemp("fault-run")
    write_project(folder)
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST_")}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "--harness-report=report/faults.html"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=False,
    )
    assert done.returncode == 1, done.stdout + done.stderr  # its failures are the point
    return folder / "report" / "faults.html"


def _colour(hex_colour: str) -> tuple[int, int, int]:
    red, green, blue = bytes.fromhex(hex_colour.removeprefix("#"))
    return (red, green, blue)


@pytest.mark.slow
def test_the_report_page_asks_for_nothing_and_holds_every_row(
    browser: Browser, report: Path
) -> None:
    page = browser.open(report, width=VIEWPORT[0], height=VIEWPORT[1])
    assert page.requests == [page.url]
    assert page.outside_requests() == []
    assert page.console == []  # nothing refused by the policy, no error
    heads = page.evaluate(
        "[...document.querySelectorAll('thead th')].map(th => th.firstChild.textContent)"
    )
    assert heads == ["fault row", "test_summarize", "test_careful", "test_adapter"]
    assert page.evaluate("document.querySelectorAll('td[data-nodeid]').length") == 39
    failing = page.evaluate(
        "[...document.querySelectorAll('td.failed')].map(td => td.dataset.nodeid)"
    )
    assert len(failing) == 18
    assert "test_inner.py::test_summarize[cut_connection]" in failing
    linked = page.evaluate("[...document.querySelectorAll('td a.verdict')].map(a => a.href)")
    assert len(linked) == 39
    assert all(link.startswith("file://") for link in linked)


@pytest.mark.slow
def test_a_cassette_holding_script_runs_nothing_and_shows_as_text(
    browser: Browser, report: Path
) -> None:
    page = browser.open(report)
    assert page.evaluate("typeof window.pwned") == "undefined"
    assert page.evaluate("document.querySelectorAll('script, img').length") == 0
    text = page.evaluate("document.body.innerText")
    assert f"summarize returned '{HOSTILE_TEXT}' on cut_connection" in text
    assert HOSTILE_REASON in text


@pytest.mark.slow
def test_the_escaping_check_catches_a_page_that_does_not_escape(
    browser: Browser, tmp_path: Path
) -> None:
    unescaped = tmp_path / "unescaped.html"
    unescaped.write_text(f"<!DOCTYPE html><p>summarize returned '{HOSTILE_TEXT}'</p>")
    assert browser.open(unescaped).evaluate("window.pwned") == 1


@pytest.mark.slow
def test_the_network_check_catches_a_page_that_fetches(browser: Browser, tmp_path: Path) -> None:
    fetching = tmp_path / "fetching.html"
    fetching.write_text('<!DOCTYPE html><p>a picture</p><img src="http://127.0.0.1:9/x.png">')
    page = browser.open(fetching)
    assert page.outside_requests() == ["http://127.0.0.1:9/x.png"]


def _cell(page: Page, selector: str, image: Image) -> tuple[float, tuple[int, int, int]]:
    """The share of a cell's pixels in its background colour, and that colour."""
    background = css_colour(
        page.evaluate(f"getComputedStyle(document.querySelector({selector!r})).backgroundColor")
    )
    return image.share(background, element_box(page, selector, inset=6)), background


@pytest.mark.slow
def test_the_screenshot_shows_the_table_and_the_failing_rows_in_their_colours(
    browser: Browser, report: Path
) -> None:
    page = browser.open(report, width=VIEWPORT[0], height=VIEWPORT[1])
    image = decode_png(page.screenshot())
    assert (image.width, image.height) == VIEWPORT
    left, top, right, _ = element_box(page, "table.matrix", inset=0)
    table = (left, top, right, VIEWPORT[1])  # the part of the table in the viewport
    colours = image.colours(table)
    white = colours[(255, 255, 255)] / sum(colours.values())
    assert white < 0.5  # the cells are drawn in their colours
    assert len(colours) > 50  # and hold text
    silent = 'td[data-nodeid="test_inner.py::test_summarize[drop_message_start]"]'
    share, background = _cell(page, silent, image)
    assert background == _colour(VERDICT_COLOURS["accepted silently"][0])
    assert share > 0.4  # the rest is its text
    cell_left, cell_top, _, cell_bottom = element_box(page, silent, inset=0)
    edge = (cell_left, cell_top + 2, cell_left + 3, cell_bottom - 2)
    assert image.share(_colour(FAILED_BORDER), edge) > 0.95  # the failing row's red edge
    caught = 'td[data-nodeid="test_inner.py::test_adapter[drop_message_start]"]'
    share, background = _cell(page, caught, image)
    assert background == _colour(VERDICT_COLOURS["caught"][0])
    assert share > 0.4
    assert image.share(_colour(FAILED_BORDER), element_box(page, caught, inset=0)) == 0


@pytest.mark.slow
def test_the_conform_page_lists_the_disagreeing_cases_first(
    browser: Browser, tmp_path: Path
) -> None:
    done = '{"type": "done"}'
    result = CliRunner().invoke(
        cli, ["conform", "--format", "html", "cassettes/text_only.jsonl", "--", "echo", done]
    )
    assert result.exit_code == 1
    path = tmp_path / "conform.html"
    path.write_text(result.output, encoding="utf-8")
    page = browser.open(path, width=VIEWPORT[0], height=VIEWPORT[1])
    assert page.outside_requests() == []
    assert page.console == []
    rows = page.evaluate("[...document.querySelectorAll('tr[data-case]')].map(r => r.className)")
    assert rows == ["disagree"] * 10
    image = decode_png(page.screenshot())
    first = "tr[data-case] td.class"
    share, background = _cell(page, first, image)
    assert share > 0.3
    assert background == _colour(CLASS_COLOURS["wrong data"][0])  # text_only: text lost


@pytest.mark.slow
def test_a_step_that_never_ends_is_cut_at_its_timeout_and_the_browser_ended() -> None:
    why = why_no_browser()
    if why is not None:
        pytest.skip(why)
    with Browser.launch() as browser:
        browser.timeout = 1.0
        started = time.monotonic()
        with pytest.raises(BrowserError, match="a step took more than 1 s"):
            browser.evaluate("while (true) {}")
        assert time.monotonic() - started < 5
    assert browser.process is not None and browser.process.returncode is not None


def test_without_a_browser_the_tests_say_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "")
    monkeypatch.delenv("CHROMIUM", raising=False)
    assert why_no_browser() == (
        "no Chromium (chromium, chromium-browser, google-chrome, google-chrome-stable or "
        "$CHROMIUM) on the PATH: make test installs it where it can (Debian, as root: "
        "apt-get install chromium)"
    )
    with pytest.raises(BrowserError, match="no Chromium"):
        Browser.launch()


def _png(width: int, rows: list[tuple[int, bytes]], colour_type: int = 2) -> bytes:
    """A PNG of `rows` (filter type, filtered bytes), written by hand."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    header = struct.pack(">IIBBBBB", width, len(rows), 8, colour_type, 0, 0, 0)
    data = zlib.compress(b"".join(bytes([kind]) + row for kind, row in rows))
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", data) + chunk(b"IEND", b"")
    )


def test_the_png_reader_undoes_each_filter() -> None:
    # 2 x 5 RGB pixels; each row repeats the one above it, under another filter
    first = bytes([10, 20, 30, 200, 100, 50])
    paeth = bytes([0, 0, 0, 0, 0, 0])  # up (the best guess) is exact: nothing to add
    rows = [
        (0, first),  # None
        (1, bytes([10, 20, 30, 190, 80, 20])),  # Sub: each byte less the one to its left
        (2, bytes(6)),  # Up: each byte less the one above
        (3, bytes([5, 10, 15, 95, 40, 10])),  # Average of left and above
        (4, paeth),  # Paeth
    ]
    image = decode_png(_png(2, rows))
    assert (image.width, image.height, image.channels) == (2, 5, 3)
    for y in range(5):
        assert [image.pixel(x, y) for x in range(2)] == [(10, 20, 30), (200, 100, 50)], y
    assert image.share((200, 100, 50)) == 0.5
    with pytest.raises(ValueError, match="CRC"):
        decode_png(_png(2, rows)[:-5] + b"XXXXX")
