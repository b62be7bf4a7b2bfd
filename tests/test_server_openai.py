"""`harness serve` for OpenAI clients: the real `openai` SDK over a real socket.

The server answers `/v1/chat/completions`, `/v1/responses` and the resume GET
`/v1/responses/{id}` from the cassettes of the request's provider; every library
cassette reaches the SDK's readers as it does in process (`--via sdk`), errors come in
OpenAI's error JSON, and a folder holding both providers' cassettes serves both.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import openai
import pytest
from click.testing import CliRunner
from conftest import LIBRARY, OPENAI_LIBRARY

from harness._cassette.codec import Cassette, expand_paths, write_cassette
from harness._http.hosting import ServerThread
from harness._http.server import CassetteServer
from harness._replay.direct import Outcome, collect, failure_code, replay_outcome
from harness._replay.readers import client_events
from harness_cli.main import cli

KEY = "sk-openai-server-test-key-0123456789"
CASSETTES = [Path(path) for path in expand_paths([str(OPENAI_LIBRARY)])]
IDS = [path.relative_to(OPENAI_LIBRARY).as_posix() for path in CASSETTES]
CHAT_TEXT = "openai/chat/text"
RESPONSES_TEXT = "openai/responses/text"
ANSWER = "Paris is the capital of France."
CHAT: dict[str, Any] = {"model": "gpt-4.1-mini", "messages": [{"role": "user", "content": "hi"}]}
RESPONSES: dict[str, Any] = {"model": "gpt-4.1-mini", "input": "hi"}
#: Where the SDK decides before the adapter (as tests/test_openai_sdk_replay.py says).
SDK_TAKES = {"chat/errors/chunk_after_done.jsonl", "chat/errors/missing_done.jsonl"}
HELPER_RAISES = {
    "responses/errors/duplicate_output_item.jsonl",
    "responses/errors/inconsistent_response.jsonl",
    "responses/errors/missing_response_created.jsonl",
    "responses/errors/orphan_delta.jsonl",
    "responses/errors/unfinished_output_items.jsonl",
}


@pytest.fixture(scope="module")
def library() -> Iterator[str]:
    """The whole library, both providers' cassettes, served once; tests pick by header."""
    with ServerThread(CassetteServer([str(LIBRARY)], match_on=None).app()) as url:
        yield url


def _client(url: str, name: str | None = None, **options: Any) -> openai.OpenAI:
    headers = {} if name is None else {"x-harness-cassette": name}
    return openai.OpenAI(
        base_url=f"{url}/v1", api_key=KEY, max_retries=0, default_headers=headers, **options
    )


def _code(outcome: Outcome) -> str | None:
    return "done" if outcome.error is None else failure_code(outcome.error)


@pytest.mark.parametrize("reader", ["create", "stream"])
@pytest.mark.parametrize("path", CASSETTES, ids=IDS)
def test_each_cassette_reaches_each_sdk_reader_over_a_socket_as_direct_replay(
    library: str, path: Path, reader: str
) -> None:
    """`chat.completions.create(stream=True)`, `.stream()`, `responses.create(stream=True)`,
    `responses.stream()`: the outcome the adapter reads is direct replay's."""
    name = path.relative_to(OPENAI_LIBRARY).as_posix()
    provider = Cassette(path).provider
    direct = replay_outcome(path)
    with _client(library, f"openai/{name}") as client:
        outcome = collect(client_events(client, provider, reader))
    if reader == "stream" and name in HELPER_RAISES:  # the helper's refusal of the stream
        assert isinstance(outcome.error, RuntimeError)
        assert _code(outcome) == "connection_error:RuntimeError"
        return
    if name in SDK_TAKES:  # the SDK stops reading at [DONE]
        assert (_code(direct) != "done", _code(outcome)) == (True, "done")
        return
    assert outcome.to_json_lines() == direct.to_json_lines()


def test_non_streaming_create_gets_the_answer_the_events_fold_into(library: str) -> None:
    with _client(library, CHAT_TEXT) as client:
        completion = client.chat.completions.create(**CHAT)
    assert completion.object == "chat.completion"
    assert completion.choices[0].message.content == ANSWER
    assert completion.choices[0].finish_reason == "stop"
    with _client(library, RESPONSES_TEXT) as client:
        response = client.responses.create(**RESPONSES)
    assert (response.status, response.output_text) == ("completed", ANSWER)


