"""The pytest plugin on Bedrock and Vertex: `harness_client` and `harness_async_client`
are `anthropic.AnthropicBedrock` / `AnthropicVertex` (the marker's `host=`, the ini option
`harness_host`, `--harness-host`, else the cassette header's `host`), answered from the
same cassettes as the direct API's client, every fault row served through them; the
record modes go live with the user's AWS or Google credentials (offline here: a
`harness serve` stands in for the cloud), skip without them, and store none of them."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import LIBRARY, not_installed

from harness import Cassette, read_cassette, write_cassette
from harness._http.hosting import ServerThread
from harness._http.server import CassetteServer
from harness.builder import StreamBuilder

anthropic = pytest.importorskip("anthropic")
pytest.importorskip("botocore", reason=not_installed("botocore"))

INI = "[pytest]\naddopts = --strict-markers -p no:cacheprovider\nfilterwarnings = error\n"

#: The user's code: built on the hosted clients (the type it is handed says so).
APP = """
import anthropic


def summarize(client: anthropic.AnthropicBedrock | anthropic.AnthropicVertex) -> str:
    with client.messages.stream(
        model="claude-sonnet-5", max_tokens=64, messages=[{"role": "user", "content": "Sum up"}]
    ) as stream:
        return "".join(stream.text_stream)


def classify(client: anthropic.AnthropicBedrock | anthropic.AnthropicVertex) -> str:
    message = client.messages.create(
        model="claude-sonnet-5", max_tokens=8, messages=[{"role": "user", "content": "Label"}]
    )
    return message.content[0].text


async def agent_step(client: anthropic.AsyncAnthropicBedrock | anthropic.AsyncAnthropicVertex):
    stream = await client.messages.create(
        model="claude-sonnet-5", max_tokens=64, messages=[{"role": "user", "content": "Go"}],
        stream=True,
    )
    return [event.type async for event in stream]
"""

STREAM_PATHS = {
    "bedrock": "/model/claude-sonnet-5/invoke-with-response-stream",
    "vertex": "/v1/projects/stream-harness/locations/us-east5/publishers/anthropic/models/"
    "claude-sonnet-5:streamRawPredict",
    "direct": "/v1/messages",
}
PLAIN_PATHS = {
    "bedrock": "/model/claude-sonnet-5/invoke",
    "vertex": STREAM_PATHS["vertex"].replace(":streamRawPredict", ":rawPredict"),
    "direct": "/v1/messages",
}
CLASSES = {"bedrock": "AnthropicBedrock", "vertex": "AnthropicVertex", "direct": "Anthropic"}

HOSTED_TESTS = """
import asyncio
import anthropic
import pytest
from app import agent_step, classify, summarize

STREAM_PATHS = {stream_paths!r}
PLAIN_PATHS = {plain_paths!r}
CLASSES = {classes!r}

@pytest.mark.parametrize("host", ["bedrock", "vertex", "direct"])
def test_summary(host, request):
    request.applymarker(pytest.mark.cassette("two_tools", host=host))
    client = request.getfixturevalue("harness_client")
    sent = request.getfixturevalue("harness_requests")
    assert type(client).__name__ == CLASSES[host]
    assert summarize(client) == "I'll check the weather and the local time in Lisbon."
    assert [found.path for found in sent] == [STREAM_PATHS[host]]
    assert sent[0].json["model"] == "claude-sonnet-5" and sent[0].json["stream"] is True

@pytest.mark.parametrize("host", ["bedrock", "vertex"])
def test_message(host, request):
    request.applymarker(pytest.mark.cassette("text_only", host=host))
    client = request.getfixturevalue("harness_client")
    sent = request.getfixturevalue("harness_requests")
    assert classify(client) == "The file has three sections."
    assert [found.path for found in sent] == [PLAIN_PATHS[host]]

