"""`--harness-record=drift`: each kept cassette recorded again, live, into a folder of its
own, and compared by shape (events, tool calls, code) with the stored one, which stays
byte for byte as it was.

The live API is a `harness serve` on 127.0.0.1 whose answers changed since the cassettes
were recorded (a dummy key and the base-URL variables), never a real one.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import LIBRARY, OPENAI_LIBRARY, SESSIONS, not_installed
from fake_api import FakeMessagesAPI

from harness import Cassette
from harness._http.hosting import ServerThread
from harness._http.server import CassetteServer
from harness._testing.drift import Shape, changes
from harness.builder import StreamBuilder

INI = "[pytest]\naddopts = --strict-markers -p no:cacheprovider\nfilterwarnings = error\n"
KEY = "sk-ant-drift-dummy-key-0123456789"
REQUEST = {
    "model": "claude-harness-test",
    "max_tokens": 64,
    "messages": [{"role": "user", "content": "Hi"}],
}

INNER = f"""
import pytest

REQUEST = {REQUEST!r}
WEATHER = {{"name": "get_weather", "input_schema": {{"type": "object"}}}}


def ask(client, **extra):
    with client.messages.stream(**REQUEST, **extra) as stream:
        return stream.get_final_message()


@pytest.mark.cassette("greeting")
def test_greeting(harness_client):
    ask(harness_client)


@pytest.mark.cassette("weather")
def test_weather(harness_client):
    ask(harness_client, tools=[WEATHER])


@pytest.mark.cassette("answer", request=REQUEST)
def test_answer(harness_replay):
    pass
"""


def _greeting(*pieces: str) -> StreamBuilder:
    return StreamBuilder().text(0, *pieces).stop()


def _weather() -> StreamBuilder:
    return (
        StreamBuilder()
        .text(0, "Let me check.")
        .tool(1, "get_weather", {"city": "Paris", "unit": "celsius"})
        .stop("tool_use")
    )


#: What the stored cassettes hold, by name, in the inner tests' order.
STORED = {
    "greeting": _greeting("Hello there."),
    "weather": _weather(),
    "answer": _greeting("The answer is 42."),
}
#: What the "live API" answers now, in the same order: the greeting in other words and
#: pieces (the same shape), the weather as text without its call, the answer cut short.
NOW = [
    _greeting("Hi! ", "How can ", "I help?"),
    _greeting("It is sunny in Paris."),
    StreamBuilder().text(0, "The answer").stop("max_tokens"),
]


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    pytester.makeini(INI)
    folder = pytester.path / "cassettes"
    folder.mkdir()
    for name, built in STORED.items():
        built.write(folder / f"{name}.jsonl", f"the stored {name}")
    pytester.makepyfile(test_inner=INNER)
    return pytester


@contextmanager
def upstream(
    monkeypatch: pytest.MonkeyPatch, answers: list[Path], *, sdk: str = "anthropic"
) -> Iterator[CassetteServer]:
    """A `harness serve` answering `answers` in order, the SDK's key and base URL set."""
    served = CassetteServer([str(path) for path in answers], match_on=None)
    with ServerThread(served.app()) as url:
        if sdk == "anthropic":
            monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
            monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        else:
            monkeypatch.setenv("OPENAI_API_KEY", KEY)
            monkeypatch.setenv("OPENAI_BASE_URL", f"{url}/v1")
        yield served


def _changed(folder: Path) -> list[Path]:
    """The answers of `NOW`, written as cassettes into `folder`."""
    folder.mkdir()
    paths = [folder / f"{number}.jsonl" for number in range(len(NOW))]
    for path, built in zip(paths, NOW, strict=True):
        built.write(path, "the live API now")
    return paths


