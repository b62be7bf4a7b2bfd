"""The pages the harness writes, in a real browser: headless Chromium (tests/browser.py).

Each page loads from disk and asks for nothing; its DOM holds the rows it must, the
failing ones marked; a screenshot shows them in their colours; a cassette holding
`</script>` runs nothing. So for the fault run's report and the conformance report, and
for `harness view`'s pages: a stream of each provider, a failing one of each, a session
folder, two cassettes side by side, and a stream of 100,000 events. Each check is shown
to fail on a page that breaks it (a page that fetches an image, one that does not
escape). Skipped, saying why, where no Chromium is installed (`make test` installs one
where it can).
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from browser import (
    Box,
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
from conftest import LIBRARY, OPENAI_LIBRARY, SESSIONS
from fault_run_project import HOSTILE_REASON, HOSTILE_TEXT, write_project

from bench.synthetic import synthetic_events
from harness import make_header, replay_outcome, write_cassette
from harness._testing.trace import DIRECTIVE, trace
from harness._view import stream_page, write_page
from harness._view.fold import BUDGET, TAIL
from harness._view.page import DIFFERS, FAILED, FAILED_EDGE
from harness._view.report import CLASS_COLOURS, FAILED_BORDER, VERDICT_COLOURS
from harness.builder import StreamBuilder
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


# harness view's pages ----------------------------------------------------------------------

#: What a cassette may hold that would run, were it markup: `window.pwned` stays undefined.
HOSTILE_MARKUP = HOSTILE_TEXT + '<img src=x onerror="window.pwned=1">'


@dataclass(frozen=True)
class ViewCase:
    """A page `harness view` writes: what it draws, and the failing row's code (None: the
    stream ends in done)."""

    name: str
    path: Path
    code: str | None = None


VIEW_CASES = [
    ViewCase("anthropic", LIBRARY / "text_only.jsonl"),
    ViewCase("openai-chat", OPENAI_LIBRARY / "chat" / "parallel_tools.jsonl"),
    ViewCase("openai-responses", OPENAI_LIBRARY / "responses" / "parallel_tools.jsonl"),
    ViewCase(
        "anthropic-failing",
        LIBRARY / "errors" / "unclosed_tool_blocks.jsonl",
        "unclosed_tool_blocks",
    ),
    ViewCase(
        "openai-chat-failing",
        OPENAI_LIBRARY / "chat" / "errors" / "invalid_tool_json.jsonl",
        "invalid_tool_json",
    ),
    ViewCase(
        "openai-responses-failing",
        OPENAI_LIBRARY / "responses" / "errors" / "invalid_tool_json.jsonl",
        "invalid_tool_json",
    ),
    ViewCase("session", SESSIONS / "read-notes"),
]


def _view(out: Path, *inputs: Path) -> Path:
    """The page `harness view INPUTS --out OUT` writes."""
    result = CliRunner().invoke(cli, ["view", *map(str, inputs), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


def _row_ids(path: Path, prefix: str = "") -> list[str]:
    """The ids of the rows a cassette's timeline holds, from its trace: a row a line but
    the `at` lines, the last one `failed` where the stream fails."""
    rows = [
        row
        for row in trace(path, sdk_objects=False)
        if not (row.event == DIRECTIVE and (row.data or {}).get("harness") == "at")
    ]
    ids = [f"{prefix}line-{'end' if row.number is None else row.number}" for row in rows]
    if replay_outcome(path, sdk_objects=False).error is not None:
        ids[-1] = f"{prefix}failed"
    return ids


def _expected_rows(case: ViewCase) -> list[str]:
    if not case.path.is_dir():
        return _row_ids(case.path)
    turns = sorted(case.path.glob("turn-*.jsonl"))
    return [
        row_id
        for number, turn in enumerate(turns, start=1)
        for row_id in _row_ids(turn, f"turn-{number}-")
    ]


def _in_view(page: Page, selector: str) -> tuple[Image, Box]:
    """A screenshot with the element `selector` matches scrolled to the viewport's middle,
    and the element's box in it."""
    page.evaluate(f"document.querySelector({selector!r}).scrollIntoView({{block: 'center'}})")
    return decode_png(page.screenshot()), element_box(page, selector, inset=0)


