"""`harness import` and `harness export` of OpenAI calls (Chat Completions and Responses).

The recordings are synthesised here from the OpenAI library (`cassettes/openai/`): each
cassette's lines framed as the API sends them, written as vcrpy YAML, JSON and gzip,
pytest-recording's layout, pydantic-ai's `parsed_body` and HAR, on every host users
point the client at. Importing them must give the library's lines back; exporting the
library and importing it again too; vcrpy replaying an export must hand the `openai`
SDK exactly the cassette's lines. No planted secret may reach a written file.
"""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path
from typing import Any

import pytest
import vcr
import yaml
from click.testing import CliRunner
from openai import APIError, APIStatusError, OpenAI

from harness import Cassette, replay_outcome
from harness._testing.coverage import outcome_code
from harness_cli.main import cli

ROOT = Path(__file__).resolve().parent.parent
LIBRARY = ROOT / "cassettes" / "openai"
CASSETTES = sorted(LIBRARY.rglob("*.jsonl"))
CHAT_TEXT = LIBRARY / "chat" / "text.jsonl"
CHAT_TOOL = LIBRARY / "chat" / "one_tool.jsonl"
RESPONSES_TEXT = LIBRARY / "responses" / "text.jsonl"
RESPONSES_TOOL = LIBRARY / "responses" / "one_tool.jsonl"
SECRET = "PLANTED-SECRET-9f3a"
#: (name, base URL before `/chat/completions` or `/responses`, query)
HOSTS = [
    ("openai", "https://api.openai.com/v1", ""),
    (
        "azure",
        "https://contoso.openai.azure.com/openai/deployments/gpt-4o",
        "?api-version=2024-10-21",
    ),
    ("openrouter", "https://openrouter.ai/api/v1", ""),
    ("vllm", "http://localhost:8000/v1", ""),
    ("ollama", "http://127.0.0.1:11434/v1", ""),
    ("groq", "https://api.groq.com/openai/v1", ""),
]


def _lines(path: Path) -> list[dict[str, Any]]:
    """A cassette's lines after its header: its events and its `done` lines."""
    return [line.data for line in Cassette(path).lines()]


def _provider(path: Path) -> str:
    return str((Cassette(path).header or {})["provider"])


def _sse(lines: list[dict[str, Any]], provider: str, *, crlf: bool = False) -> str:
    """The body the API sends for these lines, framed by hand (JSON with spaces, as
    Python writes it, and an SSE comment as OpenRouter sends one)."""
    frames = [": OPENROUTER PROCESSING\n\n"]
    for line in lines:
        if line.get("harness") == "done":
            frames.append("data: [DONE]\n\n")
        elif provider == "openai-responses":
            frames.append(f"event: {line['type']}\ndata: {json.dumps(line)}\n\n")
        else:
            frames.append(f"data: {json.dumps(line)}\n\n")
    body = "".join(frames)
    return body.replace("\n", "\r\n") if crlf else body


def _endpoint(provider: str) -> str:
    return "/chat/completions" if provider == "openai-chat" else "/responses"


def _interaction(
    uri: str,
    body: str | None,
    *,
    method: str = "POST",
    request: dict[str, Any] | None = None,
    status: int = 200,
    headers: dict[str, list[str]] | None = None,
) -> dict[str, Any]:
    return {
        "request": {
            "method": method,
            "uri": uri,
            "body": json.dumps(request) if request is not None else None,
            "headers": {
                "authorization": [f"Bearer sk-{SECRET}"],
                "api-key": [SECRET],
                "openai-organization": [f"org-{SECRET}"],
                "openai-project": [f"proj-{SECRET}"],
                "x-stainless-package-version": ["3.57.0"],
            },
        },
        "response": {
            "status": {"code": status, "message": "OK" if status == 200 else "Error"},
            "headers": {
                "content-type": ["text/event-stream" if status == 200 else "application/json"],
                "openai-organization": [f"org-{SECRET}"],
                "x-request-id": [f"req-{SECRET}"],
                **(headers or {}),
            },
            "body": {"string": body},
        },
    }