@pytest.mark.parametrize("host", ["bedrock", "vertex"])
def test_async(host, request):
    request.applymarker(pytest.mark.cassette("text_only", host=host))
    client = request.getfixturevalue("harness_async_client")
    assert type(client).__name__ == "Async" + CLASSES[host]
    types = asyncio.run(agent_step(client))
    assert types[0] == "message_start" and types[-1] == "message_stop"
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini(INI)
    (pytester.path / "cassettes").mkdir()
    for name in ("text_only", "two_tools"):
        shutil.copy(LIBRARY / f"{name}.jsonl", pytester.path / "cassettes")
    pytester.makepyfile(app=APP)
    return pytester


def hosted_tests() -> str:
    return HOSTED_TESTS.format(stream_paths=STREAM_PATHS, plain_paths=PLAIN_PATHS, classes=CLASSES)


@pytest.mark.slow
def test_the_markers_host_serves_the_users_code_through_the_hosts_client(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(test_inner=hosted_tests())
    project.runpytest().assert_outcomes(passed=7)


FAULT_TESTS = """
import asyncio
import anthropic
import pytest
from app import agent_step, summarize

@pytest.mark.cassette("text_only", host="bedrock")
def test_bedrock(harness_client, fault_variant):
    assert isinstance(harness_client, anthropic.AnthropicBedrock)
    with fault_variant.expect_failure():
        summarize(harness_client)

@pytest.mark.cassette("text_only", host="vertex")
def test_vertex(harness_client, fault_variant):
    assert isinstance(harness_client, anthropic.AnthropicVertex)
    with fault_variant.expect_failure():
        summarize(harness_client)

@pytest.mark.cassette("text_only")
def test_direct(harness_client, fault_variant):
    with fault_variant.expect_failure():
        summarize(harness_client)

@pytest.mark.cassette("bedrock_text_only", host="direct")
def test_direct_of_bedrock(harness_client, fault_variant):
    assert type(harness_client) is anthropic.Anthropic
    with fault_variant.expect_failure():
        summarize(harness_client)

@pytest.mark.cassette("bedrock_text_only")
def test_bedrock_of_bedrock(harness_client, fault_variant):
    assert isinstance(harness_client, anthropic.AnthropicBedrock)
    with fault_variant.expect_failure():
        summarize(harness_client)

@pytest.mark.cassette("text_only", host="bedrock")
def test_async_bedrock(harness_async_client, fault_variant):
    assert isinstance(harness_async_client, anthropic.AsyncAnthropicBedrock)
    with fault_variant.expect_failure():
        asyncio.run(agent_step(harness_async_client))

@pytest.mark.cassette("text_only")
def test_async_direct(harness_async_client, fault_variant):
    with fault_variant.expect_failure():
        asyncio.run(agent_step(harness_async_client))
"""


#: The rows a stream in Bedrock's event-stream frames adds to the catalogue.
BINARY_ROWS = {
    "frame_prelude_crc",
    "frame_message_crc",
    "frame_cut_in_prelude",
    "frame_cut_in_payload",
    "exception_mid_stream",
    "unknown_message_type",
}


def verdicts(lines: list[str]) -> dict[str, set[str]]:
    """A test's fault rows by verdict (`caught (2): a, b` -> {"caught": {"a", "b"}})."""
    found: dict[str, set[str]] = {}
    for line in lines:
        verdict, _, names = line.partition(": ")
        found[verdict.rpartition(" (")[0]] = set(names.split(", "))
    return found


def without_binary(lines: list[str]) -> dict[str, set[str]]:
    return {
        verdict: names - BINARY_ROWS
        for verdict, names in verdicts(lines).items()
        if names - BINARY_ROWS
    }


def binary(lines: list[str]) -> set[str]:
    return set().union(*verdicts(lines).values()) & BINARY_ROWS


def fault_rows(result: pytest.RunResult) -> dict[str, list[str]]:
    """The end of the run's fault rows: each test function's verdict lines."""
    rows: dict[str, list[str]] = {}
    lines = result.outlines[
        result.outlines.index(
            next(line for line in result.outlines if "stream-harness fault rows" in line)
        )
        + 1 :
    ]
    test = ""
    for line in lines:
        if line.startswith("test_inner.py::"):
            test = line.removeprefix("test_inner.py::")
            rows[test] = []
        elif line.startswith("  ") and test:
            rows[test].append(line.strip())
        else:
            break
    return rows


@pytest.mark.slow
@pytest.mark.parametrize("strict", ["off", "on"])
def test_every_fault_row_reaches_the_hosts_client_as_it_reaches_the_apis(
    project: pytest.Pytester, strict: str
) -> None:
    source = read_cassette(LIBRARY / "text_only.jsonl")
    write_cassette(
        project.path / "cassettes" / "bedrock_text_only.jsonl",
        [line.data for line in source.lines()],
        header={**(source.header or {}), "host": "bedrock"},
    )
    project.makepyfile(test_inner=FAULT_TESTS)
    result = project.runpytest("--harness-strict", strict)
    rows = fault_rows(result)
    # the rows of the events end alike everywhere; a client reading Bedrock's frames gets
    # their binary rows too (the marker's host= or the header's), the direct API none
    assert rows["test_vertex"] == rows["test_direct"] == rows["test_direct_of_bedrock"]
    assert without_binary(rows["test_bedrock"]) == verdicts(rows["test_direct"])
    assert rows["test_bedrock_of_bedrock"] == rows["test_bedrock"]
    assert without_binary(rows["test_async_bedrock"]) == verdicts(rows["test_async_direct"])
    assert binary(rows["test_bedrock"]) == binary(rows["test_async_bedrock"]) == BINARY_ROWS
    caught = rows["test_direct"][0]
    assert caught.startswith("caught (")
    if strict == "on":  # the guard catches every stream row on every host
        assert "accepted silently" not in " ".join(rows["test_bedrock"])
    else:
        assert any(line.startswith("accepted silently") for line in rows["test_bedrock"])


CHOSEN_TESTS = """
import pytest

@pytest.mark.cassette("text_only")
def test_default(harness_client):
    print("served:", type(harness_client).__name__)

@pytest.mark.cassette("text_only", host="vertex")
def test_marker(harness_client):
    print("served:", type(harness_client).__name__)

@pytest.mark.cassette("on_vertex")
def test_header(harness_client):
    print("served:", type(harness_client).__name__)

@pytest.mark.cassette("on_vertex", host="direct")
def test_header_overridden(harness_client):
    print("served:", type(harness_client).__name__)

@pytest.mark.cassette("chat")
def test_openai(harness_client):
    print("served:", type(harness_client).__name__)
"""


def served(result: pytest.RunResult) -> dict[str, str]:
    """Each test's client class, as it printed it (`-s`), in the order they ran."""
    names = re.findall(r"served: (\w+)", result.stdout.str())
    return dict(zip(["default", "marker", "header", "overridden", "openai"], names, strict=True))


@pytest.mark.slow
def test_the_host_is_the_command_lines_else_the_markers_else_the_inis_else_the_headers(
    project: pytest.Pytester,
) -> None:
    cassettes = project.path / "cassettes"
    source = read_cassette(cassettes / "text_only.jsonl")
    header = {**(source.header or {}), "host": "vertex"}
    write_cassette(
        cassettes / "on_vertex.jsonl", [line.data for line in source.lines()], header=header
    )
    shutil.copy(LIBRARY / "openai" / "chat" / "text.jsonl", cassettes / "chat.jsonl")
    project.makepyfile(test_inner=CHOSEN_TESTS)
    result = project.runpytest("-s")
    result.assert_outcomes(passed=5)
    assert served(result) == {
        "default": "Anthropic",
        "marker": "AnthropicVertex",
        "header": "AnthropicVertex",
        "overridden": "Anthropic",
        "openai": "OpenAI",
    }
    project.makeini(INI + "harness_host = bedrock\n")
    assert served(project.runpytest("-s")) == {
        "default": "AnthropicBedrock",
        "marker": "AnthropicVertex",
        "header": "AnthropicBedrock",  # the run's host, over the header's
        "overridden": "Anthropic",
        "openai": "OpenAI",  # a dialect not served on Bedrock keeps its API
    }
    assert served(project.runpytest("-s", "--harness-host", "direct")) == {
        "default": "Anthropic",
        "marker": "Anthropic",
        "header": "Anthropic",
        "overridden": "Anthropic",
        "openai": "OpenAI",
    }


@pytest.mark.slow
def test_a_host_not_known_or_not_serving_the_cassettes_is_one_line(
    project: pytest.Pytester,
) -> None:
    shutil.copy(LIBRARY / "openai" / "chat" / "text.jsonl", project.path / "cassettes/chat.jsonl")
    project.makepyfile(
        test_inner="""
        import pytest

        @pytest.mark.cassette("text_only", host="azure")
        def test_unknown(harness_client):
            pass

        @pytest.mark.cassette("chat", host="bedrock")
        def test_not_served(harness_client):
            pass
        """
    )
    result = project.runpytest()
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(
        [
            "*test_unknown: @pytest.mark.cassette host= takes direct, bedrock, vertex, not 'azure'",
            "*test_not_served: @pytest.mark.cassette host='bedrock': openai cassettes are served "
            "on no such host",
        ]
    )
    assert "Traceback" not in result.stdout.str()
    usage = project.runpytest("--harness-host", "azure")
    assert usage.ret == pytest.ExitCode.USAGE_ERROR
    usage.stderr.fnmatch_lines(["*--harness-host takes direct, bedrock, vertex, not 'azure'"])


# -- record modes, offline: a `harness serve` stands in for Bedrock and Vertex ---------------

RECORD_TESTS = """
import pytest
from app import classify, summarize

CLASSES = {classes!r}

@pytest.mark.cassette("new_stream", host={host!r})
def test_stream(harness_client, harness_requests):
    assert type(harness_client).__name__ == CLASSES[{host!r}]
    assert summarize(harness_client) == "Recorded live"
    assert harness_requests[0].json["model"] == "claude-sonnet-5"

@pytest.mark.cassette("new_message", host={host!r})
def test_message(harness_client):
    assert classify(harness_client) == "Recorded live"
"""
#: What the user's cloud credentials are here (found where the SDK finds them).
AWS_KEY_ID = "AKIDHOSTRECORDING"
AWS_SECRET = "host-recording-secret-key"
GOOGLE_TOKEN = "ya29.host-recording-token"
CLOUD_VARIABLES = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_PROFILE",
    "AWS_BEARER_TOKEN_BEDROCK",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "ANTHROPIC_BEDROCK_BASE_URL",
    "CLOUD_ML_REGION",
    "ANTHROPIC_VERTEX_PROJECT_ID",
    "ANTHROPIC_VERTEX_BASE_URL",
)