def _contents(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


def _section(lines: list[str]) -> list[str]:
    """The drift summary's lines, from the terminal output of a run."""
    start = next(n for n, line in enumerate(lines) if "stream-harness drift" in line)
    end = next((n for n in range(start + 1, len(lines)) if lines[n].startswith("====")), None)
    return lines[start + 1 : end]


@pytest.mark.slow
def test_a_changed_answer_is_named_with_what_changed_and_the_stored_cassettes_stay(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    stored = _contents(project.path / "cassettes")
    with upstream(monkeypatch, _changed(tmp_path / "now")):
        result = project.runpytest("--harness-record=drift", "--harness-drift-dir", "drift")
    result.assert_outcomes(passed=3)
    assert result.ret == 1  # the tests passed; a drifted cassette fails the run
    drift = project.path / "drift"
    see = (
        "    see: harness diff --ignore-ids cassettes/{0}.jsonl " + f"{drift}/cassettes/{{0}}.jsonl"
    )
    assert _section(result.outlines) == [
        f"re-recorded into {drift}; the stored cassettes are left as they were",
        "drifted (2):",
        "  cassettes/answer.jsonl (test_inner.py::test_answer)",
        "    events: text, done -> text",
        "    code: done -> unsupported_stop_reason",
        see.format("answer"),
        "  cassettes/weather.jsonl (test_inner.py::test_weather)",
        "    events: text, tool_call, done -> text, done",
        "    tool calls: get_weather(city, unit) -> none",
        see.format("weather"),
        "agrees (1): cassettes/greeting.jsonl",
    ]
    assert _contents(project.path / "cassettes") == stored
    report = (drift / "report.txt").read_text(encoding="utf-8").splitlines()
    assert report == _section(result.outlines)
    for name in STORED:
        copy = Cassette(drift / "cassettes" / f"{name}.jsonl")
        assert copy.header is not None and copy.header["source"] == "recorded"
        assert copy.description.endswith("(record mode drift)")
    written = [path.read_text(encoding="utf-8") for path in drift.rglob("*") if path.is_file()]
    assert all(KEY not in text for text in [*written, result.stdout.str(), result.stderr.str()])


@pytest.mark.slow
def test_an_unchanged_api_agrees_and_every_run_records_again(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same shapes pass (exit 0); a second run into the same folder calls the API
    again rather than comparing the first run's copies."""
    answers = [project.path / "cassettes" / f"{name}.jsonl" for name in STORED]
    with upstream(monkeypatch, answers + answers) as served:
        first = project.runpytest("--harness-record=drift", "--harness-drift-dir", "drift")
        second = project.runpytest("--harness-record=drift", "--harness-drift-dir", "drift")
        assert len(served.replayer.requests) == 6
    for result in (first, second):
        assert result.ret == 0
        summary = _section(result.outlines)
        assert summary[1:] == [
            "agrees (3): cassettes/answer.jsonl, cassettes/greeting.jsonl, cassettes/weather.jsonl"
        ]


@pytest.mark.slow
def test_parallel_workers_report_in_the_controller(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under `-n 2` each worker records its tests' cassettes; the controller sums them up
    and writes the report. The fake API answers every request with one text stream."""
    with FakeMessagesAPI(_greeting("It is sunny.").events()) as api:
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)
        result = project.runpytest_subprocess(
            "-n", "2", "--harness-record=drift", "--harness-drift-dir", "drift"
        )
        assert len(api.received) == 3
    result.assert_outcomes(passed=3)
    assert result.ret == 1
    summary = _section(result.outlines)
    assert summary[1:5] == [
        "drifted (1):",
        "  cassettes/weather.jsonl (test_inner.py::test_weather)",
        "    events: text, tool_call, done -> text, done",
        "    tool calls: get_weather(city, unit) -> none",
    ]
    assert summary[-1] == "agrees (2): cassettes/answer.jsonl, cassettes/greeting.jsonl"
    report = (project.path / "drift" / "report.txt").read_text(encoding="utf-8")
    assert report.splitlines() == summary


@pytest.mark.slow
def test_without_the_key_each_test_skips_in_one_line_and_the_summary_says_why(
    project: pytest.Pytester,
) -> None:
    stored = _contents(project.path / "cassettes")
    result = project.runpytest("--harness-record=drift", "-rs")
    result.assert_outcomes(skipped=3)
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        [
            "SKIPPED * record mode drift: recording *stream-harness-drift-*/cassettes/"
            "greeting.jsonl live needs ANTHROPIC_API_KEY, which is not set"
        ]
    )
    summary = _section(result.outlines)
    assert summary[:2] == [
        "nothing re-recorded; the stored cassettes are left as they were",
        "not re-recorded (3):",
    ]
    for line, name in zip(summary[2:], ["answer", "greeting", "weather"], strict=True):
        assert re.fullmatch(
            rf"  cassettes/{name}\.jsonl \(test_inner\.py::test_{name}\): skipped: record mode "
            rf"drift: recording \S+/cassettes/{name}\.jsonl live needs ANTHROPIC_API_KEY, which "
            "is not set",
            line,
        )
    assert "Traceback" not in result.stdout.str()
    assert _contents(project.path / "cassettes") == stored


@pytest.mark.slow
def test_a_cassette_not_kept_is_not_recorded_by_drift(project: pytest.Pytester) -> None:
    (project.path / "cassettes" / "weather.jsonl").unlink()
    result = project.runpytest("--harness-record=drift", "-k", "weather")
    result.assert_outcomes(errors=1, deselected=2)
    result.stdout.fnmatch_lines(
        ["*cassette not found: */weather.jsonl (record mode drift records the cassettes kept *"]
    )


OPENAI_INNER = """
import pytest

ASK = [{"role": "user", "content": "Weather in Paris?"}]


@pytest.mark.cassette("chat")
def test_chat(harness_client):
    stream = harness_client.chat.completions.create(model="gpt-4.1-mini", messages=ASK, stream=True)
    assert [chunk for chunk in stream]


@pytest.mark.cassette("responses")
def test_responses(harness_client):
    with harness_client.responses.stream(model="gpt-4.1-mini", input="Weather in Paris?") as s:
        s.get_final_response()
"""


@pytest.mark.slow  # the openai SDK is imported again in each inner run (about 3 s)
@pytest.mark.skipif(bool(not_installed("openai")), reason="needs the openai extra")
def test_openai_chat_and_responses_cassettes_are_recorded_again_and_compared(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = project.path / "cassettes"
    shutil.copy(OPENAI_LIBRARY / "chat" / "one_tool.jsonl", folder / "chat.jsonl")
    shutil.copy(OPENAI_LIBRARY / "responses" / "text.jsonl", folder / "responses.jsonl")
    project.makepyfile(test_inner=OPENAI_INNER)
    stored = _contents(folder)
    now = [
        OPENAI_LIBRARY / "chat" / "one_tool.jsonl",
        OPENAI_LIBRARY / "responses" / "one_tool.jsonl",
    ]
    with upstream(monkeypatch, now, sdk="openai"):
        result = project.runpytest("--harness-record=drift", "--harness-drift-dir", "drift")
    result.assert_outcomes(passed=2)
    assert result.ret == 1
    assert _section(result.outlines)[1:-2] == [
        "drifted (1):",
        "  cassettes/responses.jsonl (test_inner.py::test_responses)",
        "    events: text, done -> tool_call, done",
        "    tool calls: none -> get_weather(city)",
    ]
    assert _section(result.outlines)[-1] == "agrees (1): cassettes/chat.jsonl"
    assert Cassette(project.path / "drift" / "cassettes" / "responses.jsonl").provider == (
        "openai-responses"
    )
    assert _contents(folder) == stored
    written = [path.read_text(encoding="utf-8") for path in (project.path / "drift").rglob("*.*")]
    assert all(KEY not in text for text in [*written, result.stdout.str()])


# -- the shape: what "agrees" compares ---------------------------------------------------


def test_the_shape_merges_text_pieces_and_keeps_tool_names_and_argument_keys() -> None:
    assert Shape.of(LIBRARY / "interleaved.jsonl") == Shape(
        ("text", "tool_call", "tool_call", "done"), ("read(path)", "read(path)"), "done"
    )
    assert Shape.of(LIBRARY / "errors" / "invalid_tool_json.jsonl").code == "invalid_tool_json"


def test_two_cassettes_of_one_shape_agree_and_any_aspect_that_differs_is_named(
    tmp_path: Path,
) -> None:
    a, b, c = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "c.jsonl"
    _weather().write(a, "a")
    StreamBuilder().text(0, "Checking", " now.").tool(
        1, "get_weather", {"unit": "f", "city": "Oslo"}, id="toolu_other"
    ).stop("tool_use").write(b, "b: other text, pieces, id and values")
    StreamBuilder().tool(0, "get_weather", {"city": "Oslo"}).stop("end_turn").write(c, "c")
    assert changes(a, b) == []
    assert changes(a, c) == [
        "events: text, tool_call, done -> tool_call",
        "tool calls: get_weather(city, unit) -> get_weather(city)",
        "code: done -> end_turn_with_tool_calls",
    ]


def test_a_session_folder_is_compared_turn_by_turn(tmp_path: Path) -> None:
    stored = SESSIONS / "read-notes"
    copy = tmp_path / "read-notes"
    shutil.copytree(stored, copy)
    turns = sorted(copy.glob("turn-*.jsonl"))
    _greeting("Done.").write(turns[0], "the first turn answered without its calls")
    turns[-1].unlink()
    assert changes(stored, copy)[0] == f"turns: {len(turns)} -> {len(turns) - 1}"
    assert changes(stored, copy)[1].startswith("turn 1: events: ")


# -- the CI recipe of docs/recording.md -------------------------------------------------


def _ci_workflow() -> dict[Any, Any]:
    """The GitHub Actions workflow docs/recording.md shows (its one `yaml` block)."""
    text = (Path(__file__).parent.parent / "docs" / "recording.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"```yaml\n(.*?)```", text, flags=re.DOTALL)
    workflow: dict[Any, Any] = yaml.safe_load(block)
    return workflow


@pytest.mark.slow
def test_the_ci_recipe_runs_the_check_weekly_with_the_keys_and_keeps_its_folder(
    project: pytest.Pytester,
) -> None:
    """The recipe's command, run as written (here without the keys): the folder it writes
    its report to is the one the artifact keeps, and its guard fails the job when nothing
    was recorded again."""
    workflow = _ci_workflow()
    triggers = workflow["on" if "on" in workflow else True]  # YAML 1.1 reads `on` as true
    _minute, _hour, day, month, weekday = triggers["schedule"][0]["cron"].split()
    assert (day, month) == ("*", "*") and weekday.isdigit()
    (steps,) = [job["steps"] for job in workflow["jobs"].values()]
    (check,) = [step for step in steps if "--harness-record=drift" in step.get("run", "")]
    assert check["env"] == {
        "ANTHROPIC_API_KEY": "${{ secrets.ANTHROPIC_API_KEY }}",
        "OPENAI_API_KEY": "${{ secrets.OPENAI_API_KEY }}",
    }
    (upload,) = [step for step in steps if step.get("uses", "").startswith("actions/upload-")]
    assert upload["if"] == "always()"
    command = shlex.split(check["run"])
    assert command[0] == "pytest"
    result = project.runpytest(*command[1:])
    result.assert_outcomes(skipped=3)
    assert (project.path / upload["with"]["path"] / "report.txt").is_file()
    (guard,) = [step for step in steps if "report.txt" in step.get("run", "")]
    refused = subprocess.run(["bash", "-c", guard["run"]], cwd=project.path, check=False)
    assert refused.returncode == 1  # nothing re-recorded: the job fails
    (project.path / "drift" / "report.txt").write_text("re-recorded into drift; ...\n")
    assert subprocess.run(["bash", "-c", guard["run"]], cwd=project.path).returncode == 0
