"""Gemini cassettes read by google-genai: `replay --via sdk` through
`models.generate_content_stream`, the bytes cut at random, gives what direct replay gives;
`cassette_client` hands out a `genai.Client` with no key read; the async face
(`client.aio`) the same, closed as google-genai closes it (`await client.aio.aclose()`)."""

from __future__ import annotations

import asyncio
import json
import zlib
from pathlib import Path
from typing import Any

import pytest
from conftest import GEMINI_LIBRARY, library_cassettes
from google import genai

from harness import async_cassette_client, cassette_client
from harness._replay.direct import acollect, collect, is_stream_failure, replay_outcome
from harness._replay.plan import Chunking
from harness._replay.sdk import areplay_events, replay_events

CASSETTES = library_cassettes(None, GEMINI_LIBRARY)
IDS = [path.relative_to(GEMINI_LIBRARY).as_posix() for path in CASSETTES]
#: google-genai refuses the chunk itself (pydantic), before any adapter reads it
SDK_REFUSES = {"errors/non_object_tool_input.jsonl"}


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("path", CASSETTES, ids=IDS)
def test_each_cassette_through_google_genai_comes_out_as_direct_replay(
    path: Path, asynchronous: bool
) -> None:
    chunking = Chunking(size=7, seed=zlib.crc32(str(path).encode()))  # any byte, fixed per file

    def through_sdk() -> list[dict[str, Any]]:
        if asynchronous:
            return asyncio.run(
                acollect(areplay_events(path, via="sdk", chunking=chunking))
            ).to_json_lines()
        return collect(replay_events(path, via="sdk", chunking=chunking)).to_json_lines()

    if path.relative_to(GEMINI_LIBRARY).as_posix() in SDK_REFUSES:
        # a stream failure, as a live client would get it: named by the refusal's class
        [failure] = through_sdk()
        assert (failure["type"], failure["error_type"]) == ("connection_error", "ValidationError")
        assert "GenerateContentResponse" in failure["message"]
        return
    assert through_sdk() == replay_outcome(path).to_json_lines()


def test_cassette_client_is_a_genai_client_answering_from_the_cassette(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for variable in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL"):
        monkeypatch.delenv(variable, raising=False)
    client = cassette_client(GEMINI_LIBRARY / "text.jsonl")
    assert isinstance(client, genai.Client)
    chunks = client.models.generate_content_stream(model="gemini-2.5-flash", contents="hi")
    assert "".join(chunk.text or "" for chunk in chunks) == "Paris is the capital of France."


def test_async_cassette_client_answers_through_the_async_face() -> None:
    client: Any = async_cassette_client(GEMINI_LIBRARY / "one_tool.jsonl")
    assert isinstance(client, genai.Client)

    async def read() -> list[Any]:
        try:
            stream = await client.aio.models.generate_content_stream(
                model="gemini-2.5-flash", contents="hi"
            )
            return [call async for chunk in stream for call in chunk.function_calls or []]
        finally:
            await client.aio.aclose()

    calls = asyncio.run(read())
    assert [(call.name, call.args) for call in calls] == [
        ("get_weather", {"city": "Paris", "unit": "celsius"})
    ]


#: A chunk google-genai's own code breaks over -> the class of what it raises (its
#: refusal of the stream): a `finishReason` that is no string (its enum's reader calls
#: `.upper()`), an error whose `code` is no number (compared with 400).
GENAI_BREAKS = {
    "finish_reason_int": (
        {"candidates": [{"content": {"parts": [{"text": "hi"}]}, "finishReason": 5}]},
        "AttributeError",
    ),
    "error_code_string": (
        {"error": {"code": "x", "status": ["a"], "message": {"a": 1}}},
        "TypeError",
    ),
}


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("name", sorted(GENAI_BREAKS))
def test_a_chunk_google_genai_breaks_over_is_a_stream_failure_named_by_its_class(
    tmp_path: Path, name: str, asynchronous: bool
) -> None:
    from click.testing import CliRunner

    from harness._replay.direct import failure_code
    from harness_cli.main import cli

    chunk, raised = GENAI_BREAKS[name]
    path = tmp_path / f"{name}.jsonl"
    header = (GEMINI_LIBRARY / "text.jsonl").read_text().splitlines()[0]
    path.write_text(f"{header}\n{json.dumps(chunk)}\n")
    assert CliRunner().invoke(cli, ["replay", str(path)]).exit_code == 1
    if asynchronous:
        outcome = asyncio.run(acollect(areplay_events(path, via="sdk")))
    else:
        result = CliRunner().invoke(cli, ["replay", "--via", "sdk", str(path)])
        assert result.exit_code == 1, result.output
        [said] = result.output.splitlines()
        assert said.startswith(f"connection_error {raised}: ")
        outcome = collect(replay_events(path, via="sdk"))
    assert outcome.error is not None
    assert failure_code(outcome.error) == f"connection_error:{raised}"


def test_an_sdk_error_before_any_answer_is_a_bug_not_the_streams(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """google-genai refusing the request the harness built (never sent: the replayer
    was not asked) is no refusal of a stream, whatever of its code raises it."""
    from harness._providers.gemini import reading

    monkeypatch.setitem(reading.REQUEST, "model", 5)
    with pytest.raises(Exception) as raised:
        collect(replay_events(GEMINI_LIBRARY / "text.jsonl", via="sdk"))
    assert not is_stream_failure(raised.value)