def _red_share(image: Image, box: Box) -> float:
    """The share of the box's pixels of red text (`FAILED_EDGE`): pixels whose red stands
    out from their green and blue, and whose green and blue stay close (red, not orange or
    magenta), rather than pixels of the exact red. A glyph's stem is a pixel or two wide,
    and where it falls (a column a path's length moves) may blend every pixel of it into
    the background; the marked rows' backgrounds are not red enough to count."""
    colours = image.colours(box)
    red = sum(
        number for (r, g, b), number in colours.items() if r - max(g, b) > 60 and abs(g - b) < 40
    )
    return red / max(sum(colours.values()), 1)


def _drawn(image: Image) -> None:
    """The screenshot is a page drawn: text in many shades, not a blank viewport."""
    colours = image.colours()
    assert len(colours) > 50
    assert colours[(255, 255, 255)] / sum(colours.values()) < 0.97


@pytest.mark.slow
@pytest.mark.parametrize("case", VIEW_CASES, ids=lambda case: case.name)
def test_a_view_page_loads_from_disk_asks_for_nothing_and_holds_its_timeline(
    browser: Browser, tmp_path: Path, case: ViewCase
) -> None:
    page = browser.open(_view(tmp_path / "page.html", case.path), width=VIEWPORT[0])
    assert page.requests == [page.url]
    assert page.outside_requests() == []
    assert page.console == []
    expected = _expected_rows(case)
    turns = len(list(case.path.glob("turn-*.jsonl"))) if case.path.is_dir() else 1
    assert page.evaluate("document.querySelectorAll('table.timeline').length") == turns
    rows = page.evaluate("[...document.querySelectorAll('table.timeline tr.row')].map(r => r.id)")
    assert rows == expected
    failed = page.evaluate(
        "[...document.querySelectorAll('tr.row-failed')].map(r => "
        "[r.id, r.querySelector('span.code').textContent])"
    )
    assert failed == ([] if case.code is None else [["failed", case.code]])


@pytest.mark.slow
@pytest.mark.parametrize("case", VIEW_CASES, ids=lambda case: case.name)
def test_a_view_page_screenshot_shows_the_failing_row_in_its_colours(
    browser: Browser, tmp_path: Path, case: ViewCase
) -> None:
    page = browser.open(_view(tmp_path / "page.html", case.path), width=VIEWPORT[0])
    if case.code is None:
        image, _ = _in_view(page, "table.timeline")
        _drawn(image)
        assert image.share(_colour(FAILED)) == 0  # no row, verdict or lane marked failed
        return
    image, (left, top, _, bottom) = _in_view(page, "tr.row-failed")
    _drawn(image)
    assert bottom <= VIEWPORT[1]  # the whole row in the viewport
    event = element_box(page, "tr.row-failed td.event", inset=3)
    assert image.share(_colour(FAILED), event) > 0.5  # the rest is the event's name
    edge = (left, top + 2, left + 3, bottom - 2)
    assert image.share(_colour(FAILED_EDGE), edge) > 0.95  # its red left edge
    code = element_box(page, "tr.row-failed span.code", inset=0)
    assert _red_share(image, code) > 0.05  # the code in red
    above = element_box(page, f"#{_row_ids(case.path)[-2]}", inset=3)
    assert image.share(_colour(FAILED), above) == 0  # the row before it is not marked


