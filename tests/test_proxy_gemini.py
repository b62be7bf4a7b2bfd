"""`harness proxy` records Gemini's `streamGenerateContent` on the Gemini API's path and
Vertex's, in both framings: SSE (`alt=sse`, google-genai's) and the streamed JSON array
(without it), read by `jsonarray` as it arrives. The upstream is a fake on 127.0.0.1 that
says back the key it was sent (`?key=`, `x-goog-api-key`) and a bearer token, in a chunk
and nested deep in it: each reaches upstream and is written and printed nowhere."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from aiohttp import web
from conftest import LIBRARY, not_installed

from harness._cassette.codec import Cassette
from harness._exceptions import StreamProtocolError
from harness._http.hosting import ServerThread
from harness._http.proxy import RecordingProxy
from harness._http.server import CassetteServer
from harness._providers.gemini.framing import ARRAY, encode_chunk
from harness._replay.direct import replay_outcome

API_KEY = "AIzaSyEXAMPLE-query-key-0123456789abc"
HEADER_KEY = "AIzaSyEXAMPLE-header-key-0123456789ab"
TOKEN = "ya29.EXAMPLE-bearer-token-0123456789"
API = "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
VERTEX = (
    "/v1beta1/projects/a-project/locations/us-central1/publishers/google/models"
    "/gemini-2.5-flash:streamGenerateContent"
)
ASK: Any = {"contents": [{"role": "user", "parts": [{"text": "Say back what you got"}]}]}


def _chunks(said: str) -> list[dict[str, Any]]:
    return [
        {
            "candidates": [{"content": {"parts": [{"text": said}], "role": "model"}, "index": 0}],
            "usageMetadata": {"promptTokenCount": 3, "echo": {"deep": [{"said": said}]}},
            "modelVersion": "gemini-2.5-flash",
        },
        {
            "candidates": [
                {"content": {"parts": [{"text": ""}], "role": "model"}, "finishReason": "STOP"}
            ],
            "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 2},
        },
    ]


def _echoing_upstream() -> web.Application:
    """Each stream says back the request's query and headers, in the framing `alt` asks."""
    app = web.Application()

    async def stream(request: web.Request) -> web.StreamResponse:
        said = " ".join([request.query_string, *map("=".join, request.headers.items())])
        chunks = _chunks(said)
        response = web.StreamResponse()
        if request.query.get("alt") == "sse":
            response.content_type = "text/event-stream"
            await response.prepare(request)
            for chunk in chunks:
                await response.write(encode_chunk(chunk))
        else:
            response.content_type = "application/json"
            await response.prepare(request)
            body = ARRAY.opening + ARRAY.separator.join(map(ARRAY.encode, chunks)) + ARRAY.closing
            for at in range(0, len(body), 7):  # in pieces, cut anywhere
                await response.write(body[at : at + 7])
        await response.write_eof()
        return response

    app.router.add_post("/{tail:.*}", stream)
    return app


@pytest.mark.parametrize("path", [API, VERTEX], ids=["gemini-api", "vertex"])
@pytest.mark.parametrize("sse", [True, False], ids=["sse", "array"])
def test_a_gemini_stream_is_recorded_its_key_and_token_nowhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], path: str, sse: bool
) -> None:
    logged: list[str] = []
    query = {"key": API_KEY, **({"alt": "sse"} if sse else {})}
    headers = {"x-goog-api-key": HEADER_KEY, "authorization": f"Bearer {TOKEN}"}
    with ServerThread(_echoing_upstream()) as upstream:
        proxy = RecordingProxy(upstream, tmp_path, log=logged.append)
        with ServerThread(proxy.app()) as url:
            answer = httpx2.post(url + path, params=query, headers=headers, json=ASK)
    assert answer.status_code == 200
    said = answer.text
    for secret in (API_KEY, HEADER_KEY, TOKEN):
        assert secret in said, "upstream got every credential"
    [written] = proxy.written
    text = Path(written).read_text()
    printed = "\n".join(logged) + capsys.readouterr().out
    for secret in (API_KEY, HEADER_KEY, TOKEN):
        assert secret not in text
        assert secret not in printed
    assert "***" in text, "what upstream repeated is masked, not dropped"
    cassette = Cassette(written)
    header = cassette.header or {}
    assert (cassette.provider, header["model"]) == ("gemini", "gemini-2.5-flash")
    assert cassette.host == ("vertex" if path == VERTEX else None)
    assert header["request"].get("alt") == (None if sse else "json")
    events = list(cassette.events())
    assert len(events) == 2 and events[1]["usageMetadata"]["candidatesTokenCount"] == 2
    outcome = replay_outcome(written, sdk_objects=False).to_json_lines()
    assert [line["type"] for line in outcome] == ["text", "done"]
    assert any("-> 200, 2 events: wrote" in line for line in logged)


