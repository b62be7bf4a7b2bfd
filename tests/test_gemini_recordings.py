"""Real Gemini recordings (tests/data/gemini-recordings/, its README says whose): pydantic-ai's
vcrpy cassettes (SSE under `alt=sse`, two on Vertex) and llm-gemini's (the streamed JSON
array, gzipped) import to gemini cassettes that replay as the model answered, directly and
through google-genai, their header naming the model the path named and the host; export
writes each back in the framing it was recorded in, and the export imports to the same
cassette. The Vercel AI SDK's chunk lists (not HTTP recordings) are read by the adapter."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness._cassette.codec import Cassette
from harness._interop.export import export_har, export_name, export_vcr
from harness._interop.importer import import_recording
from harness._providers import provider
from harness._replay.direct import Outcome, replay_outcome
from harness._replay.sdk import outcome_via_sdk

DATA = Path(__file__).parent / "data" / "gemini-recordings"
RECORDINGS = sorted(DATA.rglob("*.yaml"))

#: cassette -> (the model its path named, its host, the text it ended with, its calls, end)
ANSWERED: dict[str, tuple[str, str | None, str, list[tuple[str, dict[str, Any]]], str]] = {
    "test_google_model_iter_stream-01": (
        "gemini-2.0-flash",
        None,
        "",
        [("get_capital", {"country": "France"})],
        "done",
    ),
    "test_google_model_iter_stream-02": (
        "gemini-2.0-flash",
        None,
        "",
        [("get_temperature", {"city": "Paris"})],
        "done",
    ),
    "test_google_model_iter_stream-03": ("gemini-2.0-flash", None, " is 30°C.\n", [], "done"),
    "test_google_model_thinking_part_iter-01": (
        "gemini-2.5-pro",
        None,
        "might not see you.",
        [],
        "done",
    ),
    "test_google_streaming_tool_call_thought_signature-01": (
        "gemini-3-pro-preview",
        None,
        "",
        [("get_country", {})],
        "done",
    ),
    "test_google_streaming_tool_call_thought_signature-02": (
        "gemini-3-pro-preview",
        None,
        " is Mexico City.",
        [],
        "done",
    ),
    "test_google_vertex_logprobs-01": ("gemini-2.5-flash", "vertex", "2 + 2 = 4", [], "done"),
    "test_google_vertex_service_tier_flex_stream-01": (
        "gemini-3-flash-preview",
        "vertex",
        "OK",
        [],
        "done",
    ),
    "test_prompt-01": ("gemini-flash-latest", None, "Scoop", [], "done"),
    "test_tools-01": ("gemini-2.5-flash", None, "", [("pelican_name_generator", {})], "done"),
    "test_tools-02": ("gemini-2.5-flash", None, "", [("pelican_name_generator", {})], "done"),
    "test_tools-03": ("gemini-2.5-flash", None, " about Charles and Sammy?", [], "done"),
}
#: llm-gemini's, asked without `alt=sse`: answered with the streamed JSON array.
ARRAYS = {"test_prompt-01", "test_tools-01", "test_tools-02", "test_tools-03"}


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("imported")
    for recording in RECORDINGS:
        report = import_recording(str(recording), str(out))
        assert report.skipped == []
    return {path.stem: path for path in sorted(out.glob("*.jsonl"))}


def _answer(outcome: Outcome) -> tuple[str, list[tuple[str, dict[str, Any]]], str]:
    lines = outcome.to_json_lines()
    text = "".join(line["text"] for line in lines if line["type"] == "text")
    calls = [(line["call"]["name"], line["call"]["input"]) for line in lines if "call" in line]
    last = lines[-1]
    ended = "done" if last["type"] == "done" else f"{last['type']}:{last.get('error_type')}"
    return text, calls, ended


def test_every_recorded_call_imports(imported: dict[str, Path]) -> None:
    assert sorted(imported) == sorted(ANSWERED)


@pytest.mark.parametrize("name", sorted(ANSWERED))
def test_each_replays_as_the_model_answered_directly_and_through_google_genai(
    imported: dict[str, Path], name: str
) -> None:
    model, host, text, calls, ended = ANSWERED[name]
    cassette = Cassette(imported[name])
    header = cassette.header or {}
    assert (cassette.provider, header.get("model"), cassette.host) == ("gemini", model, host)
    assert header["request"]["model"] == model
    assert header["request"].get("alt") == ("json" if name in ARRAYS else None)
    for outcome in (
        replay_outcome(imported[name], sdk_objects=False),
        outcome_via_sdk(imported[name]),
    ):
        got_text, got_calls, got_end = _answer(outcome)
        assert got_text.endswith(text)
        assert (got_calls, got_end) == (calls, ended)


def _recorded_chunks(recording: Path, number: int) -> list[dict[str, Any]]:
    """The chunks the recorded body held, read here without the importer: SSE `data`
    lines, the JSON array (gzipped as llm-gemini's recorder kept it), or one answer."""
    interaction = yaml.safe_load(recording.read_text())["interactions"][number - 1]
    response = interaction["response"]
    if "parsed_body" in response:
        return [response["parsed_body"]]
    body = response["body"]["string"]
    if isinstance(body, bytes):
        body = gzip.decompress(body).decode()
    if body.lstrip().startswith("["):
        found: list[dict[str, Any]] = json.loads(body)
        return found
    return [json.loads(line[6:]) for line in body.splitlines() if line.startswith("data: ")]


@pytest.mark.slow
def test_every_chunk_is_kept_as_the_api_sent_it_counts_signatures_and_logprobs_too(
    imported: dict[str, Path],
) -> None:
    """Usage counts (`promptTokenCount`, `promptTokensDetails[].tokenCount`), a part's
    `thoughtSignature` and a log-probability's `token` are named like credentials, and
    are the API's own fields: every chunk is kept whole."""
    compared = 0
    for recording in RECORDINGS:
        document = yaml.safe_load(recording.read_text())
        for number in range(1, len(document["interactions"]) + 1):
            events = list(Cassette(imported[f"{recording.stem}-{number:02d}"]).events())
            assert events == _recorded_chunks(recording, number)
            compared += 1
    assert compared == len(ANSWERED)
    text = "".join(path.read_text() for path in imported.values())
    for kept in ('"promptTokenCount":', '"tokenCount":', '"thoughtSignature":', '"token":"2"'):
        assert kept in text


@pytest.mark.parametrize("to", ["vcr", "har"])
def test_each_exports_in_its_framing_and_reimports_to_the_same_cassette(
    imported: dict[str, Path], tmp_path: Path, to: str
) -> None:
    for name, path in imported.items():
        first = Cassette(path)
        target = export_name(str(tmp_path), name, to)
        (export_har if to == "har" else export_vcr)(str(path), target)
        if to == "vcr":
            document = yaml.safe_load(Path(target).read_text())
            [interaction] = document["interactions"]
            uri, body = interaction["request"]["uri"], interaction["response"]["body"]["string"]
            assert body.startswith("[" if name in ARRAYS else "data: ")
            assert uri.endswith(":streamGenerateContent" if name in ARRAYS else "?alt=sse")
            assert ("/projects/" in uri) == (first.host == "vertex")
        report = import_recording(target, str(tmp_path / "again"))
        again = Cassette(report.written[0][0])
        assert [line.data for line in again.lines()] == [line.data for line in first.lines()]
        for key in ("provider", "model", "request", "host"):
            assert (again.header or {}).get(key) == (first.header or {}).get(key), (name, key)


def test_a_vertex_cassette_is_answered_to_google_genais_vertex_client(
    imported: dict[str, Path],
) -> None:
    import harness

    client: Any = harness.cassette_client(
        imported["test_google_vertex_service_tier_flex_stream-01"]
    )
    assert client._api_client.vertexai
    stream = client.models.generate_content_stream(
        model="gemini-3-flash-preview", contents="Reply with exactly: OK"
    )
    assert [chunk.text for chunk in stream] == ["OK"]


#: Vercel AI SDK's chunk lists -> the calls the adapter gives for them.
VERCEL: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "google-stream-no-args-tool-call": [
        ("read_theme", {}),
        ("read_screen", {"id": "A"}),
        ("read_screen", {"id": "B"}),
        ("read_screen", {"id": "C"}),
    ],
    "google-stream-tool-call-array-arguments-missing-terminal-function-call": [
        (
            "writeItems",
            {
                "operations": [
                    {
                        "action": "add",
                        "description": "Fresh red apple",
                        "itemid": "apple_001",
                        "price": 0.5,
                    },
                    {
                        "action": "add",
                        "description": "Ripe yellow banana",
                        "itemid": "banana_001",
                        "price": 0.3,
                    },
                ]
            },
        )
    ],
}


