"""`harness serve` answers Gemini's paths: google-genai pointed at it streams a cassette
(SSE under `alt=sse`, as the SDK asks), a request without `alt=sse` gets the streamed
JSON array, `:generateContent` the folded answer, and Vertex's path the same."""

from __future__ import annotations

from pathlib import Path

import httpx2
import pytest
from conftest import GEMINI_LIBRARY
from google import genai
from google.genai import types

import harness
from harness._http.hosting import ServerThread
from harness._http.server import CassetteServer
from harness._providers.gemini.adapter import to_model_events
from harness._providers.jsonarray import elements_from_body
from harness._providers.sse import sse_fields

TEXT = GEMINI_LIBRARY / "text.jsonl"
CALL = GEMINI_LIBRARY / "one_tool.jsonl"


def _serve(*paths: Path) -> ServerThread:
    return ServerThread(CassetteServer([str(path) for path in paths], match_on=None).app())


@pytest.mark.slow
def test_the_quick_start_google_genai_streams_from_harness_serve() -> None:
    """docs/gemini.md's quick start: a good answer read, then a broken one refused under
    `harness.strict`, after the text that came before the cut."""
    with _serve(TEXT, GEMINI_LIBRARY / "errors/missing_finish_reason.jsonl") as url:
        client = genai.Client(api_key="dummy", http_options=types.HttpOptions(base_url=url))
        chunks = list(
            client.models.generate_content_stream(model="gemini-2.5-flash", contents="hi")
        )
        assert "".join(chunk.text or "" for chunk in chunks) == "Paris is the capital of France."
        seen: list[str] = []
        with pytest.raises(harness.StreamProtocolError) as raised:
            for chunk in harness.strict(client).models.generate_content_stream(
                model="gemini-2.5-flash", contents="hi"
            ):
                seen.append(chunk.text or "")
        assert raised.value.code == "missing_finish_reason"
        assert "".join(seen) == "Paris is the capital"


@pytest.mark.slow
def test_a_call_streams_from_harness_serve() -> None:
    with _serve(CALL) as url:
        client = genai.Client(api_key="dummy", http_options=types.HttpOptions(base_url=url))
        calls = [
            call
            for chunk in client.models.generate_content_stream(
                model="gemini-2.5-flash", contents="hi"
            )
            for call in chunk.function_calls or []
        ]
        assert [(call.name, call.args) for call in calls] == [
            ("get_weather", {"city": "Paris", "unit": "celsius"})
        ]


def test_the_array_without_alt_sse_and_the_plain_answer() -> None:
    path = "/v1beta/models/gemini-2.5-flash"
    with _serve(TEXT, TEXT, TEXT) as url:
        array = httpx2.post(f"{url}{path}:streamGenerateContent", json={"contents": []})
        assert array.headers["content-type"].startswith("application/json")
        assert array.content.startswith(b"[{") and array.content.endswith(b"\n]")
        chunks = elements_from_body(array.content)
        assert len(chunks) == 4
        sse = httpx2.post(f"{url}{path}:streamGenerateContent?alt=sse", json={"contents": []})
        assert sse.headers["content-type"].startswith("text/event-stream")
        assert [data for _, data in sse_fields(sse.content)] == [
            data
            for _, data in sse_fields(
                b"".join(
                    b"data: " + c + b"\r\n\r\n"
                    for c in [line.encode() for line in TEXT.read_text().splitlines()[1:]]
                )
            )
        ]
        plain = httpx2.post(f"{url}{path}:generateContent", json={"contents": []}).json()
        parts = plain["candidates"][0]["content"]["parts"]
        assert parts == [{"text": "Paris is the capital of France."}]
        assert plain["candidates"][0]["finishReason"] == "STOP"
    assert [type(event).__name__ for event in to_model_events(chunks)][-1] == "DoneEvent"


def test_vertex_s_path_is_answered_too() -> None:
    path = "/v1beta1/projects/p/locations/us-central1/publishers/google/models/gemini-2.5-flash"
    with _serve(CALL) as url:
        answer = httpx2.post(f"{url}{path}:streamGenerateContent?alt=sse", json={"contents": []})
    assert answer.status_code == 200
    assert len(sse_fields(answer.content)) == 2


def test_a_request_no_cassette_answers_gets_the_apis_error_shape() -> None:
    with _serve(TEXT) as url:
        path = "/v1beta/models/m:streamGenerateContent?alt=sse"
        httpx2.post(f"{url}{path}", json={"contents": []})
        refused = httpx2.post(f"{url}{path}", json={"contents": []})
    assert refused.status_code == 404
    assert refused.json()["error"]["status"] == "NOT_FOUND"