def _streamed(path: Path, base: str, query: str = "", **options: Any) -> dict[str, Any]:
    provider = _provider(path)
    uri = f"{base}{_endpoint(provider)}{query}"
    request = {"model": "gpt-4.1-mini", "stream": True, "api_key": SECRET, "messages": []}
    return _interaction(uri, _sse(_lines(path), provider, **options), request=request)


def _import(*args: str | Path) -> Any:
    result = CliRunner().invoke(cli, ["import", *map(str, args)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert "Traceback" not in result.output
    return result


def _no_secret(folder: Path) -> None:
    for path in folder.rglob("*"):
        if path.is_file():
            assert SECRET not in path.read_text(encoding="utf-8"), path


@pytest.mark.parametrize(("host", "base", "query"), HOSTS, ids=[host[0] for host in HOSTS])
@pytest.mark.slow
def test_every_library_stream_on_any_host_imports_to_its_own_lines(
    tmp_path: Path, host: str, base: str, query: str
) -> None:
    source = tmp_path / f"{host}.yaml"
    document = {"interactions": [_streamed(path, base, query) for path in CASSETTES], "version": 1}
    source.write_text(yaml.safe_dump(document), encoding="utf-8")
    out = tmp_path / "out"
    result = _import(source, "--out", out)
    assert result.exit_code == 0, result.output
    for number, path in enumerate(CASSETTES, 1):
        back = Cassette(out / f"{host}-{number:02d}.jsonl")
        assert back.provider == _provider(path), path
        assert _lines(out / f"{host}-{number:02d}.jsonl") == _lines(path), path
        header = back.header or {}
        assert header["request"] == {"model": "gpt-4.1-mini", "messages": []}
        assert header["sdk_version"] == "3.57.0"
        assert "synthesized_from" not in header
    _no_secret(out)


@pytest.mark.parametrize(
    "shape", ["yaml", "json", "yaml.gz", "json.gz", "crlf", "pydantic-ai", "har", "har64"]
)
def test_each_recording_shape_imports_both_dialects(tmp_path: Path, shape: str) -> None:
    base = "https://api.openai.com/v1"
    sources = [CHAT_TOOL, RESPONSES_TOOL]
    if shape.startswith("har"):
        entries = []
        for path in sources:
            provider = _provider(path)
            text = _sse(_lines(path), provider)
            content = {"mimeType": "text/event-stream", "text": text}
            if shape == "har64":
                content = {**content, "text": base64.b64encode(text.encode()).decode()}
                content["encoding"] = "base64"
            entries.append(
                {
                    "startedDateTime": "2026-01-02T03:04:05.000Z",
                    "request": {
                        "method": "POST",
                        "url": f"{base}{_endpoint(provider)}?api-key={SECRET}",
                        "headers": [{"name": "Authorization", "value": f"Bearer {SECRET}"}],
                        "postData": {"text": json.dumps({"model": "gpt-4.1-mini"})},
                    },
                    "response": {"status": 200, "headers": [], "content": content},
                    "timings": {"wait": 1},
                }
            )
        source = tmp_path / "session.har"
        source.write_text(json.dumps({"log": {"version": "1.2", "entries": entries}}))
    else:
        crlf = shape == "crlf"
        interactions = [_streamed(path, base, crlf=crlf) for path in sources]
        if shape == "pydantic-ai":  # its serializer: the request's JSON already parsed
            for interaction in interactions:
                request = interaction["request"]
                request["parsed_body"] = json.loads(request.pop("body"))
        document = {"interactions": interactions, "version": 1}
        text = json.dumps(document) if shape.startswith("json") else yaml.safe_dump(document)
        name = "session." + ("yaml" if shape in ("crlf", "pydantic-ai") else shape)
        source = tmp_path / name
        if shape.endswith(".gz"):
            source.write_bytes(gzip.compress(text.encode()))
        else:
            source.write_text(text)
    out = tmp_path / "out"
    result = _import(source, "--out", out)
    assert result.exit_code == 0, result.output
    assert _lines(out / "session-01.jsonl") == _lines(CHAT_TOOL)
    assert _lines(out / "session-02.jsonl") == _lines(RESPONSES_TOOL)
    if shape == "pydantic-ai":
        request = (Cassette(out / "session-01.jsonl").header or {})["request"]
        assert request == {"model": "gpt-4.1-mini", "messages": []}
    if shape.startswith("har"):
        assert (Cassette(out / "session-01.jsonl").header or {})["recorded_at"] == (
            "2026-01-02T03:04:05Z"
        )
    _no_secret(out)


def test_a_pytest_recording_folder_imports_with_its_test_names(tmp_path: Path) -> None:
    folder = tmp_path / "tests" / "cassettes" / "test_chat"
    folder.mkdir(parents=True)
    for path in (CHAT_TEXT, RESPONSES_TEXT):
        document = {"interactions": [_streamed(path, "https://api.openai.com/v1")], "version": 1}
        (folder / f"test_{path.parent.name}.yaml").write_text(yaml.safe_dump(document))
    out = tmp_path / "out"
    result = _import(tmp_path / "tests" / "cassettes", "--out", out)
    assert result.exit_code == 0, result.output
    assert _lines(out / "test_chat-01.jsonl") == _lines(CHAT_TEXT)
    assert _lines(out / "test_responses-01.jsonl") == _lines(RESPONSES_TEXT)


CHAT_COMPLETION: dict[str, Any] = {
    "id": "chatcmpl-Plain",
    "object": "chat.completion",
    "created": 1767225600,
    "model": "gpt-4.1-mini",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": "Checking.",
                "tool_calls": [
                    {
                        "id": "call_01",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                    },
                    {
                        "id": "call_02",
                        "type": "function",
                        "function": {"name": "now", "arguments": ""},
                    },
                ],
            },
            "finish_reason": "tool_calls",
        }
    ],
    "usage": {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12},
}
RESPONSE: dict[str, Any] = {
    "id": "resp_Plain",
    "object": "response",
    "model": "gpt-4.1-mini",
    "status": "completed",
    "output": [
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "Checking.", "annotations": []}],
        },
        {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_01",
            "name": "get_weather",
            "arguments": '{"city": "Paris"}',
            "status": "completed",
        },
    ],
    "usage": {"input_tokens": 5, "output_tokens": 7, "total_tokens": 12},
}
PLAIN_OUTCOME = [
    {"type": "text", "text": "Checking."},
    {
        "type": "tool_call",
        "call": {"id": "call_01", "name": "get_weather", "input": {"city": "Paris"}},
    },
]


