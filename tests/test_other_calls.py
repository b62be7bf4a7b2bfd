"""What users of the Bedrock, Vertex and Gemini SDKs call besides the streamed call.

A call the cassettes cannot answer (another operation of the same client, a count of
tokens, a plain call against a stream cut before its end) is refused with the harness's
one line in the SDK's own error type, its message readable where that SDK reads one:
in-process (`harness.cassette_client`) and from `harness serve` alike, never a silently
empty answer, and never retried by the SDK's default policy.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from conftest import LIBRARY, boto3_runtime, not_installed

import harness
from harness._http.hosting import ServerThread
from harness._http.server import CassetteServer

anthropic = pytest.importorskip("anthropic")
boto3 = pytest.importorskip("boto3", reason=not_installed("boto3"))
botocore_exceptions = pytest.importorskip("botocore.exceptions")

CONVERSE = LIBRARY / "bedrock" / "converse"
MESSAGES: Any = [{"role": "user", "content": [{"text": "Hi"}]}]
BODY = '{"anthropic_version": "bedrock-2023-05-31", "max_tokens": 9, "messages": []}'
ASK: Any = {
    "model": "claude-sonnet-5",
    "max_tokens": 9,
    "messages": [{"role": "user", "content": "Hi"}],
}


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    """`harness serve` of a ConverseStream cassette and an Anthropic one."""
    paths = [str(CONVERSE / "text.jsonl"), str(LIBRARY / "text_only.jsonl")]
    with ServerThread(CassetteServer(paths, match_on=None).app()) as url:
        yield url


OTHER_OPERATIONS = {
    "invoke": lambda client: client.invoke_model(modelId="m", body=BODY),
    "invoke-with-response-stream": lambda client: client.invoke_model_with_response_stream(
        modelId="m", body=BODY
    ),
    "count-tokens": lambda client: client.count_tokens(
        modelId="m", input={"converse": {"messages": MESSAGES}}
    ),
}


@pytest.mark.parametrize("operation", sorted(OTHER_OPERATIONS))
def test_boto3_reads_the_refusal_of_another_operation_in_process(operation: str) -> None:
    """A Converse cassette client asked `invoke_model*` or `count_tokens`: boto3's
    `ResourceNotFoundException` naming the call and the cassette, not retried. The
    refusal was in the direct API's shape, where boto3 finds no message: `An error
    occurred (404) when calling the InvokeModel operation: ` and nothing more."""
    client: Any = harness.cassette_client(CONVERSE / "text.jsonl")
    with pytest.raises(botocore_exceptions.ClientError) as refused:
        OTHER_OPERATIONS[operation](client)
    error = refused.value.response["Error"]
    assert error["Code"] == "ResourceNotFoundException"
    assert error["Message"].startswith(f"stream-harness: request 1 is POST /model/m/{operation},")
    assert "is a cassette of bedrock-converse, which answers POST" in error["Message"]
    assert len(harness.captured_requests(client)) == 1


@pytest.mark.parametrize("operation", ["invoke", "count-tokens"])
def test_boto3_reads_the_refusal_of_serve(served: str, operation: str) -> None:
    """`harness serve` refuses an operation at a Bedrock path it does not answer (a Converse
    call's model asked `invoke_model` with a Converse cassette named, a `count_tokens`
    that no route takes) in Bedrock's shape too."""
    client = boto3_runtime(served)
    if operation == "invoke":

        def name_it(request: Any, **_: Any) -> None:
            request.headers["x-harness-cassette"] = "text.jsonl"

        client.meta.events.register("before-sign.bedrock-runtime.*", name_it)
    try:
        with pytest.raises(botocore_exceptions.ClientError) as refused:
            OTHER_OPERATIONS[operation](client)
    finally:
        client.close()
    error = refused.value.response["Error"]
    assert error["Code"] == "ResourceNotFoundException"
    assert f"POST /model/m/{operation}" in error["Message"]
    assert refused.value.response["ResponseMetadata"]["RetryAttempts"] == 0


@pytest.mark.parametrize("strict", [False, True], ids=["plain", "strict"])
def test_converse_on_a_stream_cut_before_its_stop_is_refused(strict: bool) -> None:
    """`converse()` against a stream with no `messageStop` got an answer with no
    `stopReason` (a `KeyError` in the code that reads it; under `harness.strict`,
    `stopReason null is not supported`): a Converse answer always has one, so the
    request is refused, saying what was asked and what the cassette holds."""
    client: Any = harness.cassette_client(CONVERSE / "errors" / "missing_message_stop.jsonl")
    client = harness.strict(client) if strict else client
    with pytest.raises(botocore_exceptions.ClientError) as refused:
        client.converse(modelId="m", messages=MESSAGES)
    error = refused.value.response["Error"]
    assert error["Code"] == "ResourceNotFoundException"
    assert (
        "missing_message_stop.jsonl: cannot answer a non-streaming request: its stream "
        in (error["Message"])
    )
    assert "ends before messageStop" in error["Message"]


def test_anthropic_vertex_count_tokens_is_refused_in_process() -> None:
    """`AnthropicVertex.messages.count_tokens` posts to `count-tokens:rawPredict`: it was
    answered the stream's `Message`, read as a count with `input_tokens=None`, and used
    the cassette up."""
    client = harness.cassette_client(LIBRARY / "text_only.jsonl", host="vertex")
    with pytest.raises(anthropic.NotFoundError) as refused:
        client.messages.count_tokens(model=ASK["model"], messages=ASK["messages"])
    said = str(refused.value)
    assert "/publishers/anthropic/models/count-tokens:rawPredict, but " in said
    assert "text_only.jsonl is a cassette of anthropic" in said


def test_anthropic_vertex_count_tokens_is_refused_by_serve(served: str) -> None:
    client = anthropic.AnthropicVertex(
        region="us-east5",
        project_id="a-project",
        access_token="a-token",
        base_url=served + "/v1",
        max_retries=0,
    )
    with client, pytest.raises(anthropic.NotFoundError) as refused:
        client.messages.count_tokens(model=ASK["model"], messages=ASK["messages"])
    assert "count-tokens:rawPredict" in str(refused.value)


@pytest.mark.parametrize("vertex", [False, True], ids=["gemini-api", "vertex"])
def test_google_genai_reads_the_refusal_of_a_count_in_process(vertex: bool, tmp_path: Any) -> None:
    """google-genai's `count_tokens` against a Gemini cassette: its `ClientError` with the
    API's status (`NOT_FOUND`) and the harness's line; the refusal was in the direct
    Anthropic API's shape, which google-genai read as `404 None.`."""
    pytest.importorskip("google.genai", reason=not_installed("google-genai"))
    from google.genai import errors

    source = LIBRARY / "gemini" / "text.jsonl"
    if vertex:  # the same cassette, recorded on Vertex: a `vertexai=True` client
        header, *rest = source.read_text().splitlines()
        source = tmp_path / "text.jsonl"
        source.write_text("\n".join([header[:-1] + ', "host": "vertex"}', *rest]) + "\n")
    client: Any = harness.cassette_client(source)
    with pytest.raises(errors.ClientError) as refused:
        client.models.count_tokens(model="gemini-2.5-flash", contents="hi")
    assert (refused.value.code, refused.value.status) == (404, "NOT_FOUND")
    assert ":countTokens, but " in str(refused.value.message)
    assert "text.jsonl is a cassette of gemini" in str(refused.value.message)


@pytest.mark.parametrize("vertex", [False, True], ids=["gemini-api", "vertex"])
def test_google_genai_reads_the_refusal_of_a_count_from_serve(vertex: bool) -> None:
    """`harness serve` of Gemini cassettes alone refuses a path of no provider's (a
    `countTokens`) in Google's error shape, as the one provider served: it was the
    Messages API's, which google-genai read as `404 None.`."""
    pytest.importorskip("google.genai", reason=not_installed("google-genai"))
    from google import genai
    from google.genai import errors, types

    server = CassetteServer([str(LIBRARY / "gemini" / "text.jsonl")], match_on=None)
    with ServerThread(server.app()) as url:
        options = types.HttpOptions(base_url=url)
        if vertex:
            from google.oauth2.credentials import Credentials

            client = genai.Client(
                vertexai=True,
                project="a-project",
                location="us-central1",
                credentials=Credentials(token="a-token"),  # type: ignore[no-untyped-call]
                http_options=options,
            )
        else:
            client = genai.Client(api_key="a-key", http_options=options)
        with client, pytest.raises(errors.ClientError) as refused:
            client.models.count_tokens(model="gemini-2.5-flash", contents="hi")
    assert (refused.value.code, refused.value.status) == (404, "NOT_FOUND")
    assert "gemini-2.5-flash:countTokens" in str(refused.value.message)