@pytest.fixture(scope="module")
def broken(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`harness faults cassettes/interleaved.jsonl --out broken/`, as docs/view.md runs it."""
    folder = tmp_path_factory.mktemp("broken")
    result = CliRunner().invoke(
        cli, ["faults", str(LIBRARY / "interleaved.jsonl"), "--out", str(folder)]
    )
    assert result.exit_code == 0, result.output
    return folder


@pytest.mark.slow
def test_the_diff_page_marks_the_first_row_where_the_two_part(
    browser: Browser, tmp_path: Path, broken: Path
) -> None:
    a, b = LIBRARY / "interleaved.jsonl", broken / "interleaved.drop_tool_stop.jsonl"
    page = browser.open(_view(tmp_path / "diff.html", a, b), width=VIEWPORT[0])
    assert page.requests == [page.url]
    assert page.console == []
    pairs = page.evaluate(
        "[...document.querySelectorAll('table.timeline tr.row-pair')].map(r => "
        "[...r.querySelectorAll('td.n')].map(td => td.textContent).join(' ') + ' ' + "
        "r.querySelector('td.mark').textContent)"
    )
    seen = [str(row.number) for row in trace(a, sdk_objects=False) if row.event != "ping"]
    assert pairs == [f"{n} {n} |" for n in seen[: len(pairs) - 1]] + ["14 14 !"]
    assert page.evaluate("document.querySelector('tr.row-differs').id") == "first-difference"
    outcome = page.evaluate("document.querySelectorAll('pre.outcome')[1].textContent")
    assert '"code": "unclosed_tool_blocks"' in outcome  # B's failure, in its outcome
    image, (left, top, right, _) = _in_view(page, "tr.row-differs")
    _drawn(image)
    event = element_box(page, "tr.row-differs td.event", inset=3)
    assert image.share(_colour(DIFFERS), event) > 0.5
    mark = element_box(page, "tr.row-differs td.mark", inset=0)
    assert _red_share(image, mark) > 0  # the red `!`
    assert image.share(_colour(DIFFERS), (left, top - 12, right, top - 2)) == 0  # row above


def _hostile(folder: Path) -> Path:
    """A cassette whose text and tool name are markup that would set `window.pwned`."""
    path = folder / "hostile.jsonl"
    (
        StreamBuilder()
        .text(0, HOSTILE_MARKUP)
        .tool(1, '<img src=x onerror="window.pwned=1">', {"q": HOSTILE_TEXT}, id="toolu_1")
        .stop("tool_use")
        .write(path, HOSTILE_MARKUP)
    )
    return path


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["stream", "session", "diff"])
def test_a_cassette_holding_markup_runs_nothing_in_a_view_page(
    browser: Browser, tmp_path: Path, kind: str
) -> None:
    hostile = _hostile(tmp_path)
    if kind == "session":
        session = tmp_path / "session"
        session.mkdir()
        hostile = hostile.rename(session / "turn-01.jsonl")
        inputs = [session]
    elif kind == "diff":
        inputs = [LIBRARY / "text_only.jsonl", hostile]
    else:
        inputs = [hostile]
    page = browser.open(_view(tmp_path / "page.html", *inputs))
    assert page.evaluate("typeof window.pwned") == "undefined"
    assert page.evaluate("document.querySelectorAll('script, img').length") == 0
    assert page.outside_requests() == []  # no `x` fetched
    assert page.console == []
    text = page.evaluate("document.body.innerText")
    if kind == "diff":  # the outcome, a JSON line an event
        assert json.dumps({"type": "text", "text": HOSTILE_MARKUP}) in text
    else:
        assert page.evaluate("document.querySelector('section.text pre').textContent") == (
            HOSTILE_MARKUP
        )
        lane = page.evaluate("document.querySelector('div.lane .lane-head').textContent")
        assert '<img src=x onerror="window.pwned=1">' in lane


@pytest.mark.slow
def test_a_page_of_100_000_events_loads_within_a_step_and_lays_out_bounded_rows(
    browser: Browser, tmp_path: Path
) -> None:
    path = tmp_path / "big.jsonl"
    write_cassette(path, synthetic_events("mixed", 100_000), header=make_header("big"))
    out = tmp_path / "big.html"
    write_page(stream_page(path), out)
    started = time.monotonic()
    page = browser.open(out, width=VIEWPORT[0], height=VIEWPORT[1])  # within STEP_TIMEOUT
    drawn = decode_png(page.screenshot())
    print(f"100,000 events: loaded and painted in {time.monotonic() - started:.2f} s")
    _drawn(drawn)
    assert page.outside_requests() == []
    rows = page.evaluate("document.querySelector('table.timeline').rows.length")
    assert rows <= BUDGET + TAIL + 2  # the head, the rows drawn, a fold for those left out
    assert page.evaluate("document.querySelectorAll('tr').length") < 1_000  # folds' samples too
    folds = page.evaluate("document.querySelectorAll('table.timeline tr.fold').length")
    assert folds > 0
    last = page.evaluate("[...document.querySelector('table.timeline').rows].at(-1).id")
    assert last == "line-end"  # the stream's end, drawn past every fold