@pytest.mark.parametrize("name", sorted(VERCEL))
def test_the_vercel_ai_sdks_streamed_arguments_read_to_their_calls(name: str) -> None:
    """A streamed call is closed by the last `partialArgs` piece's `functionCall` without
    `willContinue` as well as by a `{}` of its own: the Vertex stream Vercel kept has none."""
    text = (DATA / "vercel-ai" / f"{name}.chunks.txt").read_text()
    chunks = [json.loads(line) for line in text.splitlines() if line.strip()]
    events = list(provider("gemini").to_model_events(iter(chunks)))
    calls = [(event.call.name, event.call.input) for event in events if hasattr(event, "call")]
    assert calls == VERCEL[name]
    assert type(events[-1]).__name__ == "DoneEvent"


def test_the_vercel_ai_sdks_nested_vertex_arguments_build_the_whole_object() -> None:
    text = DATA / "vercel-ai" / "google-vertex-stream-tool-call-arguments-nested.1.chunks.txt"
    chunks = [json.loads(line) for line in text.read_text().splitlines() if line.strip()]
    events = list(provider("gemini").to_model_events(iter(chunks)))
    [call] = [event.call for event in events if hasattr(event, "call")]
    assert call.name == "cookRecipe"
    recipe = call.input["recipe"]
    assert recipe["ingredients"][0] == {"amount": "16 oz", "name": "Lasagna noodles"}
    assert all(isinstance(step, str) and step for step in recipe["steps"])