def record_tests(host: str) -> str:
    return RECORD_TESTS.format(classes=CLASSES, host=host)


@pytest.fixture
def no_cloud(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No AWS or Google credentials anywhere: not in the environment, not in AWS's files,
    no instance metadata; Google's default credentials find none."""
    google_auth = pytest.importorskip("google.auth")
    from google.auth.exceptions import DefaultCredentialsError

    for name in CLOUD_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")

    def no_credentials(**options: Any) -> Any:
        raise DefaultCredentialsError("no default credentials here")  # type: ignore[no-untyped-call]

    monkeypatch.setattr(google_auth, "default", no_credentials)


@pytest.fixture
def cloud(
    no_cloud: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Iterator[CassetteServer]:
    """The user's credentials (an AWS key pair and region; a Google token, project and
    region), and both clouds' base URLs pointing at a server answering "Recorded live"."""
    import google.auth
    from google.oauth2.credentials import Credentials

    live = tmp_path / "live.jsonl"
    StreamBuilder().text(0, "Recorded", " live").stop().write(live, "the cloud's answer")
    server = CassetteServer([str(live), str(live)], match_on=None)  # one a test
    with ServerThread(server.app()) as url:
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", AWS_KEY_ID)
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", AWS_SECRET)
        monkeypatch.setenv("AWS_REGION", "eu-west-1")
        monkeypatch.setenv("ANTHROPIC_BEDROCK_BASE_URL", url)
        monkeypatch.setenv("CLOUD_ML_REGION", "us-east5")
        monkeypatch.setenv("ANTHROPIC_VERTEX_PROJECT_ID", "a-project")
        monkeypatch.setenv("ANTHROPIC_VERTEX_BASE_URL", url + "/v1")
        token = Credentials(token=GOOGLE_TOKEN)  # type: ignore[no-untyped-call]
        monkeypatch.setattr(google.auth, "default", lambda **options: (token, None))
        yield server


@pytest.mark.slow
@pytest.mark.parametrize(
    ("host", "why"),
    [
        (
            "bedrock",
            "through Anthropic on Bedrock: no AWS credentials found: a recording calls "
            "Bedrock live (and is billed); set AWS_BEARER_TOKEN_BEDROCK, or credentials the AWS "
            "CLI finds (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE), to opt in",
        ),
        (
            "vertex",
            "through Anthropic on Vertex: CLOUD_ML_REGION is not set: a recording calls "
            "Vertex live (and is billed); set it to opt in",
        ),
    ],
)
def test_recording_on_a_host_without_its_credentials_skips_saying_what_to_set(
    project: pytest.Pytester, no_cloud: None, host: str, why: str
) -> None:
    project.makepyfile(test_inner=record_tests(host))
    result = project.runpytest("--harness-record=missing", "-rs")
    result.assert_outcomes(skipped=2)
    result.stdout.fnmatch_lines([f"*record mode missing: recording */new_stream.jsonl live {why}"])
    assert not (project.path / "cassettes" / "new_stream.jsonl").exists()
    # replaying, the missing cassette's hint says how it is recorded on the host: no key
    # of the API's opts in there, so ANTHROPIC_API_KEY is not named
    replayed = project.runpytest()
    replayed.assert_outcomes(errors=2)
    named = CLASSES[host].removeprefix("Anthropic")
    replayed.stdout.fnmatch_lines(
        [
            "*cassette not found: */new_stream.jsonl (record it with --harness-record=missing, "
            f"live through Anthropic on {named} with your own credentials, found where its SDK "
            "finds them)"
        ]
    )
    assert "ANTHROPIC_API_KEY" not in replayed.stdout.str()


@pytest.mark.slow
def test_recording_on_vertex_without_google_credentials_says_how_to_get_them(
    project: pytest.Pytester, no_cloud: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLOUD_ML_REGION", "us-east5")
    project.makepyfile(test_inner=record_tests("vertex"))
    result = project.runpytest("--harness-record=missing", "-rs")
    result.assert_outcomes(skipped=2)
    result.stdout.fnmatch_lines(
        [
            "*live through Anthropic on Vertex: no Google credentials found: *; run gcloud auth "
            "application-default login, or set GOOGLE_APPLICATION_CREDENTIALS, to opt in"
        ]
    )


@pytest.mark.slow
@pytest.mark.parametrize("host", ["bedrock", "vertex"])
def test_recording_on_a_host_goes_through_its_client_with_the_users_credentials(
    project: pytest.Pytester, cloud: CassetteServer, host: str
) -> None:
    project.makepyfile(test_inner=record_tests(host))
    project.runpytest("--harness-record=missing").assert_outcomes(passed=2)
    vertex = "/v1/projects/a-project/locations/us-east5/publishers/anthropic/models/"
    live_paths = {
        "bedrock": [STREAM_PATHS["bedrock"], PLAIN_PATHS["bedrock"]],
        "vertex": [
            f"{vertex}claude-sonnet-5:streamRawPredict",
            f"{vertex}claude-sonnet-5:rawPredict",
        ],
    }
    assert [request.path for request in cloud.replayer.requests] == live_paths[host]
    for name in ("new_stream", "new_message"):
        path = project.path / "cassettes" / f"{name}.jsonl"
        header = Cassette(path).header
        assert header is not None
        assert header["host"] == host
        assert header["request"]["model"] == "claude-sonnet-5"  # the path's, put back
        assert header["request"]["messages"][0]["role"] == "user"
        text = path.read_text()
        for secret in (AWS_KEY_ID, AWS_SECRET, GOOGLE_TOKEN, "Signature="):
            assert secret not in text
    # replayed now, through the host the headers name, with no credentials needed
    project.makepyfile(test_inner=record_tests(host).replace(f", host={host!r}", ""))
    project.runpytest().assert_outcomes(passed=2)
    assert len(cloud.replayer.requests) == 2
