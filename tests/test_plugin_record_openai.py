"""The pytest plugin's record modes with OpenAI cassettes: `harness_client` and
`harness_async_client` record Chat Completions and Responses answers (streamed, plain, an
HTTP error) with `OPENAI_API_KEY`, sent to `OPENAI_BASE_URL`, and the recordings replay
to the same outcome; the lines that name a key name `OPENAI_API_KEY` for them.

The live API is a `harness serve` of library cassettes on 127.0.0.1 (a dummy key), never
OpenAI's.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import OPENAI_LIBRARY, not_installed

from harness import Cassette
from harness._cassette.codec import make_header, write_cassette
from harness._http.hosting import ServerThread
from harness._http.server import CassetteServer

pytestmark = pytest.mark.skipif(bool(not_installed("openai")), reason="needs the openai extra")

INI = "[pytest]\naddopts = --strict-markers -p no:cacheprovider\nfilterwarnings = error\n"
KEY = "sk-proj-plugin-record-dummy-0123456789"
ANSWER = "Paris is the capital of France."

INNER = f"""
import asyncio

import openai
import pytest

ANSWER = {ANSWER!r}
ASK = [{{"role": "user", "content": "Capital of France?"}}]


@pytest.mark.cassette("chat_stream", sdk="openai")
def test_chat_stream(harness_client):
    assert isinstance(harness_client, openai.OpenAI)
    stream = harness_client.chat.completions.create(
        model="gpt-4.1-mini", messages=ASK, stream=True
    )
    assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices) == ANSWER


async def chat_plain(client):
    async with client:  # its connections live in this event loop: closed in it
        completion = await client.chat.completions.create(model="gpt-4.1-mini", messages=ASK)
    return completion.choices[0].message.content


@pytest.mark.cassette("chat_plain", sdk="openai")
def test_chat_plain(harness_async_client):
    assert isinstance(harness_async_client, openai.AsyncOpenAI)
    assert asyncio.run(chat_plain(harness_async_client)) == ANSWER


async def responses_stream(client):
    async with client, client.responses.stream(model="gpt-4.1-mini", input="Capital?") as s:
        return "".join([e.delta async for e in s if e.type == "response.output_text.delta"])


@pytest.mark.cassette("responses_stream", sdk="openai")
def test_responses_stream(harness_async_client):
    assert asyncio.run(responses_stream(harness_async_client)) == ANSWER


@pytest.mark.cassette("responses_plain", sdk="openai")
def test_responses_plain(harness_client):
    response = harness_client.responses.create(model="gpt-4.1-mini", input="Capital of France?")
    assert (response.status, response.output_text) == ("completed", ANSWER)


@pytest.mark.cassette("chat_refused", sdk="openai")
def test_chat_refused(harness_client):
    with pytest.raises(openai.BadRequestError, match="model_not_found_here"):
        harness_client.chat.completions.create(model="gpt-nope", messages=ASK, stream=True)
"""

#: What each inner test's cassette holds once recorded: its provider, and its answer's kind.
RECORDED = {
    "chat_stream": ("openai-chat", None),
    "chat_plain": ("openai-chat", "message"),
    "responses_stream": ("openai-responses", None),
    "responses_plain": ("openai-responses", "message"),
    "chat_refused": ("openai-chat", None),
}


def _refusal(folder: Path) -> Path:
    """A Chat cassette holding a 400 answer, as the fake API's answer to the last request."""
    path = folder / "refused.jsonl"
    error = {"error": {"message": "model_not_found_here", "type": "invalid_request_error"}}
    line = {"harness": "http_error", "status": 400, "headers": {}, "body": error}
    header = make_header("a 400", "synthetic", provider="openai-chat")
    write_cassette(path, [line], header=header)
    return path


def _header(cassette: Cassette) -> dict[str, Any]:
    assert cassette.header is not None
    return cassette.header