@pytest.mark.parametrize("pydantic_ai", [False, True], ids=["body", "parsed_body"])
@pytest.mark.parametrize(
    ("endpoint", "answer", "outcome"),
    [
        (
            "/chat/completions",
            CHAT_COMPLETION,
            [
                *PLAIN_OUTCOME,
                {"type": "tool_call", "call": {"id": "call_02", "name": "now", "input": {}}},
            ],
        ),
        ("/responses", RESPONSE, PLAIN_OUTCOME),
    ],
    ids=["chat", "responses"],
)
def test_a_plain_answer_becomes_the_stream_it_carries(
    tmp_path: Path, endpoint: str, answer: dict[str, Any], outcome: list[Any], pydantic_ai: bool
) -> None:
    uri = f"https://myresource.openai.azure.com/openai/deployments/d{endpoint}?api-version=1"
    exchange = _interaction(uri, json.dumps(answer), request={"model": "gpt-4.1-mini"})
    if pydantic_ai:  # pydantic-ai's serializer: the JSON already parsed, no body
        for side, value in (("request", {"model": "gpt-4.1-mini"}), ("response", answer)):
            del exchange[side]["body"]
            exchange[side]["parsed_body"] = value
    source = tmp_path / "plain.yaml"
    source.write_text(yaml.safe_dump({"interactions": [exchange], "version": 1}))
    out = tmp_path / "out"
    result = _import(source, "--out", out)
    assert result.exit_code == 0, result.output
    cassette = out / "plain-01.jsonl"
    header = Cassette(cassette).header or {}
    assert header["synthesized_from"] == "message"
    assert header["model"] == "gpt-4.1-mini"
    lines = replay_outcome(cassette, sdk_objects=False).to_json_lines()
    assert [line for line in lines if line["type"] != "done"] == outcome
    assert lines[-1] == {"type": "done"}