@pytest.mark.parametrize("server", ["groq", "openrouter"])
def test_an_in_band_error_beside_choices_answers_a_request_without_stream_as_the_error(
    server: str,
) -> None:
    profiles = Path(__file__).parent / "data" / "profiles"
    [line] = [
        line
        for line in (profiles / server / "in_band_error.jsonl").read_text().splitlines()
        if '"error"' in line and '"choices"' in line
    ]
    served = CassetteServer([str(profiles / server / "in_band_error.jsonl")], match_on=None)
    with (
        ServerThread(served.app()) as url,
        _client(url) as client,
        pytest.raises(openai.APIStatusError) as raised,
    ):
        client.chat.completions.create(**CHAT)
    assert raised.value.body == json.loads(line)["error"]


def test_a_responses_stream_resumes_after_its_cursor_by_get(library: str) -> None:
    with _client(library, RESPONSES_TEXT) as client:
        with client.responses.create(**RESPONSES, stream=True) as stream:
            first = list(stream)
        resumed = list(
            client.responses.retrieve(first[0].response.id, stream=True, starting_after=3)
        )
    assert [event.sequence_number for event in resumed] == [
        event.sequence_number for event in first if event.sequence_number > 3
    ]
    assert resumed[-1].type == "response.completed"
    assert len(resumed) < len(first)


def test_a_resume_of_a_response_no_cassette_holds_is_a_404_in_openais_shape(
    library: str,
) -> None:
    with _client(library) as client, pytest.raises(openai.NotFoundError) as raised:
        list(client.responses.retrieve("resp_nobody", stream=True, starting_after=0))
    assert raised.value.body == {
        "message": "stream-harness: a request resumes response 'resp_nobody', which no "
        "cassette holds",
        "type": "invalid_request_error",
        "param": None,
        "code": None,
    }


def test_raw_http_gets_the_chat_sse_ended_by_done(library: str) -> None:
    body = {**CHAT, "stream": True}
    headers = {"x-harness-cassette": CHAT_TEXT, "authorization": f"Bearer {KEY}"}
    with httpx2.stream("POST", f"{library}/v1/chat/completions", json=body, headers=headers) as got:
        raw = b"".join(got.iter_bytes())
    assert got.status_code == 200
    assert got.headers["content-type"].startswith("text/event-stream")
    assert raw.endswith(b"data: [DONE]\n\n")
    assert (
        raw.count(b"data: ") == len(list(Cassette(OPENAI_LIBRARY / "chat/text.jsonl").events())) + 1
    )


def test_a_session_is_answered_turn_by_turn_then_used_up(library: str) -> None:
    session = OPENAI_LIBRARY / "chat/sessions/weather"
    requests = [
        (Cassette(turn).header or {})["request"] for turn in sorted(session.glob("*.jsonl"))
    ]
    with ServerThread(CassetteServer([str(session)]).app()) as url, _client(url) as client:
        second = client.chat.completions.create(**requests[1])  # matched: turn 2 first
        first = client.chat.completions.create(**requests[0])
    assert first.choices[0].finish_reason == "tool_calls"
    assert second.choices[0].finish_reason == "stop"
    with _client(library, "openai/chat/sessions/weather") as client:  # by header, in turn order
        finishes = [client.chat.completions.create(**CHAT).choices[0].finish_reason for _ in "12"]
        with pytest.raises(openai.NotFoundError, match="its 2 turns were all answered"):
            client.chat.completions.create(**CHAT)
    assert finishes == ["tool_calls", "stop"]


def test_requests_of_each_provider_take_their_own_cassettes_in_order(tmp_path: Path) -> None:
    """A folder of both providers: each request is answered by the next of its own."""
    for name in ("a_anthropic.jsonl", "b_chat.jsonl", "c_responses.jsonl"):
        source = {"a": LIBRARY / "text_only.jsonl", "b": OPENAI_LIBRARY / "chat/text.jsonl"}.get(
            name[0], OPENAI_LIBRARY / "responses/text.jsonl"
        )
        (tmp_path / name).write_bytes(source.read_bytes())
    served = CassetteServer([str(tmp_path)], match_on=None)
    with ServerThread(served.app()) as url, _client(url) as client:
        assert client.responses.create(**RESPONSES).output_text == ANSWER
        assert client.chat.completions.create(**CHAT).choices[0].message.content == ANSWER
        messages = anthropic.Anthropic(base_url=url, api_key=KEY, max_retries=0).messages
        reply = messages.create(model="m", max_tokens=9, messages=[])
        assert reply.content[0].type == "text"
        with pytest.raises(openai.NotFoundError) as raised:
            client.chat.completions.create(**CHAT)
    assert raised.value.response.headers["x-should-retry"] == "false"
    assert "request 4, but the cassettes hold 1 response of openai-chat" in raised.value.message


