"""`harness.strict` over boto3's own `bedrock-runtime` client, built as boto3's docs build
one (a region, an endpoint, keys passed explicitly) and pointed at a server of ours on
127.0.0.1: the guard goes in through botocore's event hooks (`before-parse`), and every
row of `harness faults --list --provider bedrock-converse` is refused with its code
while the code iterates `response["stream"]`; good cassettes pass unchanged, and
`converse()` (not streamed) is checked by the same rules; `invoke_model*`, whose bodies
are the model's own format, passes unchecked whatever the model (docs/strict.md)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import (
    LIBRARY as ANTHROPIC_LIBRARY,
    OTHER_BEDROCK_DIALECTS,
    bedrock_invoked_at,
    boto3_runtime,
    not_installed,
)

import harness
from harness._exceptions import InputError
from harness._hosts import bedrock
from harness._http.hosting import ServerThread
from harness._http.server import CassetteServer
from harness._providers import provider
from harness._providers.bedrock_converse.interop import stream_body
from harness._replay.direct import failure_code
from harness._strict.hooks import HookGuard
from harness._testing.fault_runs import run_fault
from harness._testing.plugin_providers import default_adapter
from harness.faults import DONE, catalogue

boto3 = pytest.importorskip("boto3", reason=not_installed("boto3"))
botocore_config = pytest.importorskip("botocore.config")

PROVIDER = "bedrock-converse"
LIBRARY = Path(__file__).resolve().parent.parent / "cassettes" / "bedrock" / "converse"
GOOD = sorted(LIBRARY.glob("*.jsonl"))
MODEL = "anthropic.claude-sonnet-4-5-20250929-v1:0"
MESSAGES: Any = [{"role": "user", "content": [{"text": "Weather in Paris?"}]}]


def read(client: Any) -> list[dict[str, Any]] | str:
    """The events the code iterated, or the name of what stopped it (`failure_code`)."""
    stream = None
    try:
        stream = client.converse_stream(modelId=MODEL, messages=MESSAGES)["stream"]
        return list(stream)
    except Exception as error:
        if stream is not None:
            stream.close()  # what boto3 leaves open when its iteration raises
        code = failure_code(error)
        if code is None:
            code = _client_error(error)
        return code


def _client_error(error: Exception) -> str:
    details = getattr(error, "response", {}).get("Error", {})
    return f"api_error:{details.get('Code')}" if details else type(error).__name__


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()[1:]]


@pytest.fixture
def served() -> Iterator[Any]:
    """A server of ours answering with the cassettes given, in order."""
    threads: list[Any] = []

    def serve(paths: list[Path]) -> str:
        thread = ServerThread(CassetteServer([str(p) for p in paths], match_on=None).app())
        threads.append(thread)
        return str(thread.__enter__())

    yield serve
    for thread in threads:
        thread.__exit__(None, None, None)


@pytest.mark.parametrize("path", GOOD, ids=lambda path: path.stem)
def test_a_good_cassette_reads_the_same_strict_or_not(served: Any, path: Path) -> None:
    plain = boto3_runtime(served([path]))
    guarded = boto3_runtime(served([path, path]))
    assert harness.strict(guarded) is guarded  # guarded in place: botocore has no copy
    events = [line for line in lines_of(path) if "harness" not in line]
    got = read(guarded)
    assert got == read(plain)
    assert [next(iter(event)) for event in got] == [next(iter(line)) for line in events]
    answer = guarded.converse(modelId=MODEL, messages=MESSAGES)
    assert answer["stopReason"] == events[-2]["messageStop"]["stopReason"]
    plain.close()
    guarded.close()


def _rows(folder: Path) -> list[Any]:
    found = []
    for source in ("text", "tool_use"):
        into = folder / source
        into.mkdir(parents=True)
        for fault in catalogue(PROVIDER):
            case = run_fault(default_adapter(PROVIDER), LIBRARY / f"{source}.jsonl", fault, into)
            if case is not None:
                found.append(case)
    return found


@pytest.mark.slow
def test_every_row_of_the_catalogue_is_refused_with_its_code(served: Any, tmp_path: Path) -> None:
    cases = _rows(tmp_path)
    names = {case.fault.name for case in cases}
    assert names == {fault.name for fault in catalogue(PROVIDER)}  # every row, once at least
    unguarded_accepted = 0
    for case in cases:
        timeout = case.client_options.get("timeout")
        config = botocore_config.Config(
            retries={"total_max_attempts": 3, "mode": "standard"},
            **({"read_timeout": timeout} if timeout else {}),
        )
        clients = [boto3_runtime(served(list(case.served)), config=config) for _ in "ab"]
        plain, guarded = read(clients[0]), read(harness.strict(clients[1]))
        for client in clients:
            client.close()
        name = f"{case.path.parent.name}/{case.fault.name}"
        if case.expected_code == DONE:
            assert isinstance(guarded, list) and guarded == plain, name
            continue
        if case.expected_code.startswith("connection_error:"):
            # the transport's failure, left to the SDK: urllib3's, as boto3 raises it
            assert isinstance(plain, str) and guarded == plain, f"{name}: {guarded!r}"
            continue
        unguarded_accepted += isinstance(plain, list)
        assert guarded == case.expected_code, f"{name}: {guarded!r}"
    assert unguarded_accepted >= 10  # what boto3 alone hands the code as an answer


def test_a_broken_stream_raises_stream_protocol_error_itself(served: Any) -> None:
    client = harness.strict(boto3_runtime(served([LIBRARY / "errors" / "invalid_tool_json.jsonl"])))
    stream = client.converse_stream(modelId=MODEL, messages=MESSAGES)["stream"]
    seen = []
    with pytest.raises(harness.StreamProtocolError) as raised:
        for event in stream:
            seen.append(event)
    assert raised.value.code == "invalid_tool_json"
    assert raised.value.provider == PROVIDER
    assert not any("messageStop" in event for event in seen)


def test_converse_is_checked_whole_and_the_policy_widens(served: Any, tmp_path: Path) -> None:
    cut = tmp_path / "cut.jsonl"
    lines = (LIBRARY / "text.jsonl").read_text().replace('"end_turn"', '"max_tokens"')
    cut.write_text(lines)
    client = harness.strict(boto3_runtime(served([cut, cut, cut])))
    with pytest.raises(harness.StreamProtocolError) as raised:
        client.converse(modelId=MODEL, messages=MESSAGES)
    assert raised.value.code == "unsupported_stop_reason"
    harness.strict(client, allow_stop_reasons={"max_tokens"})  # replaces the handler
    assert client.converse(modelId=MODEL, messages=MESSAGES)["stopReason"] == "max_tokens"
    assert isinstance(read(client), list)


def test_a_cassette_client_takes_strict_too() -> None:
    client = harness.cassette_client(LIBRARY / "errors" / "missing_message_stop.jsonl")
    assert read(harness.strict(client)) == "missing_message_stop"


def test_strict_names_the_clients_it_takes() -> None:
    with pytest.raises(InputError, match=r"a boto3 bedrock-runtime client, .*not object"):
        harness.strict(object())  # type: ignore[type-var]
    other = boto3.client(
        "s3", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x"
    )
    with pytest.raises(InputError, match="not S3"):
        harness.strict(other)


#: Anthropic models as `modelId` names them: an id, a cross-region inference profile,
#: and an application inference profile's ARN (which names no model).
ANTHROPIC_MODELS = [
    "anthropic.claude-sonnet-4-5-20250929-v1:0",
    "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
    "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3d4e5f6",
]


def read_invoked(client: Any, model: str) -> list[Any]:
    """The events `invoke_model_with_response_stream` yields, each `chunk`'s `bytes` read."""
    answer = client.invoke_model_with_response_stream(modelId=model, body=b"{}")
    return [json.loads(event["chunk"]["bytes"]) for event in answer["body"]]


