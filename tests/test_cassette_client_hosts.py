"""`harness.cassette_client(path, host=...)`: the dialect's client on Bedrock or Vertex
(`AnthropicBedrock`, `AnthropicVertex`) answered in-process from any Anthropic cassette
as `anthropic.Anthropic` is, with dummy credentials and nothing read from the user's AWS
or Google configuration; a cassette header's `host` is the default."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, cast

import pytest
from conftest import LIBRARY, as_direct, library_cassettes, not_installed

import harness
from harness._cassette.codec import Cassette
from harness._exceptions import CassetteError, InputError
from harness._hosts import HOSTS
from harness._providers import names, provider
from harness._replay.clients import HOST

anthropic = pytest.importorskip("anthropic")
pytest.importorskip("botocore", reason=not_installed("botocore"))

CASSETTES = library_cassettes()
IDS = [str(path.relative_to(LIBRARY)) for path in CASSETTES]
ASK: Any = {
    "model": "claude-sonnet-5",
    "max_tokens": 64,
    "messages": [{"role": "user", "content": "Go"}],
}
CLASSES = {"bedrock": "AnthropicBedrock", "vertex": "AnthropicVertex", "direct": "Anthropic"}


def _outcome(client: Any, *, stream: bool) -> list[Any]:
    seen: list[Any] = []
    try:
        if stream:
            seen += [
                event.to_dict(warnings=False)
                for event in client.messages.create(**ASK, stream=True)
            ]
        else:
            seen.append(client.messages.create(**ASK).to_dict(warnings=False))
    except anthropic.APIStatusError as error:
        seen.append((type(error).__name__, error.status_code, as_direct(error.body)))
    return seen


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "plain"])
@pytest.mark.parametrize("host", ["bedrock", "vertex"])
def test_every_anthropic_cassette_reads_the_same_through_the_hosts_client(
    host: HOST, stream: bool
) -> None:
    for path in CASSETTES:
        with (
            harness.cassette_client(path, host=host, match_on=None, max_retries=0) as hosted,
            harness.cassette_client(path, match_on=None, max_retries=0) as direct,
        ):
            assert type(hosted).__name__ == CLASSES[host]
            assert _outcome(hosted, stream=stream) == _outcome(direct, stream=stream), path
            [asked] = harness.captured_requests(hosted)
            hosted_at = HOSTS[host].stream_path if stream else HOSTS[host].plain_path
            assert hosted_at.search(asked.path), asked.path
            assert asked.json["model"] == ASK["model"]


def test_bedrock_streams_go_in_event_stream_frames_cut_anywhere() -> None:
    path = LIBRARY / "two_tools.jsonl"
    chunked = harness.Chunking(size=3)
    twice = [path, path]
    with harness.cassette_client(twice, host="bedrock", chunking=chunked, match_on=None) as client:
        with client.messages.with_streaming_response.create(**ASK, stream=True) as answer:
            assert answer.headers["content-type"] == "application/vnd.amazon.eventstream"
        with client.messages.stream(**ASK) as stream:
            message = stream.get_final_message()
    assert message.stop_reason == "tool_use"
    assert [block.type for block in message.content] == ["text", "tool_use", "tool_use"]


@pytest.mark.parametrize("host", ["bedrock", "vertex"])
def test_the_async_client_on_a_host(host: HOST) -> None:
    path = LIBRARY / "thinking.jsonl"

    async def read() -> list[Any]:
        async with harness.async_cassette_client(path, host=host, match_on=None) as client:
            assert type(client).__name__ == f"Async{CLASSES[host]}"
            stream = await client.messages.create(**ASK, stream=True)
            return [event.to_dict(warnings=False) async for event in stream]

    with harness.cassette_client(path, match_on=None) as direct:
        assert asyncio.run(read()) == _outcome(direct, stream=True)


def test_nothing_is_read_from_the_users_aws_or_google_configuration(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A profile that does not exist, a bearer token and a base URL in the environment, a
    credentials file that is not there: a client that read any would fail or go there."""
    for name, value in {
        "AWS_PROFILE": "no-such-profile",
        "AWS_CONFIG_FILE": str(tmp_path / "missing-config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "missing-credentials"),
        "AWS_BEARER_TOKEN_BEDROCK": "a-users-token",
        "AWS_REGION": "eu-nowhere-9",
        "ANTHROPIC_BEDROCK_BASE_URL": "http://bedrock.invalid",
        "ANTHROPIC_VERTEX_BASE_URL": "http://vertex.invalid",
        "ANTHROPIC_VERTEX_PROJECT_ID": "a-users-project",
        "CLOUD_ML_REGION": "eu-nowhere-9",
        "GOOGLE_APPLICATION_CREDENTIALS": str(tmp_path / "missing.json"),
    }.items():
        monkeypatch.setenv(name, value)
    path = LIBRARY / "text_only.jsonl"
    for host in ("bedrock", "vertex"):
        with harness.cassette_client(path, host=host, match_on=None) as client:
            assert "invalid" not in str(client.base_url)
            assert _outcome(client, stream=True)[-1]["type"] == "message_stop"
            [asked] = harness.captured_requests(client)
            assert "a-users" not in json.dumps(asked.json) + asked.path
            assert "eu-nowhere-9" not in asked.path


def _with_header(tmp_path: Path, **fields: Any) -> Path:
    source = (LIBRARY / "text_only.jsonl").read_text().splitlines()
    header = {**json.loads(source[0]), **fields}
    path = tmp_path / "hosted.jsonl"
    path.write_text("\n".join([json.dumps(header), *source[1:]]) + "\n")
    return path


@pytest.mark.parametrize("host", ["bedrock", "vertex"])
def test_a_cassette_naming_its_host_gets_that_hosts_client_by_default(
    tmp_path: Path, host: str
) -> None:
    path = _with_header(tmp_path, host=host)
    assert Cassette(path).host == host
    with harness.cassette_client(path) as client:
        assert type(client).__name__ == CLASSES[host]
        assert _outcome(client, stream=True)[-1]["type"] == "message_stop"
    with harness.cassette_client(path, host="direct") as client:
        assert type(client).__name__ == "Anthropic"
    other = "vertex" if host == "bedrock" else "bedrock"
    with harness.cassette_client(path, host=other) as client:  # type: ignore[call-overload]
        assert type(client).__name__ == CLASSES[other]


def test_the_schemas_hosts_are_the_hosts_and_another_is_refused(tmp_path: Path) -> None:
    schema = json.loads((Path(harness.__file__).parent / "cassette.schema.json").read_text())
    assert schema["$defs"]["header"]["properties"]["host"]["enum"] == sorted(HOSTS)
    with pytest.raises(CassetteError, match="host"):
        list(Cassette(_with_header(tmp_path, host="azure")).lines())


def test_a_host_the_dialect_is_not_served_on_is_one_line() -> None:
    chat = next((LIBRARY / "openai").rglob("*.jsonl"))
    with pytest.raises(InputError, match=r"host='bedrock': the cassettes' dialect \(openai-"):
        harness.cassette_client(chat, host="bedrock")


@pytest.mark.parametrize("name", names())
def test_a_host_refused_names_the_direct_api_as_a_choice_too(name: str) -> None:
    """`host="direct"` is always taken, so the refusal of another host lists it."""
    with pytest.raises(InputError) as raised:
        harness.cassette_client(library_cassettes(name)[0], host=cast(Any, "nowhere"))
    hosts = sorted(provider(name).hosted)
    served = (
        f"{', '.join(hosts)} or its own API ('direct')" if hosts else "its own API ('direct') alone"
    )
    assert str(raised.value).endswith(f"is served on {served}")


def test_the_pages_quick_start_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/bedrock-vertex.md's first example, as a reader runs it in the repository."""
    page = (Path(__file__).resolve().parent.parent / "docs" / "bedrock-vertex.md").read_text()
    example = page.split("```python\n")[1].split("```")[0]
    monkeypatch.chdir(LIBRARY.parent)
    exec(compile(example, "docs/bedrock-vertex.md", "exec"), {})
