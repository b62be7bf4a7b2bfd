"""The pytest plugin's fault rows for dialects whose path, not the body's `stream`, says a
request streams (Bedrock's ConverseStream, `/model/{id}/converse-stream`; Gemini's
`:streamGenerateContent`): `harness_client` serves every stream row to the user's own
streaming code, as docs/pytest-plugin.md promises, and a plain request (`converse`,
`generate_content`) is the one that skips them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import LIBRARY, not_installed
from test_plugin_hosts import fault_rows

from harness import read_cassette
from harness.faults import derive_variants, stream_lines

pytest.importorskip("boto3", reason=not_installed("boto3"))
pytest.importorskip("google.genai", reason=not_installed("google-genai"))

INI = "[pytest]\naddopts = --strict-markers -p no:cacheprovider\nfilterwarnings = error\n"
CASSETTES = {
    "converse": LIBRARY / "bedrock" / "converse" / "two_tools.jsonl",
    "gemini": LIBRARY / "gemini" / "one_tool.jsonl",
}

#: The user's code: boto3's and google-genai's streaming calls, and their plain ones.
APP = """
def converse_stream(client):
    messages = [{"role": "user", "content": [{"text": "Weather in Paris?"}]}]
    stream = client.converse_stream(modelId="m", messages=messages)["stream"]
    return [next(iter(event)) for event in stream]


def converse(client):
    messages = [{"role": "user", "content": [{"text": "Weather in Paris?"}]}]
    return client.converse(modelId="m", messages=messages)["stopReason"]


def gemini_stream(client):
    return list(client.models.generate_content_stream(model="gemini-2.5-flash", contents="Hi"))


def gemini(client):
    return client.models.generate_content(model="gemini-2.5-flash", contents="Hi")


def gemini_stream_retried(client):
    from google.genai import types

    retried = types.HttpOptions(retry_options=types.HttpRetryOptions(attempts=3))
    config = types.GenerateContentConfig(http_options=retried)
    stream = client.models.generate_content_stream
    return list(stream(model="gemini-2.5-flash", contents="Hi", config=config))
"""

TESTS = """
import pytest
from app import converse, converse_stream, gemini, gemini_stream, gemini_stream_retried

@pytest.mark.cassette("converse")
def test_converse_stream(harness_client, fault_variant):
    with fault_variant.expect_failure():
        converse_stream(harness_client)

@pytest.mark.cassette("converse")
def test_converse(harness_client, fault_variant):
    with fault_variant.expect_failure():
        converse(harness_client)

@pytest.mark.cassette("gemini")
def test_gemini_stream(harness_client, fault_variant):
    with fault_variant.expect_failure():
        gemini_stream(harness_client)

@pytest.mark.cassette("gemini")
def test_gemini(harness_client, fault_variant):
    with fault_variant.expect_failure():
        gemini(harness_client)

@pytest.mark.cassette("gemini")
def test_gemini_stream_retried(harness_client, fault_variant):
    with fault_variant.expect_failure():
        gemini_stream_retried(harness_client)
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini(INI)
    (pytester.path / "cassettes").mkdir()
    for name, path in CASSETTES.items():
        shutil.copy(path, pytester.path / "cassettes" / f"{name}.jsonl")
    pytester.makepyfile(app=APP, test_inner=TESTS)
    return pytester


def _rows(path: Path, *, wire: bool) -> set[str]:
    """The names of the cassette's applicable rows that break the stream (`wire=False`),
    or the HTTP exchange around it (`wire=True`)."""
    cassette = read_cassette(path)
    variants = derive_variants(
        stream_lines(path), provider=cassette.provider, header=cassette.header
    )
    return {variant.fault.name for variant in variants if variant.fault.wire is wire}


def _named(verdicts: list[str], verdict: str | None = None) -> set[str]:
    """The rows a test's summary lines (`caught (N): a, b`) name: those of `verdict`, or
    of every line."""
    named: set[str] = set()
    for line in verdicts:
        head, _, names = line.partition(": ")
        if names and (verdict is None or head.startswith(f"{verdict} (")):
            named.update(names.split(", "))
    return named


@pytest.mark.slow
def test_every_stream_row_reaches_the_users_streaming_code(project: pytest.Pytester) -> None:
    """Under the guard each stream row is caught, in the streaming test; in the plain one
    it does not apply, and only the wire rows run."""
    rows = fault_rows(project.runpytest("--harness-strict", "on"))
    for name, path in CASSETTES.items():
        stream_rows, wire_rows = _rows(path, wire=False), _rows(path, wire=True)
        assert stream_rows and stream_rows <= _named(rows[f"test_{name}_stream"], "caught")
        assert _named(rows[f"test_{name}"]) <= wire_rows


@pytest.mark.slow
def test_a_stream_row_fails_the_test_the_users_code_accepts_it_silently(
    project: pytest.Pytester,
) -> None:
    """Without the guard the row's verdict is the SDK's: boto3 raises an exception frame
    and google-genai an error chunk, and neither checks that the stream was finished."""
    chosen = {
        "test_converse_stream": ("exception_mid_stream", "drop_message_stop"),
        "test_gemini_stream": ("server_error_mid_stream", "drop_finish_reason"),
    }
    ids = [f"test_inner.py::{test}[{row}]" for test, rows in chosen.items() for row in rows]
    result = project.runpytest("--harness-strict", "off", *ids)
    result.assert_outcomes(passed=2, failed=2)
    rows = fault_rows(result)
    assert rows["test_converse_stream"] == [
        "caught (1): exception_mid_stream",
        "accepted silently (1): drop_message_stop",
    ]
    assert rows["test_gemini_stream"] == [
        "caught (1): server_error_mid_stream",
        "accepted silently (1): drop_finish_reason",
    ]


@pytest.mark.slow
def test_a_skipped_stream_row_names_what_the_cassettes_provider_answers_a_plain_request_with(
    project: pytest.Pytester,
) -> None:
    chosen = {"test_converse": "drop_message_stop", "test_gemini": "drop_finish_reason"}
    ids = [f"test_inner.py::{test}[{row}]" for test, row in chosen.items()]
    result = project.runpytest(*ids, "-rs")
    result.assert_outcomes(skipped=2)
    for row, answer in zip(
        chosen.values(), ["a Converse answer", "a GenerateContentResponse"], strict=True
    ):
        result.stdout.fnmatch_lines(
            [
                f"SKIPPED [[]1[]] test_inner.py:*: fault {row} breaks a stream, and the code "
                f"made a non-streaming request (answered with {answer})"
            ]
        )
    assert "Message JSON" not in result.stdout.str()


@pytest.mark.slow
def test_a_429_is_recovered_by_a_retry_google_genai_makes_only_when_told(
    project: pytest.Pytester,
) -> None:
    """google-genai retries only with `retry_options`: code without them raises on
    `http_429_then_ok`, told that a retry recovers from it (not that the SDK's own does);
    code that sets them up for its request recovers."""
    ids = [
        f"test_inner.py::{test}[http_429_then_ok]"
        for test in ("test_gemini_stream", "test_gemini_stream_retried")
    ]
    result = project.runpytest(*ids)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "E       AssertionError: gemini_stream raised ClientError: 429 * on "
            "http_429_then_ok: a retry recovers from it (the harness's adapter completes the "
            "stream), the SDK's own where it retries by default, else one the client or the "
            "request sets up"
        ]
    )
    rows = fault_rows(result)
    assert rows["test_gemini_stream"] == ["not recovered (1): http_429_then_ok"]
    assert rows["test_gemini_stream_retried"] == ["caught (1): http_429_then_ok"]
