"""Bedrock's ConverseStream (`bedrock-converse`) through real boto3: `harness serve` and
`cassette_client` answer `converse_stream` and `converse` as Bedrock does, a model id
holding a `/` (an ARN, which boto3 sends as `%2F`) as any other, and what the adapter
reads rather than refuses (docs/bedrock-converse.md).

The contract every provider keeps (its parts, its table, its catalogue against the
library) is `tests/test_providers.py`, `test_faults.py` and `test_conform.py`'s, which
iterate the registry; here is what only this dialect has.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import boto3_runtime, not_installed

import harness
from harness import StreamProtocolError
from harness._exceptions import APIErrorEvent, InputError
from harness._http.hosting import ServerThread
from harness._http.server import CassetteServer
from harness._providers.bedrock_converse.adapter import ConverseAdapter, to_model_events
from harness._providers.bedrock_converse.interop import answer_lines, stream_body, stream_lines
from harness_cli.main import cli

boto3 = pytest.importorskip("boto3", reason=not_installed("boto3"))
botocore_exceptions = pytest.importorskip("botocore.exceptions")

LIBRARY = Path(__file__).resolve().parent.parent / "cassettes" / "bedrock" / "converse"
MODEL = "anthropic.claude-sonnet-4-5-20250929-v1:0"
#: Model ids: a foundation model's, and an application inference profile's ARN, whose
#: `/` boto3 sends as `%2F` (the model one segment of the path).
MODELS = {
    "plain": MODEL,
    "arn": "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3d4e5f6",
}
MESSAGES: Any = [{"role": "user", "content": [{"text": "Weather in Paris?"}]}]


def _lines(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (LIBRARY / name).read_text().splitlines()[1:]]


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    server = CassetteServer([str(LIBRARY), str(LIBRARY / "errors")], match_on=None)
    with ServerThread(server.app()) as url:
        yield url


@pytest.fixture
def clients(served: str) -> Iterator[Callable[[str], Any]]:
    """A boto3 client at the server naming cassette `name`, each closed after the test
    (its connection pool's sockets with it)."""
    made: list[Any] = []

    def named(name: str) -> Any:
        client = boto3_runtime(served)

        def header(request: Any, **_: Any) -> None:
            request.headers["x-harness-cassette"] = name

        client.meta.events.register("before-sign.bedrock-runtime.*", header)
        made.append(client)
        return client

    yield named
    for client in made:
        client.close()


@pytest.mark.slow
def test_serve_answers_converse_stream_with_the_cassettes_events(
    clients: Callable[[str], Any],
) -> None:
    client = clients("tool_use")
    answer = client.converse_stream(modelId=MODEL, messages=MESSAGES)
    assert list(answer["stream"]) == _lines("tool_use.jsonl")  # Bedrock's `p` dropped


def test_serve_answers_converse_with_the_answer_the_events_fold_into(
    clients: Callable[[str], Any],
) -> None:
    client = clients("tool_use")
    answer = client.converse(modelId=MODEL, messages=MESSAGES)
    assert answer["stopReason"] == "tool_use"
    assert answer["output"]["message"]["content"] == [
        {"text": "Let me check the weather."},
        {
            "toolUse": {
                "toolUseId": "tooluse_Weather01",
                "name": "get_weather",
                "input": {"city": "Paris"},
            }
        },
    ]
    assert answer["usage"]["totalTokens"] == 37


@pytest.mark.slow
def test_serve_sends_an_exception_line_as_the_exception_boto3_raises(
    clients: Callable[[str], Any],
) -> None:
    client = clients("throttling_exception")
    stream = client.converse_stream(modelId=MODEL, messages=MESSAGES)["stream"]
    with pytest.raises(botocore_exceptions.EventStreamError) as raised:
        try:
            list(stream)
        finally:
            stream.close()  # its connection, left mid-body, closed now rather than by the GC
    assert raised.value.response["Error"] == {
        "Code": "throttlingException",
        "Message": "Too many requests.",
    }
    with pytest.raises(botocore_exceptions.ClientError) as plain:
        clients("throttling_exception").converse(modelId=MODEL, messages=MESSAGES)
    assert plain.value.response["Error"]["Code"] == "ThrottlingException"


@pytest.mark.parametrize("model", list(MODELS.values()), ids=list(MODELS))
def test_a_cassette_client_is_a_bedrock_runtime_client_answered_in_process(model: str) -> None:
    client: Any = harness.cassette_client(str(LIBRARY / "two_tools.jsonl"), max_retries=0)
    events = list(client.converse_stream(modelId=model, messages=MESSAGES)["stream"])
    assert events == _lines("two_tools.jsonl")
    [sent] = harness.captured_requests(client)
    assert sent.path == f"/model/{model.replace('/', '%2F')}/converse-stream"  # one segment
    assert sent.json["model"] == model and sent.json["stream"] is True
    assert sent.json["messages"] == MESSAGES
    assert "wJalrXUtnFEMI" not in json.dumps(sent.headers)


@pytest.mark.parametrize("model", list(MODELS.values()), ids=list(MODELS))
def test_strict_refuses_a_broken_stream_whatever_the_model_id(model: str) -> None:
    client: Any = harness.cassette_client(str(LIBRARY / "errors" / "invalid_tool_json.jsonl"))
    stream = harness.strict(client).converse_stream(modelId=model, messages=MESSAGES)["stream"]
    with pytest.raises(StreamProtocolError) as raised:
        list(stream)
    assert raised.value.code == "invalid_tool_json"


@pytest.mark.parametrize("model", list(MODELS.values()), ids=list(MODELS))
def test_serve_answers_a_model_id_holding_a_slash_as_any_other(
    clients: Callable[[str], Any], model: str
) -> None:
    client = clients("tool_use")
    answer = client.converse_stream(modelId=model, messages=MESSAGES)
    assert list(answer["stream"]) == _lines("tool_use.jsonl")
    assert client.converse(modelId=model, messages=MESSAGES)["stopReason"] == "tool_use"


def test_a_cassette_clients_credentials_are_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing is read from the user's AWS configuration: a profile that does not exist
    and a config file that cannot be read change nothing."""
    monkeypatch.setenv("AWS_PROFILE", "no-such-profile")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/config")
    client: Any = harness.cassette_client(str(LIBRARY / "text.jsonl"))
    answer = client.converse(modelId=MODEL, messages=MESSAGES)
    assert answer["output"]["message"]["content"] == [{"text": "Paris is the capital of France."}]


#: Settings botocore reads from the environment, each changing what a client does: too
#: few attempts for a 429 to be retried, or a value botocore refuses.
HOSTILE_AWS_SETTINGS = {
    "too few attempts": {"AWS_MAX_ATTEMPTS": "1", "AWS_RETRY_MODE": "legacy"},
    "values botocore refuses": {
        "AWS_MAX_ATTEMPTS": "abc",
        "AWS_RETRY_MODE": "bogus",
        "AWS_DEFAULTS_MODE": "bogus",
        "AWS_REQUEST_CHECKSUM_CALCULATION": "bogus",
        "AWS_RESPONSE_CHECKSUM_VALIDATION": "bogus",
        "AWS_ACCOUNT_ID_ENDPOINT_MODE": "bogus",
        "AWS_S3_US_EAST_1_REGIONAL_ENDPOINT": "bogus",
        "AWS_ENDPOINT_URL_BEDROCK_RUNTIME": "http://nowhere.invalid",
    },
}


@pytest.mark.parametrize("settings", HOSTILE_AWS_SETTINGS.values(), ids=HOSTILE_AWS_SETTINGS)
def test_a_cassette_client_reads_no_aws_setting_from_the_environment(
    settings: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its session reads its settings from an empty environment: the 429-then-ok row
    recovers, and the good stream is read, as on a machine without them."""
    good = LIBRARY / "two_tools.jsonl"
    written = CliRunner().invoke(cli, ["faults", str(good), "--out", str(tmp_path)])
    assert written.exit_code == 0, written.output
    for name, value in settings.items():
        monkeypatch.setenv(name, value)
    retried: Any = harness.cassette_client(str(tmp_path / "two_tools.http_429_then_ok"))
    events = list(retried.converse_stream(modelId=MODEL, messages=MESSAGES)["stream"])
    assert events == _lines("two_tools.jsonl")
    assert [sent.path for sent in harness.captured_requests(retried)] == [
        f"/model/{MODEL}/converse-stream"
    ] * 2
    plain: Any = harness.cassette_client(str(LIBRARY / "text.jsonl"))
    answer = plain.converse(modelId=MODEL, messages=MESSAGES)
    assert answer["output"]["message"]["content"] == [{"text": "Paris is the capital of France."}]


def test_boto3_has_no_async_client() -> None:
    with pytest.raises(InputError, match="boto3 has no async client"):
        harness.async_cassette_client(str(LIBRARY / "text.jsonl"))


def _adapt(lines: list[dict[str, Any]], **policy: Any) -> list[Any]:
    return list(to_model_events(lines, **policy))


START: Any = {"messageStart": {"role": "assistant"}}
END_TURN: Any = {"messageStop": {"stopReason": "end_turn"}}


def test_what_is_read_and_not_refused() -> None:
    lines = [
        START,
        {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": ""}, "p": "abc"}},
        {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "Hi"}}},
        {"contentBlockStop": {"contentBlockIndex": 0}},
        {"contentBlockStop": {"contentBlockIndex": 7}},  # a stop for no open block
        END_TURN,
    ]
    assert [event.type for event in _adapt(lines)] == ["text", "done"]
    start = {
        "contentBlockStart": {
            "contentBlockIndex": 0,
            "start": {"toolUse": {"toolUseId": "t", "name": "n"}},
        }
    }
    empty = {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"toolUse": {"input": ""}}}}
    stop = {"contentBlockStop": {"contentBlockIndex": 0}}
    events = _adapt([START, start, empty, stop, {"messageStop": {"stopReason": "tool_use"}}])
    assert events[0].call.input == {}