def test_an_http_error_becomes_its_http_error_line(tmp_path: Path) -> None:
    error = {
        "error": {
            "message": "Rate limit reached",
            "type": "requests",
            "code": "rate_limit_exceeded",
        }
    }
    exchange = _interaction(
        "https://api.groq.com/openai/v1/chat/completions",
        json.dumps(error),
        request={"model": "llama-3.3-70b"},
        status=429,
        headers={"retry-after": ["2"], "set-cookie": [f"session={SECRET}"]},
    )
    source = tmp_path / "limited.yaml"
    source.write_text(yaml.safe_dump({"interactions": [exchange], "version": 1}))
    out = tmp_path / "out"
    result = _import(source, "--out", out)
    assert result.exit_code == 0, result.output
    assert _lines(out / "limited-01.jsonl") == [
        {"harness": "http_error", "status": 429, "body": error, "headers": {"retry-after": "2"}}
    ]
    outcome = replay_outcome(out / "limited-01.jsonl", sdk_objects=False)
    assert outcome_code(outcome) == "api_error:requests"
    _no_secret(out)


def test_the_resume_get_keeps_its_cursor_and_exports_back_to_it(tmp_path: Path) -> None:
    lines = [line for line in _lines(RESPONSES_TEXT) if line["sequence_number"] > 4]
    uri = "https://api.openai.com/v1/responses/resp_HarnessSynthetic?stream=true&starting_after=4"
    exchange = _interaction(uri, _sse(lines, "openai-responses"), method="GET")
    source = tmp_path / "resumed.yaml"
    source.write_text(yaml.safe_dump({"interactions": [exchange], "version": 1}))
    out = tmp_path / "out"
    assert _import(source, "--out", out).exit_code == 0
    imported = out / "resumed-01.jsonl"
    assert _lines(imported) == lines
    header = Cassette(imported).header or {}
    assert header["request"] == {"response_id": "resp_HarnessSynthetic", "starting_after": 4}
    result = CliRunner().invoke(
        cli, ["export", str(imported), "--to", "vcr", "--out", str(tmp_path / "vcr")]
    )
    assert result.exit_code == 0, result.output
    (interaction,) = yaml.safe_load((tmp_path / "vcr" / "resumed-01.yaml").read_text())[
        "interactions"
    ]
    assert interaction["request"]["method"] == "GET"
    assert interaction["request"]["uri"] == uri
    assert _import(tmp_path / "vcr", "--out", tmp_path / "back").exit_code == 0
    assert _lines(tmp_path / "back" / "resumed-01-01.jsonl") == lines


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ("data: {not json}\n\n", "unreadable stream: event 1 is not JSON"),
        ("data: [1, 2]\n\n", "unreadable stream: event 1 is not a JSON object"),
        ('data: {"id": "x", "choices": []}', "the body ends 32 bytes into its first event"),
        ('data: {"choices": "none"}\n\n', "event 1: event line does not match the cassette schema"),
        (
            'data: {"id": "x", "choices": [], "harness": "cut"}\n\n',
            "event 1: event line does not match the cassette schema",
        ),
        (": only a comment\n\n", "not a stream nor a chat completion"),
        ('{"object": "list", "data": []}', "the JSON response is a 'list', not a chat completion"),
    ],
    ids=["not-json", "not-object", "unterminated", "off-schema", "directive", "empty", "json"],
)
def test_an_unusable_chat_body_is_skipped_with_its_reason(
    tmp_path: Path, body: str, reason: str
) -> None:
    exchange = _interaction("https://api.openai.com/v1/chat/completions", body, request={})
    source = tmp_path / "bad.yaml"
    source.write_text(yaml.safe_dump({"interactions": [exchange], "version": 1}))
    result = _import(source, "--out", tmp_path / "out")
    assert result.exit_code == 1
    (skipped,) = [line for line in result.stdout.splitlines() if line.startswith("skipped")]
    assert skipped.startswith(
        f"skipped {source} #1 POST https://api.openai.com/v1/chat/completions: "
    )
    assert reason in skipped
    assert not list((tmp_path / "out").glob("*.jsonl"))