def test_a_non_streaming_call_is_recorded_as_its_chunk(tmp_path: Path) -> None:
    answer_json = _chunks("Paris")[0]
    app = web.Application()

    async def answer(request: web.Request) -> web.Response:
        return web.json_response(
            {
                **answer_json,
                "candidates": [{**answer_json["candidates"][0], "finishReason": "STOP"}],
            }
        )

    app.router.add_post("/{tail:.*}", answer)
    with ServerThread(app) as upstream:
        proxy = RecordingProxy(upstream, tmp_path)
        with ServerThread(proxy.app()) as url:
            path = API.replace(":streamGenerateContent", ":generateContent")
            assert httpx2.post(url + path, params={"key": API_KEY}, json=ASK).status_code == 200
    [written] = proxy.written
    lines = [json.loads(line) for line in Path(written).read_text().splitlines()]
    assert lines[0]["synthesized_from"] == "message" and API_KEY not in json.dumps(lines)
    assert replay_outcome(written, sdk_objects=False).to_json_lines()[-1]["type"] == "done"


ERRORS = sorted((LIBRARY / "gemini" / "errors").glob("*.jsonl"))


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    server = CassetteServer([str(LIBRARY / "gemini")], match_on=None)
    with ServerThread(server.app()) as url:
        yield url


def _refused_code(path: Path) -> str | None:
    """The code the guard refuses a library cassette with (None: it passes, or it is the
    API's own error, which goes on as it is)."""
    error = replay_outcome(path, sdk_objects=False).error
    return error.code if isinstance(error, StreamProtocolError) else None


@pytest.mark.parametrize("path", ERRORS, ids=[path.stem for path in ERRORS])
def test_strict_ends_a_refused_array_in_the_apis_error_element_the_array_whole(
    served: str, tmp_path: Path, path: Path
) -> None:
    """In the streamed JSON array the refusal is one more element, the array opened
    first where none of it went on (a refusal at the first chunk), and closed: the body
    stays one JSON array, whose last element is the API's error naming the code."""
    proxy = RecordingProxy(served, tmp_path, strict=True)
    headers = {"x-harness-cassette": f"errors/{path.name}", "x-goog-api-key": API_KEY}
    with ServerThread(proxy.app()) as url:
        answer = httpx2.post(url + API, headers=headers, json=ASK)
    assert answer.status_code == 200
    elements = json.loads(answer.content)
    code = _refused_code(path)
    if code is None:
        assert "stream_protocol_error" not in answer.text
        return
    error = elements[-1]["error"]
    assert (error["code"], error["status"]) == (502, "stream_protocol_error")
    assert error["message"].startswith(f"{code}: ")
    assert all("error" not in element for element in elements[:-1])


@pytest.mark.parametrize("name", ["chunk_after_finish", "missing_finish_reason"])
def test_strict_ends_a_refused_sse_stream_so_google_genai_raises_the_code(
    served: str, tmp_path: Path, name: str
) -> None:
    genai = pytest.importorskip("google.genai", reason=not_installed("google.genai"))
    from google.genai import errors, types

    proxy = RecordingProxy(served, tmp_path, strict=True)
    with ServerThread(proxy.app()) as url:
        client = genai.Client(
            api_key=API_KEY,
            http_options=types.HttpOptions(
                base_url=url, headers={"x-harness-cassette": f"errors/{name}.jsonl"}
            ),
        )
        texts: list[str | None] = []
        with pytest.raises(errors.ServerError) as raised:
            for chunk in client.models.generate_content_stream(
                model="gemini-2.5-flash", contents="Go"
            ):
                texts.append(chunk.text)
    assert raised.value.code == 502
    assert str(raised.value.message).startswith(f"{name}: ")
    assert raised.value.status == "stream_protocol_error"