@pytest.mark.skipif(bool(not_installed("botocore")), reason=str(not_installed("botocore")))
def test_each_member_of_boto3s_model_is_read_or_refused_as_the_page_says() -> None:
    """Every member botocore's `ConverseStreamOutput` lists (the installed release's model):
    a delta of any kind but `text` and `toolUse` passed over at a text block and refused
    at a client tool block; a start of any kind but `toolUse` a block passed over; every
    stop reason but `end_turn` and `tool_use` refused; every field of `metadata` and of
    `messageStop` beside the reason passed over (docs/bedrock-converse.md)."""
    import botocore.loaders

    shapes = botocore.loaders.create_loader().load_service_model("bedrock-runtime", "service-2")
    shapes = shapes["shapes"]
    deltas = set(shapes["ContentBlockDelta"]["members"]) - {"text", "toolUse"}
    # what boto3 1.40, the lowest allowed, lists (later releases add `image`)
    assert {"toolResult", "reasoningContent", "citation"} <= deltas
    use = {"toolUse": {"toolUseId": "t", "name": "n"}}
    for kind in sorted(deltas):
        other = {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {kind: {}}}}
        text = {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "Hi"}}}
        assert [e.type for e in _adapt([START, text, other, END_TURN])] == ["text", "done"]
        opened = {"contentBlockStart": {"contentBlockIndex": 0, "start": use}}
        with pytest.raises(StreamProtocolError, match=f"a {kind} delta for tool block 0"):
            _adapt([START, opened, other])
    for kind in sorted(set(shapes["ContentBlockStart"]["members"]) - {"toolUse"}):
        start = {"contentBlockStart": {"contentBlockIndex": 0, "start": {kind: {}}}}
        piece = {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {kind: {}}}}
        stop = {"contentBlockStop": {"contentBlockIndex": 0}}
        assert [e.type for e in _adapt([START, start, piece, stop, END_TURN])] == ["done"]
    for reason in sorted(set(shapes["StopReason"]["enum"]) - {"end_turn", "tool_use"}):
        end = {"messageStop": {"stopReason": reason}}
        with pytest.raises(StreamProtocolError, match=f"stopReason {reason} is not supported"):
            _adapt([START, end])
    fields: dict[str, Any] = {name: {} for name in shapes["ConverseStreamMetadataEvent"]["members"]}
    assert {"usage", "metrics", "trace", "performanceConfig"} <= set(fields)
    extra: dict[str, Any] = {
        name: {} for name in shapes["MessageStopEvent"]["members"] if name != "stopReason"
    }
    end = {"messageStop": {"stopReason": "end_turn", **extra}}
    assert [e.type for e in _adapt([START, {"metadata": fields}, end, {"metadata": fields}])] == [
        "done"
    ]


