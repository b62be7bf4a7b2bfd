"""`harness view`: the pages, read back with the standard library's HTML parser.

Each page is held to the trace it draws (`harness._testing.trace`): a row a line but the
`at` lines, the emits where the trace has them, the failing row with the replay's code,
a lane for each index the trace ever holds open, its parsed input the replayed call's.
Text from a cassette never becomes markup; a long stream stays a bounded page; bad input
is one line and exit 2, and writes nothing.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from conftest import ERRORS_FOLDERS, LIBRARY, LIBRARY_FOLDERS, OPENAI_LIBRARY, ROOT

from bench.synthetic import synthetic_events
from harness import make_header, replay_outcome, write_cassette
from harness._cassette.codec import Cassette
from harness._testing.diff import trace_sides
from harness._testing.trace import DIRECTIVE, open_set, trace
from harness._view import escape, stream_page, write_page
from harness._view.drawing import CELL, LANE_KEPT, LANES_KEPT, SO_FAR, TEXT_KEPT
from harness._view.fold import BUDGET, FOLD_HEAD, FOLD_MIN, FOLD_SAMPLE, FOLD_TAIL, TAIL
from harness._view.page import CSP, script_json
from harness._view.run import STREAM_BUDGET
from harness._view.session import TURN_BUDGET
from harness.builder import ChatStreamBuilder, StreamBuilder
from harness_cli.main import cli

VOID = {"meta", "br", "img", "input", "link", "hr", "wbr", "source", "area", "base", "col"}


class Node:
    """An element of a parsed page: its tag, attributes, children, and text."""

    def __init__(self, tag: str, attrs: dict[str, str], parent: Node | None) -> None:
        self.tag, self.attrs, self.parent = tag, attrs, parent
        self.children: list[Node | str] = []

    @property
    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    def text(self) -> str:
        return "".join(child if isinstance(child, str) else child.text() for child in self.children)

    def walk(self) -> Iterator[Node]:
        yield self
        for child in self.children:
            if isinstance(child, Node):
                yield from child.walk()

    def find(self, tag: str = "", cls: str = "") -> list[Node]:
        return [
            node
            for node in self.walk()
            if (not tag or node.tag == tag) and (not cls or cls in node.classes)
        ]

    def one(self, tag: str = "", cls: str = "") -> Node:
        (found,) = self.find(tag, cls)
        return found


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {}, None)
        self.current = self.root
        self.declarations: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {name: value or "" for name, value in attrs}, self.current)
        self.current.children.append(node)
        if tag not in VOID:
            self.current = node

    def handle_endtag(self, tag: str) -> None:
        node: Node | None = self.current
        while node is not None and node.tag != tag:
            node = node.parent
        assert node is not None and node.parent is not None, f"</{tag}> closes nothing"
        self.current = node.parent

    def handle_data(self, data: str) -> None:
        self.current.children.append(data)

    def handle_decl(self, decl: str) -> None:
        self.declarations.append(decl)


def parse(page: str) -> Node:
    builder = _Builder()
    builder.feed(page)
    builder.close()
    assert builder.current is builder.root, "an element left open"
    assert builder.declarations == ["DOCTYPE html"]
    return builder.root


def timeline_rows(root: Node) -> list[Node]:
    """The rows of the page's (first) timeline, folds' samples left out."""
    table = root.find("table", "timeline")[0]
    (body,) = [
        child for child in table.children if isinstance(child, Node) and child.tag == "tbody"
    ]
    return [child for child in body.children if isinstance(child, Node)]


def cell(row: Node, name: str) -> str:
    return row.one("td", name).text()


def run(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, [str(arg) for arg in args])


def one_line(result: Result) -> str:
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


# A stream page, for every cassette the harness reads --------------------------------------

LIBRARY_PAGES = [
    path
    for folder in (*LIBRARY_FOLDERS.values(), *ERRORS_FOLDERS.values())
    for path in sorted(folder.glob("*.jsonl"))
]


@pytest.mark.parametrize("path", LIBRARY_PAGES, ids=lambda path: str(path.relative_to(LIBRARY)))
def test_a_stream_page_draws_the_trace_row_for_row(path: Path) -> None:
    rows = list(trace(path, sdk_objects=False))
    root = parse(stream_page(path))
    shown = iter(
        row
        for row in rows
        if not (row.event == DIRECTIVE and (row.data or {}).get("harness") == "at")
    )
    for html_row in timeline_rows(root):
        if "fold" in html_row.classes:  # a run of similar rows (escape_split's deltas)
            folded = int(html_row.one("summary").text().split()[0].replace(",", ""))
            for _ in range(folded):
                row = next(shown)
                assert not row.emits or all(
                    type(event).__name__ == "TextEvent" for event in row.emits
                )
            continue
        row = next(shown)
        assert cell(html_row, "n") == ("end" if row.number is None else str(row.number))
        kinds = Counter(type(event).__name__ for event in row.emits)
        emitted = Counter(node.attrs["class"].split()[1] for node in html_row.find("span", "emit"))
        assert emitted == Counter(
            {
                {"TextEvent": "emit-text", "ToolCallEvent": "emit-tool_call"}.get(
                    name, "emit-done"
                ): count
                for name, count in kinds.items()
            }
        )
        assert cell(html_row, "open") == open_set(row)
    assert next(shown, None) is None
    outcome = replay_outcome(path, sdk_objects=False)
    failed = root.find("tr", "row-failed")
    if outcome.error is None:
        assert failed == []
        assert "Ends in done" in root.one("p", "verdict").text()
    else:
        (failing,) = failed
        assert failing.attrs["id"] == "failed"
        error = rows[-1].to_json()["error"]
        assert failing.one("span", "code").text() == error["code"]
        assert failing.one("span", "rule").text() == error["message"]
        verdict = root.one("p", "verdict")
        assert "failed" in verdict.classes
        assert verdict.one("a").attrs["href"] == "#failed"


@pytest.mark.parametrize(
    ("path", "lanes"),
    [
        (LIBRARY / "interleaved.jsonl", ["block 1", "block 3"]),
        (LIBRARY / "two_tools.jsonl", ["block 1", "block 2"]),
        (OPENAI_LIBRARY / "chat" / "parallel_tools.jsonl", ["call 0", "call 1"]),
        (OPENAI_LIBRARY / "responses" / "parallel_tools.jsonl", ["item 0", "item 1"]),
        (OPENAI_LIBRARY / "responses" / "one_tool.jsonl", ["item 0"]),
    ],
    ids=lambda value: value.name if isinstance(value, Path) else None,
)
def test_each_tool_block_call_or_item_is_a_lane_its_json_pieces_then_its_parsed_input(
    path: Path, lanes: list[str]
) -> None:
    root = parse(stream_page(path))
    drawn = root.find("div", "lane")
    assert [lane.one("div", "lane-head").text().split(":")[0] for lane in drawn] == lanes
    calls = [
        event.call
        for event in replay_outcome(path, sdk_objects=False).events
        if hasattr(event, "call")
    ]
    by_id = {call.id: call for call in calls}
    for lane in drawn:
        parsed = lane.one("p", "lane-parsed")
        call = by_id[parsed.find("code")[1].text()]
        assert json.loads(lane.one("pre", "lane-json").text()) == call.input
        assert json.loads(parsed.one("code", "parsed").text()) == call.input
        assert "lane-failed" not in lane.classes


def test_the_text_is_shown_as_assembled_piece_by_piece() -> None:
    path = LIBRARY / "interleaved.jsonl"
    root = parse(stream_page(path))
    pieces = root.one("section", "text").find("span", "piece")
    assert [piece.text() for piece in pieces] == ["I'll read both files", " at once."]
    assert [piece.attrs["title"] for piece in pieces] == ["line 5", "line 6"]
    growth = [row.one("td", "grows").text() for row in timeline_rows(root)[3:5]]
    assert growth == ["text I'll read both files", "text I'll read both files at once."]


def test_a_rule_at_a_tool_block_marks_its_lane() -> None:
    root = parse(stream_page(ERRORS_FOLDERS["anthropic"] / "unclosed_tool_blocks.jsonl"))
    lanes = root.find("div", "lane")
    assert lanes and all("lane-failed" in lane.classes for lane in lanes)
    assert all("never closed" in lane.text() for lane in lanes)


def test_past_the_open_blocks_a_trace_lists_a_lane_joins_late_and_still_gets_its_call(
    tmp_path: Path,
) -> None:
    builder = StreamBuilder()
    for index in range(1, 21):  # 20 blocks open at once: the trace lists the first 16
        builder.tool_start(index, "read", id=f"toolu_{index}")
    for index in range(1, 21):
        builder.json_delta(index, json.dumps({"n": index})).block_stop(index)
    path = tmp_path / "wide.jsonl"
    builder.stop("tool_use").write(path, "20 open blocks")
    lanes = parse(stream_page(path)).find("div", "lane")
    assert [lane.attrs["data-index"] for lane in lanes] == [str(n) for n in range(1, 21)]
    late = [lane for lane in lanes if "past the 16 open blocks" in lane.text()]
    assert [lane.attrs["data-index"] for lane in late] == ["17", "18", "19", "20"]
    for lane in lanes:
        number = int(lane.attrs["data-index"])
        assert json.loads(lane.one("code", "parsed").text()) == {"n": number}


def test_arrival_offsets_place_each_row_at_its_time(tmp_path: Path) -> None:
    builder = StreamBuilder(start=False)
    offsets = (0, 120, 250, 400, 410, 1000, 1100)
    events = StreamBuilder().text(0, "Hello", " there").stop().events()
    for ms, event in zip(offsets, events, strict=True):
        builder.directive("at", ms=ms).raw(event)
    path = tmp_path / "timed.jsonl"
    builder.write(path, "timed")
    root = parse(stream_page(path))
    rows = timeline_rows(root)
    assert [cell(row, "n") for row in rows] == ["3", "5", "7", "9", "11", "13", "15", "end"]
    shown = ["0", "120", "250", "400", "410", "1,000", "1,100", ""]  # the `at` lines are no rows
    assert [cell(row, "at") for row in rows] == shown
    bars = [row.one("td", "at").one("span", "bar").attrs["style"] for row in rows[:-1]]
    assert bars[0] == "width:0.0%" and bars[-1] == "width:100.0%"
    assert "at its recorded offset" in root.text()


def test_a_chat_chunk_carrying_pieces_of_two_calls_grows_both_lanes(tmp_path: Path) -> None:
    both = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "delta": {
                    "tool_calls": [
                        {"index": 0, "function": {"arguments": '{"city": "Paris"}'}},
                        {"index": 1, "function": {"arguments": '{"city": "Rome"}'}},
                    ]
                },
                "finish_reason": None,
            }
        ],
    }
    builder = (
        ChatStreamBuilder()
        .role()
        .call_start(0, "get_weather", id="call_a")
        .call_start(1, "get_weather", id="call_b")
        .raw(both)
        .stop("tool_calls")
    )
    path = tmp_path / "both.jsonl"
    builder.write(path, "two pieces in a chunk")
    root = parse(stream_page(path))
    pieces = {
        lane.one("div", "lane-head").text().split(":")[0]: lane.one("pre", "lane-json").text()
        for lane in root.find("div", "lane")
    }
    assert pieces == {"call 0": '{"city": "Paris"}', "call 1": '{"city": "Rome"}'}


# Escaping ---------------------------------------------------------------------------------

HOSTILE = (
    "</script><script>alert(1)</script>"
    '<img src=x onerror="alert(2)"> ]]> <!-- --> &amp; \u202e bidi \x1b[31m red'
)


def test_text_from_a_cassette_is_never_markup(tmp_path: Path) -> None:
    path = tmp_path / "hostile.jsonl"
    builder = (
        StreamBuilder()
        .text(0, HOSTILE)
        .tool(
            1,
            "<img src=x onerror=alert(3)>",
            {"q": "</style><script>alert(4)</script>"},
            id="toolu_<b>",
        )
        .stop("tool_use")
    )
    write_cassette(path, builder.events(), header=make_header("</title><script>alert(5)</script>"))
    page = stream_page(path, title="<script>alert(6)</script>")
    root = parse(page)
    tags = {node.tag for node in root.walk()}
    assert not tags & {"script", "img", "iframe", "object", "embed", "link", "base", "form"}
    handlers = [
        (node.tag, name) for node in root.walk() for name in node.attrs if name.startswith("on")
    ]
    assert handlers == []
    for node in root.walk():  # nothing to fetch: only links within the page
        for name in ("src", "href", "action", "data", "srcset"):
            assert node.attrs.get(name, "#").startswith("#"), (node.tag, name)
    assert root.one("section", "text").text() == HOSTILE.replace("\u202e", "\\u202e").replace(
        "\x1b", "\\u001b"
    )
    (policy,) = [node for node in root.find("meta") if node.attrs.get("http-equiv")]
    assert policy.attrs == {"http-equiv": "Content-Security-Policy", "content": CSP}
    assert "default-src 'none'" in CSP
    assert "\u202e" not in page and "\x1b" not in page
    assert root.one("title").text().startswith("<script>alert(6)</script>")


def test_escape_and_script_json_leave_nothing_that_closes_an_element() -> None:
    assert escape('<a href="x">&\'') == "&lt;a href=&quot;x&quot;&gt;&amp;&#x27;"
    assert escape("a\ud800b\u2066") == "a\\ud800b\\u2066"
    value = {"text": "</script><!-- \u2028 \u2029 & >"}
    shown = script_json(value)
    assert not set(shown) & {"<", ">", "&", "\u2028", "\u2029"}
    assert json.loads(shown) == value


# Big streams stay bounded -----------------------------------------------------------------


@pytest.mark.slow
def test_a_stream_of_100_000_events_is_a_page_of_bounded_size(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    write_cassette(path, synthetic_events("mixed", 100_000), header=make_header("big"))
    page = stream_page(path)
    assert len(page.encode()) < 1_000_000
    root = parse(page)
    rows = timeline_rows(root)
    assert len(rows) < 200  # 90,000 text deltas and ten tool blocks of 1,000 pieces, folded
    folds = [row for row in rows if "fold" in row.classes]
    assert folds[0].one("summary").text().startswith("89,997 similar rows folded: lines 6 to 90002")
    assert sum(len(fold.find("tr", "row")) for fold in folds) <= 5 * len(folds)
    assert cell(rows[-1], "n") == "end"
    assert "The first 40,000 characters of 1,290,000" in root.text()


@pytest.mark.slow
def test_a_stream_whose_every_row_differs_keeps_its_budget_and_its_failing_row(
    tmp_path: Path,
) -> None:
    builder = StreamBuilder()
    for index in range(1, 2001):  # every row opens or closes a block: nothing folds
        builder.tool(index, "read", {"n": index}, id=f"toolu_{index}")
    builder.message_delta("tool_use")  # and no message_stop: missing_message_stop at the end
    path = tmp_path / "wide.jsonl"
    builder.write(path, "wide")
    root = parse(stream_page(path))
    rows = timeline_rows(root)
    assert len(rows) <= BUDGET + TAIL + 1
    (left_out,) = [row for row in rows if "fold" in row.classes]
    assert "rows not drawn" in left_out.one("summary").text()
    assert root.one("tr", "row-failed").one("span", "code").text() == "missing_message_stop"
    assert rows[-1].attrs["id"] == "failed"


# Sessions, two cassettes, runs ------------------------------------------------------------


def test_a_session_page_shows_each_turn_under_what_the_code_sent() -> None:
    folder = OPENAI_LIBRARY / "chat" / "sessions" / "weather"
    result = run("view", folder, "--out", "-")
    assert result.exit_code == 0, result.output
    root = parse(result.stdout)
    turns = root.find("section", "turn")
    assert [turn.attrs["id"] for turn in turns] == ["turn-1", "turn-2"]
    first, second = (json.loads(turn.one("pre", "sent").text()) for turn in turns)
    assert first == [{"role": "user", "content": "What is the weather in Paris?"}]
    assert [message["role"] for message in second] == ["assistant", "tool"]  # what went back
    assert second[1]["tool_call_id"] == "call_01Weather"
    assert turns[0].one("tr", "row-end").attrs["id"] == "turn-1-line-end"
    assert "2 turns, ending in done, done" in root.find("p", "verdict")[0].text()


def test_a_session_without_requests_says_so_and_shows_its_settings() -> None:
    root = parse(run("view", LIBRARY / "sessions" / "compare-configs", "--out", "-").stdout)
    assert len(root.find("section", "turn")) == 3
    assert "keeps no request" in root.find("section", "turn")[0].text()
    assert '"prompt"' in root.find("pre")[0].text()


def _broken(tmp_path: Path) -> Path:
    result = run("faults", LIBRARY / "interleaved.jsonl", "--out", tmp_path / "broken")
    assert result.exit_code == 0, result.output
    return tmp_path / "broken"


def test_two_cassettes_side_by_side_mark_the_first_row_where_they_part(tmp_path: Path) -> None:
    a = LIBRARY / "interleaved.jsonl"
    b = _broken(tmp_path) / "interleaved.drop_tool_stop.jsonl"
    out = tmp_path / "diff.html"
    result = run("view", a, b, "--out", out)
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        f"wrote {out}: outcomes differ: A ends in done, B in unclosed_tool_blocks\n"
    )
    root = parse(out.read_text())
    pairs = [row for row in timeline_rows(root) if "row" in row.classes]
    marks = [row.one("td", "mark").text() for row in pairs]
    assert marks == ["|"] * (len(pairs) - 1) + ["!"]
    (parted,) = root.find("tr", "row-differs")
    assert parted.attrs["id"] == "first-difference" and parted is pairs[-1]
    lines = [cell.text() for cell in parted.find("td", "n")]
    assert lines == ["14", "14"]
    outcomes = root.one("div", "sides").find("pre", "outcome")
    differs = [
        [json.loads(span.text())["type"] for span in pre.find("span", "differs")]
        for pre in outcomes
    ]
    assert differs == [["tool_call"], ["tool_call"]]  # the calls come out in another order
    assert json.loads(outcomes[1].find("span")[-1].text())["code"] == "unclosed_tool_blocks"
    sides = trace_sides(Cassette(a), Cassette(b), ("a", "b"))
    text = list(sides)
    assert text[len(pairs)].startswith(" 14 {3}") and "!" in text[len(pairs)]  # diff --trace's row


def test_a_cassette_beside_itself_agrees_row_for_row() -> None:
    path = LIBRARY / "interleaved.jsonl"
    root = parse(run("view", path, path, "--out", "-").stdout)
    assert root.find("tr", "row-differs") == []
    assert "the traces agree row for row" in root.one("p", "verdict").text()


def test_a_run_folder_is_a_table_of_outcomes_each_stream_under_it(tmp_path: Path) -> None:
    folder = _broken(tmp_path)
    result = run("view", folder, "--out", tmp_path / "run.html")
    assert result.exit_code == 0, result.output
    assert result.stdout.endswith(": a run: 21 cassettes, 0 not as expected\n")
    root = parse((tmp_path / "run.html").read_text())
    table = root.one("table", "run")
    rows = table.one("tbody").find("tr")
    assert len(rows) == 21 and not table.find("tr", "unexpected")
    retried = [row for row in rows if "http_429_then_ok" in row.text()]
    assert len(retried) == 1 and "after turn-01.jsonl" in retried[0].text()
    streams = root.find("details", "stream")
    assert len(streams) == 21
    drop = next(stream for stream in streams if "drop_tool_stop" in stream.one("summary").text())
    assert drop.one("tr", "row-failed").one("span", "code").text() == "unclosed_tool_blocks"


def test_a_run_folder_looks_into_a_folder_named_jsonl(tmp_path: Path) -> None:
    # It was read as a cassette: `...good.jsonl:1: cannot read: a folder`, exit 2.
    inside = tmp_path / "runs" / "good.jsonl"
    inside.mkdir(parents=True)
    (inside / "text_only.jsonl").write_bytes((LIBRARY / "text_only.jsonl").read_bytes())
    result = run("view", tmp_path / "runs", "--out", tmp_path / "run.html")
    assert result.exit_code == 0, result.output
    assert result.stdout.endswith(": a run: 1 cassettes, 0 not as expected\n")
    assert "good.jsonl/text_only.jsonl" in (tmp_path / "run.html").read_text()


# The command: output, defaults, bad input -------------------------------------------------


def test_the_page_goes_to_name_html_here_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = run("view", LIBRARY / "interleaved.jsonl")
    assert result.exit_code == 0, result.output
    assert result.stdout == "wrote interleaved.html: a stream: 16 lines, ends in done\n"
    assert (tmp_path / "interleaved.html").read_text().startswith("<!DOCTYPE html>")
    result = run("view", OPENAI_LIBRARY / "chat" / "sessions" / "weather")
    assert result.stdout.startswith("wrote weather.html: a session: 2 turns")


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["missing.jsonl"], "missing.jsonl:1: cannot read: No such file or directory"),
        (["{bad}"], "{bad}:1: not valid JSON"),
        (["{empty}"], "{empty}: no cassette (*.jsonl) in this folder"),
        (["{good}", "{empty}"], "{empty}: a folder; harness view A B compares two cassettes"),
        (["{good}", OPENAI_LIBRARY / "chat" / "text.jsonl"], "a cassette of openai-chat, and"),
        (["{good}", "--out", "{tmp}/no/such/folder/page.html"], "cannot write: No such file"),
        (["{bad}", "--out", "{bad}"], "a page never replaces its cassette"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_the_old_page_stays(
    tmp_path: Path, arguments: list[Any], message: str
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    (tmp_path / "empty").mkdir()
    good = tmp_path / "good.jsonl"
    good.write_bytes((LIBRARY / "interleaved.jsonl").read_bytes())
    page = tmp_path / "page.html"
    page.write_text("the old page")
    fields = {"bad": bad, "empty": tmp_path / "empty", "good": good, "tmp": tmp_path}
    argv = [str(argument).format(**fields) for argument in arguments]
    if "--out" not in argv:
        argv += ["--out", str(page)]
    result = run("view", *argv)
    assert result.exit_code == 2
    assert message.format(**fields) in one_line(result)
    assert result.stdout == ""
    assert page.read_text() == "the old page"
    assert bad.read_text() == "not json\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        "bad.jsonl",
        "empty",
        "good.jsonl",
        "page.html",
    ]


@pytest.mark.parametrize(
    "arguments",
    [["a.jsonl", "b.jsonl", "c.jsonl"], ["{good}", "--ignore-ids"], ["--nope", "{good}"]],
)
def test_a_bad_option_is_a_usage_error_exit_2(tmp_path: Path, arguments: list[str]) -> None:
    good = str(LIBRARY / "interleaved.jsonl")
    result = run(
        "view",
        *[argument.format(good=good) for argument in arguments],
        "--out",
        tmp_path / "x.html",
    )
    assert result.exit_code == 2
    assert "Error:" in result.stderr and "Traceback" not in result.output
    assert not (tmp_path / "x.html").exists()


def test_an_interrupted_write_leaves_the_old_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os as files_os  # the module harness._files syncs with

    page = tmp_path / "page.html"
    page.write_text("the old page")

    def interrupted(fd: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(files_os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_page(stream_page(LIBRARY / "interleaved.jsonl"), page)
    assert page.read_text() == "the old page"
    assert os.listdir(tmp_path) == ["page.html"]


def test_the_help_lists_view() -> None:
    result = run("--help")
    assert re.search(r"^  view +Draw a stream", result.output, re.MULTILINE)


def _figure(number: int) -> str:
    return f"{number:,}"


@pytest.mark.parametrize(
    "figure",
    [
        f"Past {_figure(BUDGET)} drawn rows and folds, only the last {TAIL} are",
        "six or more in a row are drawn as their first two rows",
        "the first five of them",
        f"A session's turns\n  draw {TURN_BUDGET} rows each, a run's streams {STREAM_BUDGET}.",
        f"An excerpt or an emitted text shows {CELL} characters, the text\n  and JSON so far "
        f"their last {SO_FAR}; the text panel holds the first {_figure(TEXT_KEPT)} characters, "
        f"a\n  lane the first {_figure(LANE_KEPT)} of its JSON, the lanes panel {LANES_KEPT} lanes",
    ],
)
def test_the_doc_states_the_bounds_the_code_keeps(figure: str) -> None:
    assert (FOLD_MIN, FOLD_HEAD, FOLD_TAIL, FOLD_SAMPLE) == (6, 2, 1, 5)
    assert figure in (ROOT / "docs" / "view.md").read_text(encoding="utf-8")
