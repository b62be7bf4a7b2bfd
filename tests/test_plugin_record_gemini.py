"""The pytest plugin's record modes with Gemini cassettes: `harness_client` and
`harness_async_client` (a `genai.Client`, its `aio` face) record `generate_content_stream`,
`generate_content` and a refusal with the key google-genai reads (`GOOGLE_API_KEY`, else
`GEMINI_API_KEY`), sent to `GOOGLE_GEMINI_BASE_URL`; the recordings replay to the same
outcome, hold no key, and a run without either key skips naming both.

The live API is a `harness serve` of library cassettes on 127.0.0.1 (a dummy key), never
Google's.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import GEMINI_LIBRARY, not_installed

from harness import Cassette
from harness._cassette.codec import make_header, write_cassette
from harness._http.hosting import ServerThread
from harness._http.server import CassetteServer

# imported here, so the inner runs (in this process) share its classes with the plugin
pytest.importorskip("google.genai", reason=not_installed("google.genai"))

INI = "[pytest]\naddopts = --strict-markers -p no:cacheprovider\nfilterwarnings = error\n"
KEY = "AIzaSyDUMMY-plugin-record-gemini-0123456"
ANSWER = "Paris is the capital of France."
KEYS = ("GEMINI_API_KEY", "GOOGLE_API_KEY")

INNER = f"""
import asyncio

import pytest
from google import genai
from google.genai import errors

ANSWER = {ANSWER!r}


@pytest.mark.cassette("stream", sdk="google.genai")
def test_stream(harness_client):
    assert isinstance(harness_client, genai.Client)
    chunks = harness_client.models.generate_content_stream(
        model="gemini-2.5-flash", contents="Capital of France?"
    )
    assert "".join(chunk.text or "" for chunk in chunks) == ANSWER


async def plain(client):
    try:
        answer = await client.aio.models.generate_content(
            model="gemini-2.5-flash", contents="Capital of France?"
        )
    finally:
        await client.aio.aclose()
    return answer.text


@pytest.mark.cassette("plain", sdk="google.genai")
def test_plain(harness_async_client):
    assert asyncio.run(plain(harness_async_client)) == ANSWER


@pytest.mark.cassette("refused", sdk="google.genai")
def test_refused(harness_client):
    with pytest.raises(errors.ClientError, match="model_not_found_here"):
        list(harness_client.models.generate_content_stream(model="gemini-nope", contents="hi"))
"""


def _refusal(folder: Path) -> Path:
    """A Gemini cassette holding a 400 answer, as the fake API's answer to the last request."""
    path = folder / "refused.jsonl"
    error = {
        "error": {"code": 400, "message": "model_not_found_here", "status": "INVALID_ARGUMENT"}
    }
    line = {"harness": "http_error", "status": 400, "headers": {}, "body": error}
    write_cassette(path, [line], header=make_header("a 400", "synthetic", provider="gemini"))
    return path


@pytest.fixture
def live(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The "live API": a library cassette served twice (a stream, a plain answer), then a
    400, with `GOOGLE_GEMINI_BASE_URL` pointing at it and a dummy `GEMINI_API_KEY`."""
    folder = tmp_path / "served"
    folder.mkdir()
    served = []
    for number in range(2):
        copy = folder / f"{number}.jsonl"
        shutil.copy(GEMINI_LIBRARY / "text.jsonl", copy)
        served.append(str(copy))
    served.append(str(_refusal(folder)))
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    with ServerThread(CassetteServer(served, match_on=None).app()) as url:
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", url)
        yield url


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    for variable in (*KEYS, "GOOGLE_GEMINI_BASE_URL", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(variable, raising=False)
    pytester.makeini(INI)
    (pytester.path / "cassettes").mkdir()
    pytester.makepyfile(test_inner=INNER)
    return pytester


@pytest.mark.slow
def test_new_gemini_cassettes_record_from_the_base_url_and_replay_to_the_same_outcome(
    project: pytest.Pytester, live: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorded = project.runpytest("test_inner.py", "--harness-record", "missing")
    recorded.assert_outcomes(passed=3)
    folder = project.path / "cassettes"
    for name in ("stream", "plain", "refused"):
        cassette = Cassette(folder / f"{name}.jsonl")
        header = cassette.header or {}
        assert (cassette.provider, header["source"]) == ("gemini", "recorded")
        assert header["request"]["model"] in ("gemini-2.5-flash", "gemini-nope")
    assert (Cassette(folder / "plain.jsonl").header or {}).get("synthesized_from") == "message"
    refused = (folder / "refused.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(refused[1])["status"] == 400
    for path in folder.iterdir():  # no credential at any depth, in any file
        text = path.read_text(encoding="utf-8")
        assert KEY not in text and "AIza" not in text
    # Replayed with the API gone and no key: the recordings alone answer, the same way.
    monkeypatch.delenv("GEMINI_API_KEY")
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", "http://127.0.0.1:9")
    replayed = project.runpytest("test_inner.py")
    replayed.assert_outcomes(passed=3)


@pytest.mark.slow
def test_google_api_key_records_too(
    project: pytest.Pytester, live: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GEMINI_API_KEY")
    monkeypatch.setenv("GOOGLE_API_KEY", KEY)
    result = project.runpytest("test_inner.py", "--harness-record", "all", "-k", "stream")
    result.assert_outcomes(passed=1, deselected=2)
    assert KEY not in (project.path / "cassettes" / "stream.jsonl").read_text(encoding="utf-8")


@pytest.mark.slow
def test_a_record_mode_without_a_gemini_key_skips_naming_both(project: pytest.Pytester) -> None:
    shutil.copy(GEMINI_LIBRARY / "text.jsonl", project.path / "cassettes" / "kept.jsonl")
    project.makepyfile(
        test_keys="""
        import pytest

        @pytest.mark.cassette("kept")
        def test_kept(harness_client):
            pass

        @pytest.mark.cassette("new", sdk="google.genai")
        def test_new(harness_client):
            pass
        """
    )
    result = project.runpytest("test_keys.py", "--harness-record", "all", "-rs")
    result.assert_outcomes(skipped=2)
    skipped = [line for line in result.outlines if line.startswith("SKIPPED")]
    assert len(skipped) == 2
    said = "live needs GEMINI_API_KEY or GOOGLE_API_KEY, which is not set"
    assert all(said in line for line in skipped)
    assert "ANTHROPIC_API_KEY" not in result.stdout.str()
    assert not (project.path / "cassettes" / "new.jsonl").exists()


@pytest.mark.slow
def test_a_marker_request_is_not_recorded_for_gemini_in_one_line(
    project: pytest.Pytester, live: str
) -> None:
    project.makepyfile(
        test_request="""
        import pytest

        @pytest.mark.cassette("new", sdk="google.genai", request={"model": "m", "contents": []})
        def test_new(harness_replay):
            pass
        """
    )
    result = project.runpytest("test_request.py", "--harness-record", "missing")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "*record mode missing: *new.jsonl is a cassette of Gemini: the plugin records "
            "those through harness_client or harness_async_client alone*"
        ]
    )
    assert "Traceback" not in result.stdout.str()
    assert not (project.path / "cassettes" / "new.jsonl").exists()