def test_a_responses_event_after_done_and_an_unfinished_response_are_skipped(
    tmp_path: Path,
) -> None:
    lines = _lines(RESPONSES_TEXT)
    after_done = (
        _sse(lines[:2], "openai-responses")
        + "data: [DONE]\n\n"
        + _sse(lines[2:3], "openai-responses")
    )
    queued = json.dumps({**RESPONSE, "status": "queued"})
    base = "https://api.openai.com/v1/responses"
    document = {"interactions": [_interaction(base, after_done), _interaction(base, queued)]}
    source = tmp_path / "bad.yaml"
    source.write_text(yaml.safe_dump(document))
    result = _import(source, "--out", tmp_path / "out")
    skipped = [line for line in result.stdout.splitlines() if line.startswith("skipped")]
    assert "follows data: [DONE]: it never reaches the code" in skipped[0]
    assert skipped[1].endswith(": the response is 'queued', not finished")


def test_a_file_that_is_no_recording_is_one_line_and_exit_2(tmp_path: Path) -> None:
    source = tmp_path / "notes.yaml"
    source.write_text("just: a mapping\n")
    result = _import(source, "--out", tmp_path / "out")
    assert result.exit_code == 2
    assert result.output.splitlines() == [
        f"{source}: not a vcrpy cassette: "
        "neither an interactions list (vcrpy) nor log.entries (HAR)",
        "1 file: 0 cassettes written, 0 skipped, 1 file unreadable",
    ]