def test_an_index_no_dict_can_key_is_read_by_its_json_text() -> None:
    """A broken server's `contentBlockIndex` of a list or an object follows the rules any
    index does, by its JSON text; never a bare TypeError (docs/bedrock-converse.md)."""
    use = {"toolUseId": "t", "name": "n"}
    for index, shown in (([1], "[1]"), ({"b": 1, "a": [2]}, '{"a":[2],"b":1}')):
        start = {"contentBlockStart": {"contentBlockIndex": index, "start": {"toolUse": use}}}
        equal = json.loads(json.dumps(index))  # an equal value, not the same object
        piece = {
            "contentBlockDelta": {
                "contentBlockIndex": equal,
                "delta": {"toolUse": {"input": '{"x": 1}'}},
            }
        }
        stop = {"contentBlockStop": {"contentBlockIndex": equal}}
        end = {"messageStop": {"stopReason": "tool_use"}}
        assert _adapt([START, start, piece, stop, end])[0].call.input == {"x": 1}
        with pytest.raises(StreamProtocolError, match=f"block {re.escape(shown)}, which is open"):
            _adapt([START, start, start])
    orphan = {"contentBlockDelta": {"contentBlockIndex": [[0]], "delta": {"toolUse": {}}}}
    with pytest.raises(StreamProtocolError, match=r"block \[\[0\]\], which no toolUse start"):
        _adapt([START, orphan])