@pytest.fixture
def live(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The "live API": library cassettes served in the inner tests' order, each provider's
    from its own (Chat: a stream, a plain answer, a 400; Responses: a stream, a plain
    answer), with `OPENAI_BASE_URL` pointing at it and a dummy `OPENAI_API_KEY`."""
    folder = tmp_path / "served"
    folder.mkdir()
    served = []
    for number, dialect in enumerate(["chat", "chat", "responses", "responses"]):
        copy = folder / f"{number}-{dialect}.jsonl"
        shutil.copy(OPENAI_LIBRARY / dialect / "text.jsonl", copy)
        served.append(str(copy))
    served.append(str(_refusal(folder)))
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with ServerThread(CassetteServer(served, match_on=None).app()) as url:
        monkeypatch.setenv("OPENAI_BASE_URL", f"{url}/v1")
        yield url


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    pytester.makeini(INI)
    (pytester.path / "cassettes").mkdir()
    pytester.makepyfile(test_inner=INNER)
    return pytester


@pytest.mark.slow
def test_new_openai_cassettes_record_from_the_base_url_and_replay_to_the_same_outcome(
    project: pytest.Pytester, live: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorded = project.runpytest("test_inner.py", "--harness-record", "missing")
    recorded.assert_outcomes(passed=5)
    folder = project.path / "cassettes"
    for name, (provider, synthesized) in RECORDED.items():
        cassette = Cassette(folder / f"{name}.jsonl")
        header = _header(cassette)
        assert (cassette.provider, header.get("synthesized_from")) == (provider, synthesized)
        assert header["source"] == "recorded"
        assert header["request"]["model"] in ("gpt-4.1-mini", "gpt-nope")
    refused = (folder / "chat_refused.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(refused[1])["status"] == 400
    for path in folder.iterdir():  # no credential at any depth, in any file
        text = path.read_text(encoding="utf-8")
        assert KEY not in text and "sk-proj" not in text and "Bearer" not in text
    # Replayed with the API gone and no key: the recordings alone answer, the same way.
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    replayed = project.runpytest("test_inner.py")
    replayed.assert_outcomes(passed=5)


@pytest.mark.slow
def test_a_record_mode_without_openai_api_key_skips_naming_it(project: pytest.Pytester) -> None:
    shutil.copy(OPENAI_LIBRARY / "chat" / "text.jsonl", project.path / "cassettes" / "kept.jsonl")
    project.makepyfile(
        test_keys="""
        import pytest

        @pytest.mark.cassette("kept")
        def test_kept(harness_client):
            pass

        @pytest.mark.cassette("new", sdk="openai")
        def test_new(harness_client):
            pass
        """
    )
    result = project.runpytest("test_keys.py", "--harness-record", "all", "-rs")
    result.assert_outcomes(skipped=2)
    skipped = [line for line in result.outlines if line.startswith("SKIPPED")]
    assert len(skipped) == 2
    assert all("live needs OPENAI_API_KEY, which is not set" in line for line in skipped)
    assert "ANTHROPIC_API_KEY" not in result.stdout.str()


@pytest.mark.slow
def test_a_missing_new_openai_cassette_names_openai_api_key(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_missing="""
        import pytest

        @pytest.mark.cassette("new", sdk="openai")
        def test_new(harness_client):
            pass
        """
    )
    result = project.runpytest("test_missing.py")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "*cassette not found: *new.jsonl (record it with --harness-record=missing and "
            "OPENAI_API_KEY set)*"
        ]
    )
    assert "Traceback" not in result.stdout.str()


@pytest.mark.slow
def test_the_mismatch_hint_of_an_openai_cassette_names_openai_api_key(
    project: pytest.Pytester,
) -> None:
    header, *lines = (OPENAI_LIBRARY / "chat" / "text.jsonl").read_text().splitlines()
    asked = [{"role": "user", "content": "Capital of France?"}]
    kept = {**json.loads(header), "request": {"model": "gpt-4.1-mini", "messages": asked}}
    text = "\n".join([json.dumps(kept), *lines]) + "\n"
    (project.path / "cassettes" / "kept.jsonl").write_text(text, encoding="utf-8")
    project.makepyfile(
        test_mismatch="""
        import pytest

        @pytest.mark.cassette("kept")
        def test_other_question(harness_client):
            harness_client.chat.completions.create(
                model="gpt-4.1-mini",
                messages=[{"role": "user", "content": "Capital of Spain?"}],
                stream=True,
            )
        """
    )
    result = project.runpytest("test_mismatch.py")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*record the cassette again*with OPENAI_API_KEY set)*"])
    assert "ANTHROPIC_API_KEY" not in result.stdout.str()


@pytest.mark.slow
def test_an_sdk_the_header_contradicts_or_none_known_fails_in_one_line(
    project: pytest.Pytester,
) -> None:
    shutil.copy(OPENAI_LIBRARY / "chat" / "text.jsonl", project.path / "cassettes" / "kept.jsonl")
    project.makepyfile(
        test_sdk="""
        import pytest

        @pytest.mark.cassette("kept", sdk="anthropic")
        def test_contradicted(harness_client):
            pass

        @pytest.mark.cassette("kept", sdk="mistral")
        def test_unknown(harness_client):
            pass
        """
    )
    result = project.runpytest("test_sdk.py")
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(
        [
            "*test_contradicted*sdk='anthropic', but the cassettes are openai ones*",
            "*test_unknown*sdk= takes 'anthropic' or 'openai'*",
        ],
        consecutive=False,
    )
    assert "Traceback" not in result.stdout.str()


@pytest.mark.slow
def test_an_openai_recording_client_writes_the_endpoints_provider_and_replays(
    live: str, tmp_path: Path
) -> None:
    """`recording_client_of(sync_kind(<the openai SDK>), ...)`: the key from
    `OPENAI_API_KEY`, the base URL from `OPENAI_BASE_URL`, the cassette `openai-chat`'s,
    the same text replayed."""
    from harness._providers import provider
    from harness._replay.clients import cassette_client, recording_client_of, sync_kind

    path = tmp_path / "recorded.jsonl"
    ask: Any = [{"role": "user", "content": "Capital of France?"}]
    given: tuple[Any, ...] = ("Recorded here", None, None, {"max_retries": 0})
    kind = sync_kind(provider("openai-chat").sdk)
    with recording_client_of(kind, [path], None, None, None, *given) as client:
        stream = client.chat.completions.create(model="gpt-4.1-mini", messages=ask, stream=True)
        recorded = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert recorded == ANSWER
    cassette = Cassette(path)
    assert (cassette.provider, _header(cassette)["request"]["messages"]) == ("openai-chat", ask)
    assert KEY not in path.read_text(encoding="utf-8")
    with cassette_client(path, sdk="openai") as replaying:
        again = replaying.chat.completions.create(model="gpt-4.1-mini", messages=ask, stream=True)
        assert "".join(c.choices[0].delta.content or "" for c in again if c.choices) == ANSWER


def test_an_openai_recording_client_without_the_key_says_which_in_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from harness._exceptions import InputError
    from harness._providers import provider
    from harness._replay.clients import async_kind, recording_client_of

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-not-this-one")
    given: tuple[Any, ...] = ([tmp_path / "x.jsonl"], None, None, None, "d", None, None, {})
    with pytest.raises(InputError, match=r"^OPENAI_API_KEY is not set: recording calls the live"):
        recording_client_of(async_kind(provider("openai-responses").sdk), *given)
    assert not (tmp_path / "x.jsonl").exists()