# -- export -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("exported")
    result = CliRunner().invoke(cli, ["export", str(LIBRARY), "--to", "vcr", "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


def _exported_name(path: Path) -> str:
    """The name `harness export LIBRARY` gives a cassette (stems collide across folders)."""
    stem = path.stem
    if len([other for other in CASSETTES if other.stem == stem]) == 1:
        return stem
    return "-".join(path.relative_to(LIBRARY).with_suffix("").parts)


def test_import_of_the_export_gives_every_library_cassette_back(
    exported: Path, tmp_path: Path
) -> None:
    result = _import(exported, "--out", tmp_path)
    assert result.exit_code == 0, result.output
    for path in CASSETTES:
        back = tmp_path / f"{_exported_name(path)}-01.jsonl"
        assert _lines(back) == _lines(path), path
        assert Cassette(back).provider == _provider(path)
        assert (Cassette(back).header or {}).get("model") == (Cassette(path).header or {}).get(
            "model"
        )


def test_the_export_is_the_bytes_the_api_sends(exported: Path) -> None:
    chat = yaml.safe_load((exported / "chat-one_tool.yaml").read_text())["interactions"][0]
    assert chat["request"]["uri"] == "https://api.openai.com/v1/chat/completions"
    assert json.loads(chat["request"]["body"]) == {"model": "gpt-4.1-mini", "stream": True}
    body = chat["response"]["body"]["string"]
    frames = body.split("\n\n")
    assert frames[-2:] == ["data: [DONE]", ""]
    assert all(frame.startswith("data: {") for frame in frames[:-2])
    responses = yaml.safe_load((exported / "responses-text.yaml").read_text())["interactions"][0]
    assert responses["request"]["uri"] == "https://api.openai.com/v1/responses"
    first = responses["response"]["body"]["string"].split("\n\n")[0]
    assert first.startswith('event: response.created\ndata: {"type":"response.created",')


def _sdk_items(path: Path, provider: str) -> tuple[list[dict[str, Any]], bool]:
    """What the `openai` SDK hands the code from a vcrpy replay of `path` (each item as
    its dict), and whether it raised the API's error."""
    items: list[dict[str, Any]] = []
    with (
        vcr.VCR(record_mode="none").use_cassette(str(path)),
        OpenAI(api_key="sk-not-a-real-key", max_retries=0) as client,
    ):
        try:
            if provider == "openai-chat":
                stream: Any = client.chat.completions.create(
                    model="gpt-4.1-mini", messages=[{"role": "user", "content": "hi"}], stream=True
                )
            else:
                stream = client.responses.create(model="gpt-4.1-mini", input="hi", stream=True)
            items.extend(item.to_dict(warnings=False) for item in stream)
        except APIError:
            return items, True
    return items, False


@pytest.mark.parametrize("path", CASSETTES, ids=lambda path: str(path.relative_to(LIBRARY)))
@pytest.mark.slow
def test_vcrpy_hands_the_openai_sdk_exactly_the_cassettes_lines(exported: Path, path: Path) -> None:
    provider = _provider(path)
    items, raised = _sdk_items(exported / f"{_exported_name(path)}.yaml", provider)
    lines = _lines(path)
    expected = lines[: lines.index({"harness": "done"})] if {"harness": "done"} in lines else lines
    if raised:  # the SDK raises at a nested `{"error": ...}` line, handing on what came before
        assert "error" in expected[len(items)], path
        expected = expected[: len(items)]
    assert items == expected, path


def test_vcrpy_replays_an_exported_http_error_to_the_sdks_error(tmp_path: Path) -> None:
    cassette = tmp_path / "overloaded.jsonl"
    error = {"error": {"message": "The server is overloaded", "type": "server_error", "code": None}}
    header = {"cassette": 1, "provider": "openai-chat", "model": "gpt-4.1-mini"}
    line = {
        "harness": "http_error",
        "status": 503,
        "body": error,
        "headers": {"x-should-retry": "false"},
    }
    cassette.write_text(json.dumps(header) + "\n" + json.dumps(line) + "\n")
    result = CliRunner().invoke(
        cli, ["export", str(cassette), "--to", "vcr", "--out", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    with (
        vcr.VCR(record_mode="none").use_cassette(str(tmp_path / "overloaded.yaml")),
        OpenAI(api_key="sk-not-a-real-key", max_retries=0) as client,
        pytest.raises(APIStatusError) as caught,
    ):
        client.chat.completions.create(model="gpt-4.1-mini", messages=[], stream=True)
    assert caught.value.status_code == 503
    assert caught.value.body == error["error"]
    assert _import(tmp_path / "overloaded.yaml", "--out", tmp_path / "back").exit_code == 0
    assert _lines(tmp_path / "back" / "overloaded-01.jsonl") == [line]


def test_the_exported_request_never_carries_a_credential(tmp_path: Path) -> None:
    cassette = tmp_path / "recorded.jsonl"
    header = {
        "cassette": 1,
        "provider": "openai-responses",
        "request": {"model": "gpt-4.1", "input": "hi", "api_key": SECRET},
    }
    body = [json.dumps(header), *(json.dumps(line) for line in _lines(RESPONSES_TEXT))]
    cassette.write_text("\n".join(body) + "\n")
    result = CliRunner().invoke(
        cli, ["export", str(cassette), "--to", "vcr", "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 0, result.output
    (interaction,) = yaml.safe_load((tmp_path / "o" / "recorded.yaml").read_text())["interactions"]
    assert json.loads(interaction["request"]["body"]) == {
        "model": "gpt-4.1",
        "input": "hi",
        "stream": True,
    }
    _no_secret(tmp_path / "o")


def test_the_sample_recording_imports_without_a_planted_credential(tmp_path: Path) -> None:
    sample = ROOT / "tests" / "data" / "openai-recordings"
    assert "PLANTED" in (sample / "openai_hosts.yaml").read_text()
    result = _import(sample, "--out", tmp_path)
    assert result.exit_code == 0, result.output
    assert "PLANTED" not in result.output
    written = sorted(tmp_path.glob("*.jsonl"))
    assert [path.name for path in written] == [f"openai_hosts-0{n}.jsonl" for n in (1, 2, 3, 4)]
    for path in written:
        assert "PLANTED" not in path.read_text(), path.name
    providers = [Cassette(path).provider for path in written]
    assert providers == ["openai-chat", "openai-chat", "openai-responses", "openai-chat"]