def test_a_tool_start_is_the_clients_unless_its_type_is_server_tool_use() -> None:
    """Nova 2 names its client tool's start `"type": "tool_use"` (pydantic-ai's recording,
    tests/data/pydantic-ai-bedrock/): a call; `server_tool_use` is passed over."""

    def call(kind: str | None) -> list[str]:
        use = {"toolUseId": "t", "name": "n", **({"type": kind} if kind else {})}
        start = {"contentBlockStart": {"contentBlockIndex": 0, "start": {"toolUse": use}}}
        piece = {
            "contentBlockDelta": {"contentBlockIndex": 0, "delta": {"toolUse": {"input": "{}"}}}
        }
        stop = {"contentBlockStop": {"contentBlockIndex": 0}}
        end = {
            "messageStop": {"stopReason": "end_turn" if kind == "server_tool_use" else "tool_use"}
        }
        return [event.type for event in _adapt([START, start, piece, stop, end])]

    assert call(None) == call("tool_use") == ["tool_call", "done"]
    assert call("server_tool_use") == ["done"]


def test_the_policy_widens_the_stop_reasons() -> None:
    cut = [START, {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "Hi"}}}]
    cut.append({"messageStop": {"stopReason": "max_tokens"}})
    with pytest.raises(StreamProtocolError, match="stopReason max_tokens is not supported"):
        _adapt(cut)
    policy = {"stop_reasons": {"end_turn", "tool_use", "max_tokens"}}
    assert [event.type for event in _adapt(cut, **policy)] == ["text", "done"]


def test_a_failed_machine_stays_failed() -> None:
    adapter = ConverseAdapter()
    with pytest.raises(APIErrorEvent):
        adapter.feed({"throttlingException": {"message": "slow down"}})
    with pytest.raises(APIErrorEvent):
        adapter.feed(START)


