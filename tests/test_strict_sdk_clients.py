"""`harness.strict` on SDK clients built as their docs build them (a key and a base URL,
the SDK's own default HTTP client), against a real socket (`harness serve`'s server):
what the code catches is a `StreamProtocolError` with its code, which is also the SDK's
`APIError`, sync and async, raw iteration and the stream helpers, on whichever release
is installed. And the copy keeps the client's timeout, retries and headers."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest
from conftest import LIBRARY, OPENAI_LIBRARY

import harness
from harness._http.hosting import ServerThread
from harness._http.server import CASSETTE_HEADER, CassetteServer

KEY = "sk-harness-test"
MESSAGES = {
    "model": "harness-replay",  # a name no SDK release lists as deprecated
    "max_tokens": 64,
    "messages": [{"role": "user", "content": "weather?"}],
}
CHAT = {"model": "gpt-4.1", "messages": [{"role": "user", "content": "weather?"}]}
RESPONSES = {"model": "gpt-4.1", "input": "weather?"}


@dataclass(frozen=True)
class Dialect:
    """One SDK client kind and how a user's code reads its stream both ways."""

    name: str
    base: str  # the base URL's path under the server
    raw: Callable[[Any, dict[str, str]], Any]  # create(stream=True)
    helper: Callable[[Any, dict[str, str]], Any]  # the SDK's stream helper (a manager)
    final: str  # the helper stream's method that reads to the end
    make: Callable[..., Any]
    amake: Callable[..., Any]
    broken: Path
    code: str
    good: Path


DIALECTS = [
    Dialect(
        "anthropic",
        "",
        lambda client, headers: client.messages.create(
            **MESSAGES, stream=True, extra_headers=headers
        ),
        lambda client, headers: client.messages.stream(**MESSAGES, extra_headers=headers),
        "get_final_message",
        anthropic.Anthropic,
        anthropic.AsyncAnthropic,
        LIBRARY / "errors" / "invalid_tool_json.jsonl",
        "invalid_tool_json",
        LIBRARY / "two_tools.jsonl",
    ),
    Dialect(
        "openai-chat",
        "/v1",
        lambda client, headers: client.chat.completions.create(
            **CHAT, stream=True, extra_headers=headers
        ),
        lambda client, headers: client.chat.completions.stream(**CHAT, extra_headers=headers),
        "get_final_completion",
        openai.OpenAI,
        openai.AsyncOpenAI,
        OPENAI_LIBRARY / "chat" / "errors" / "invalid_tool_json.jsonl",
        "invalid_tool_json",
        OPENAI_LIBRARY / "chat" / "parallel_tools.jsonl",
    ),
    Dialect(
        "openai-responses",
        "/v1",
        lambda client, headers: client.responses.create(
            **RESPONSES, stream=True, extra_headers=headers
        ),
        lambda client, headers: client.responses.stream(**RESPONSES, extra_headers=headers),
        "get_final_response",
        openai.OpenAI,
        openai.AsyncOpenAI,
        OPENAI_LIBRARY / "responses" / "errors" / "arguments_mismatch.jsonl",
        "arguments_mismatch",
        OPENAI_LIBRARY / "responses" / "parallel_tools.jsonl",
    ),
]
DIALECT_IDS = [dialect.name for dialect in DIALECTS]


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server of each dialect's two cassettes, each named `<dialect>-<kind>`."""
    folder = tmp_path_factory.mktemp("served")
    for dialect in DIALECTS:
        for kind in ("good", "broken"):
            source = getattr(dialect, kind)
            (folder / f"{dialect.name}-{kind}.jsonl").write_bytes(source.read_bytes())
    with ServerThread(CassetteServer([str(folder)], match_on=None).app()) as address:
        yield address


def _read_sync(dialect: Dialect, client: Any, kind: str, how: str) -> None:
    headers = {CASSETTE_HEADER: f"{dialect.name}-{kind}"}
    if how == "raw":
        for _ in dialect.raw(client, headers):
            pass
        return
    with dialect.helper(client, headers) as stream:
        getattr(stream, dialect.final)()


async def _read_async(dialect: Dialect, client: Any, kind: str, how: str) -> None:
    headers = {CASSETTE_HEADER: f"{dialect.name}-{kind}"}
    if how == "raw":
        async for _ in await dialect.raw(client, headers):
            pass
        return
    async with dialect.helper(client, headers) as stream:
        await getattr(stream, dialect.final)()


def _sdk(dialect: Dialect) -> Any:
    return anthropic if dialect.name == "anthropic" else openai


@pytest.mark.parametrize("how", ["raw", "helper"])
@pytest.mark.parametrize("dialect", DIALECTS, ids=DIALECT_IDS)
def test_a_client_built_as_the_docs_show_raises_the_guards_error_as_itself(
    url: str, dialect: Dialect, how: str
) -> None:
    client = harness.strict(dialect.make(api_key=KEY, base_url=url + dialect.base))
    _read_sync(dialect, client, "good", how)  # a good stream reads to its end
    try:
        _read_sync(dialect, client, "broken", how)
    except harness.StreamProtocolError as error:
        assert error.code == dialect.code
        assert isinstance(error, _sdk(dialect).APIError)  # code handling API errors sees it
        assert KEY not in repr(error.request.headers)
    else:
        pytest.fail("the broken stream was read to its end")
    finally:
        client.close()


@pytest.mark.parametrize("how", ["raw", "helper"])
@pytest.mark.parametrize("dialect", DIALECTS, ids=DIALECT_IDS)
def test_an_async_client_built_as_the_docs_show_raises_the_guards_error_as_itself(
    url: str, dialect: Dialect, how: str
) -> None:
    async def run() -> None:
        client = harness.strict(dialect.amake(api_key=KEY, base_url=url + dialect.base))
        try:
            await _read_async(dialect, client, "good", how)
            with pytest.raises(_sdk(dialect).APIError) as raised:
                await _read_async(dialect, client, "broken", how)
        finally:
            await client.close()
        assert isinstance(raised.value, harness.StreamProtocolError)
        assert raised.value.code == dialect.code

    asyncio.run(run())


@pytest.mark.parametrize("dialect", DIALECTS, ids=DIALECT_IDS)
def test_the_strict_copy_keeps_the_clients_timeout_retries_and_headers(dialect: Dialect) -> None:
    client = dialect.make(
        api_key=KEY,
        base_url="http://127.0.0.1:9" + dialect.base,
        timeout=3.5,
        max_retries=4,
        default_headers={"x-team": "checkout"},
    )
    copy = harness.strict(client)
    assert type(copy) is type(client)
    assert (copy.timeout, copy.max_retries) == (3.5, 4)
    assert copy.default_headers["x-team"] == "checkout"
    assert copy.api_key == KEY and str(copy.base_url) == str(client.base_url)
    # it sends through the client's own HTTP client: its proxies, mounts and limits
    sends = copy._client if dialect.name == "anthropic" else copy._client.inner
    assert sends is client._client
    copy.close()
    client.close()