@pytest.mark.parametrize("model", OTHER_BEDROCK_DIALECTS)
def test_an_invoke_stream_of_a_dialect_the_harness_does_not_speak_passes_unchanged(
    model: str,
) -> None:
    events = OTHER_BEDROCK_DIALECTS[model]
    with bedrock_invoked_at(events) as url:
        plain, guarded = boto3_runtime(url), harness.strict(boto3_runtime(url))
        assert read_invoked(guarded, model) == read_invoked(plain, model) == events
        whole = guarded.invoke_model(modelId=model, body=b"{}")["body"].read()
        assert json.loads(whole) == events[-1]
        plain.close()
        guarded.close()


@pytest.mark.parametrize("model", ANTHROPIC_MODELS)
def test_an_anthropic_models_invoke_stream_is_not_judged_either(model: str) -> None:
    """The model id cannot always tell an Anthropic model, so none is told: a broken
    Messages stream reads under strict as boto3 alone reads it (docs/strict.md)."""
    events = lines_of(ANTHROPIC_LIBRARY / "errors" / "invalid_tool_json.jsonl")
    with bedrock_invoked_at(events) as url:
        guarded = harness.strict(boto3_runtime(url))
        assert read_invoked(guarded, model) == events
        guarded.close()


def test_the_hooks_guard_judges_its_own_providers_calls_only() -> None:
    """Pinned to the provider whose hooks took the client: a host's path, which the
    registry would route to a dialect served there, passes as it is."""
    events = lines_of(ANTHROPIC_LIBRARY / "errors" / "invalid_tool_json.jsonl")
    chunks = [bedrock.encode_event(event) for event in events]
    hooks = HookGuard((), provider(PROVIDER))
    invoke = "/model/{modelId}/invoke-with-response-stream"
    assert list(hooks.stream("POST", invoke, b"", iter(chunks))) == chunks
    hooks.whole("POST", "/model/{modelId}/invoke", b"", b'{"type": "message"}', "")
    broken = stream_body(lines_of(LIBRARY / "errors" / "invalid_tool_json.jsonl"))
    with pytest.raises(harness.StreamProtocolError) as raised:
        list(hooks.stream("POST", "/model/{modelId}/converse-stream", b"", iter([broken])))
    assert raised.value.code == "invalid_tool_json"