@pytest.mark.parametrize("name", ["tool_use.jsonl", "reasoning.jsonl", "server_tool.jsonl"])
def test_a_stream_body_reads_back_as_its_lines_and_a_plain_answer_as_events_alike(
    name: str,
) -> None:
    lines = _lines(name)
    assert stream_lines(stream_body(lines)) == lines
    client: Any = harness.cassette_client(str(LIBRARY / name))
    folded = client.converse(modelId=MODEL, messages=MESSAGES)
    folded.pop("ResponseMetadata")
    again = answer_lines(json.loads(json.dumps(folded, default=str)))
    assert [type(e) for e in _adapt(again)] == [type(e) for e in _adapt(lines)]


def test_an_event_boto3_refuses_to_parse_is_a_stream_failure_through_the_sdk(
    tmp_path: Path,
) -> None:
    """botocore's parser refuses a `reasoningContent` delta with no member set (its
    `ResponseParserError`): `--via sdk` reports it in one line and exits 1, as a live
    stream's failure, not an internal error; direct replay reads the delta as empty."""
    from click.testing import CliRunner

    from harness_cli.main import cli

    header, *events = (LIBRARY / "reasoning.jsonl").read_text().splitlines()
    lines = [json.loads(line) for line in events]
    for line in lines:
        delta = line.get("contentBlockDelta", {}).get("delta", {})
        if "reasoningContent" in delta:
            delta["reasoningContent"] = {}
    path = tmp_path / "empty_reasoning.jsonl"
    path.write_text("\n".join([header, *(json.dumps(line) for line in lines)]) + "\n")
    result = CliRunner().invoke(cli, ["replay", "--via", "sdk", str(path)])
    assert result.exit_code == 1, result.output
    assert result.output.splitlines() == [
        "connection_error ResponseParserError: Invalid service response: "
        "ReasoningContentBlockDelta must have one and only one member set."
    ]
    assert CliRunner().invoke(cli, ["replay", str(path)]).exit_code == 0


#: An event whose member botocore's parser reads as another shape -> the class of what
#: its code raises over it (the SDK refusing the stream, as it would refuse it live).
BOTO3_BREAKS = {
    "tool_use_start_string": (
        {"contentBlockStart": {"contentBlockIndex": 0, "start": {"toolUse": "x"}}},
        "AttributeError",
    ),
    "usage_string": ({"metadata": {"usage": "x"}}, "AttributeError"),
    "delta_string": (
        {"contentBlockDelta": {"contentBlockIndex": 0, "delta": "x"}},
        "AttributeError",
    ),
    "redacted_not_base64": (
        {
            "contentBlockDelta": {
                "contentBlockIndex": 0,
                "delta": {"reasoningContent": {"redactedContent": "!!notb64"}},
            }
        },
        "Error",  # binascii's
    ),
}


@pytest.mark.parametrize("name", sorted(BOTO3_BREAKS))
def test_an_event_boto3_breaks_over_is_a_stream_failure_named_by_its_class(
    tmp_path: Path, name: str
) -> None:
    """Whatever botocore's own code raises over an event it was served (not only its
    `ResponseParserError`) is its refusal of the stream: one line, exit 1, never an
    internal error; the schema and direct replay read the event."""
    from harness._replay.direct import collect, failure_code
    from harness._replay.sdk import replay_events

    line, raised = BOTO3_BREAKS[name]
    header = (LIBRARY / "text.jsonl").read_text().splitlines()[0]
    events = [
        {"messageStart": {"role": "assistant"}},
        line,
        {"messageStop": {"stopReason": "end_turn"}},
    ]
    path = tmp_path / f"{name}.jsonl"
    path.write_text("\n".join([header, *(json.dumps(event) for event in events)]) + "\n")
    assert CliRunner().invoke(cli, ["validate", str(path)]).exit_code == 0
    assert CliRunner().invoke(cli, ["replay", str(path)]).exit_code in (0, 1)
    result = CliRunner().invoke(cli, ["replay", "--via", "sdk", str(path)])
    assert result.exit_code == 1, result.output
    [said] = result.output.splitlines()
    assert said.startswith(f"connection_error {raised}: ")
    error = collect(replay_events(path, via="sdk")).error
    assert error is not None
    assert failure_code(error) == f"connection_error:{raised}"