def test_a_provider_without_cassettes_served_gets_a_404_naming_it() -> None:
    served = CassetteServer([str(LIBRARY / "text_only.jsonl")])
    no_cassette = pytest.raises(openai.NotFoundError, match="no openai-responses cassette is")
    with ServerThread(served.app()) as url, _client(url) as client, no_cassette:
        client.responses.create(**RESPONSES)


@pytest.mark.slow
def test_the_servers_own_errors_come_in_openais_error_json(library: str) -> None:
    json_type = {"content-type": "application/json"}
    not_json = httpx2.post(f"{library}/v1/chat/completions", content=b"{nope", headers=json_type)
    wrong_method = httpx2.get(f"{library}/v1/responses")
    too_big = CassetteServer([str(LIBRARY / "openai")], max_body=64)
    with ServerThread(too_big.app()) as url:
        big = httpx2.post(f"{url}/v1/responses", json={"input": "x" * 100})
    for got, status in ((not_json, 400), (wrong_method, 405), (big, 413)):
        assert got.status_code == status
        assert set(got.json()) == {"error"}
        assert set(got.json()["error"]) == {"message", "type", "param", "code"}
    assert not_json.json()["error"]["message"].startswith("harness serve: the request body is not")
    anthropics = httpx2.get(f"{library}/v1/models").json()  # no provider's path: as before
    assert anthropics["type"] == "error"


def _with(tmp_path: Path, source: str, directive: dict[str, Any], after: int) -> Path:
    cassette = Cassette(OPENAI_LIBRARY / f"{source}.jsonl")
    lines = [line.data for line in cassette.lines()]
    path = tmp_path / f"{source.replace('/', '_')}.jsonl"
    write_cassette(path, [*lines[:after], directive, *lines[after:]], header=cassette.header)
    return path


@pytest.mark.parametrize(
    ("directive", "after", "error"),
    [
        ({"harness": "http_error", "status": 429, "headers": {"x-should-retry": "false"},
          "body": {"error": {"message": "slow down", "type": "requests", "param": None,
                             "code": "rate_limit_exceeded"}}}, 0, openai.RateLimitError),
        ({"harness": "cut", "after_bytes": 9}, 2, openai.APIConnectionError),
        ({"harness": "stall", "ms": 5_000}, 2, openai.APITimeoutError),
    ],
    ids=["http_error", "cut", "stall"],
)  # fmt: skip
@pytest.mark.parametrize("source", ["chat/text", "responses/text"])
@pytest.mark.slow
def test_the_wire_directives_reach_the_sdk_over_the_socket(
    tmp_path: Path, source: str, directive: dict[str, Any], after: int, error: type[Exception]
) -> None:
    path = _with(tmp_path, source, directive, after)
    provider = Cassette(path).provider
    server = ServerThread(CassetteServer([str(path)]).app())
    with server as url, _client(url, timeout=0.3) as client, pytest.raises(error):
        for _ in client_events(client, provider):
            pass


@pytest.mark.slow
def test_serve_answers_openai_clients_from_the_command(tmp_path: Path) -> None:
    """The command itself: the first line, then a Chat stream over urllib-like raw HTTP."""
    script = (
        "import sys; from harness_cli.main import main; sys.argv = ['harness', 'serve', "
        f"{str(OPENAI_LIBRARY)!r}]; main()"
    )
    process = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        first = process.stdout.readline().strip()
        # OpenAI cassettes alone: the openai SDK's base URL alone, `/v1` ending it
        assert re.fullmatch(r"OPENAI_BASE_URL=http://127\.0\.0\.1:\d+/v1", first), first
        url = first.removeprefix("OPENAI_BASE_URL=").removesuffix("/v1")
        got = httpx2.post(
            f"{url}/v1/chat/completions",
            json={**CHAT, "stream": True},
            headers={"x-harness-cassette": "chat/text"},
        )
        assert got.text.endswith("data: [DONE]\n\n")
        assert process.stdout.readline().strip() == (
            "#1 POST /v1/chat/completions stream -> 200 from chat/text.jsonl"
        )
    finally:
        process.terminate()
        process.communicate(timeout=30)


def test_an_unusable_openai_cassette_is_one_line_and_exit_2(tmp_path: Path) -> None:
    header = json.loads((OPENAI_LIBRARY / "chat/text.jsonl").read_text().splitlines()[0])
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(header) + "\n{not json\n")
    for args in ([str(bad)], [str(tmp_path / "missing.jsonl")]):
        result = CliRunner().invoke(cli, ["serve", *args, "--port", "0"])
        assert result.exit_code == 2, result.output
        (line,) = result.stderr.splitlines()
        assert line.startswith("harness serve: ")
        assert "Traceback" not in result.output
