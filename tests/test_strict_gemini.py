"""`harness.strict(genai.Client(...))` and `StrictTransport` on Gemini answers: a real
`genai.Client` built as google-genai's docs build one (a key, `HttpOptions(base_url=...)`)
against `harness serve` on 127.0.0.1 is refused every row of the Gemini fault catalogue
with its code, sync and async; good answers pass unchanged; `StrictTransport` reads both
framings (`alt=sse`, the streamed JSON array); the copy keeps the user's HTTP options."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import orjson
import pytest
from conftest import GEMINI_LIBRARY, library_cassettes
from google import genai
from google.genai import errors, types

import harness
from harness._cassette.codec import Cassette
from harness._http.hosting import ServerThread
from harness._http.server import CASSETTE_HEADER, CassetteServer
from harness._json import MAX_LINE_BYTES, MAX_VALUES
from harness._providers.gemini.guard import GeminiReader, answer_check, check_response
from harness._providers.gemini.reading import error_line
from harness._providers.jsonarray import ArrayError
from harness._providers.sse import SSEFormatError
from harness._replay.direct import failure_code
from harness._strict.guard import StreamGuard, guarded
from harness._strict.sdk_errors import iter_as_sdk_errors

SAMPLES = ("text.jsonl", "parallel_tools.jsonl")
MODES = ("sync", "async")
STREAM = "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
#: each broken row of the catalogue, for each sample: (sample, row, expected outcome)
ROWS = [
    (sample, variant.fault.name, variant.expected_code)
    for sample in SAMPLES
    for variant in harness.faults.derive_variants(
        harness.faults.stream_lines(GEMINI_LIBRARY / sample),
        provider="gemini",
        header=Cassette(GEMINI_LIBRARY / sample).header,
    )
]
GOOD = library_cassettes(None, GEMINI_LIBRARY)
GOOD = [path for path in GOOD if "errors" not in path.relative_to(GEMINI_LIBRARY).parts]


def _write(path: Path, header: dict[str, Any] | None, lines: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(line) + "\n" for line in [header, *lines]))


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server of every row's variant (named `<mode>-<sample>-<row>`; a session, as the
    429 row's, a folder of turns: one a mode, as a session is played once) and of every
    good cassette (by its path under the library)."""
    folder = tmp_path_factory.mktemp("served")
    for sample in SAMPLES:
        header = Cassette(GEMINI_LIBRARY / sample).header
        events = harness.faults.stream_lines(GEMINI_LIBRARY / sample)
        for variant in harness.faults.derive_variants(events, provider="gemini", header=header):
            for mode in (*MODES, "array", "sse"):
                name = f"{mode}-{sample.removesuffix('.jsonl')}-{variant.fault.name}"
                if len(variant.responses) == 1:
                    _write(folder / f"{name}.jsonl", header, variant.events)
                    continue
                (folder / name).mkdir()
                for turn, response in enumerate(variant.responses, start=1):
                    _write(folder / name / f"turn-{turn:02d}.jsonl", header, response)
    for path in GOOD:
        named = folder / "good" / path.relative_to(GEMINI_LIBRARY)
        named.parent.mkdir(parents=True, exist_ok=True)
        named.write_bytes(path.read_bytes())
    with ServerThread(CassetteServer([str(folder)], match_on=None).app()) as address:
        yield address


def _client(url: str) -> genai.Client:
    """A client as google-genai's docs build one; retries as the 429 row needs them."""
    options = types.HttpOptions(
        base_url=url, retry_options=types.HttpRetryOptions(attempts=2, initial_delay=0.01, jitter=0)
    )
    return genai.Client(api_key="x", http_options=options)


def _config(name: str, row: str = "") -> types.GenerateContentConfig:
    timeout = 300 if row == "stall" else None  # the stall row: a timeout it outlasts
    options = types.HttpOptions(headers={CASSETTE_HEADER: name}, timeout=timeout)
    return types.GenerateContentConfig(http_options=options)


def _read(
    client: genai.Client, mode: str, config: types.GenerateContentConfig, owner: genai.Client
) -> list[Any]:
    """The chunks `generate_content_stream` hands the code, dumped as the wire held them;
    the async HTTP client `owner` holds (the strict copy's too) closed in the same loop."""
    if mode == "sync":
        stream = client.models.generate_content_stream(model="m", contents="hi", config=config)
        return [chunk.model_dump(exclude={"sdk_http_response"}) for chunk in stream]

    async def read() -> list[Any]:
        face = client.aio
        try:
            stream = await face.models.generate_content_stream(
                model="m", contents="hi", config=config
            )
            return [chunk.model_dump(exclude={"sdk_http_response"}) async for chunk in stream]
        finally:
            await owner.aio.aclose()

    return asyncio.run(read())


def _outcome(error: BaseException) -> str | None:
    """The row's outcome an error is: the guard's code, `api_error:<status>` for
    google-genai's own error for the API's, `connection_error:<transport error>`."""
    line = error_line(error) if isinstance(error, Exception) else None
    if line is not None:
        return f"api_error:{line['error']['status']}"
    if isinstance(error, errors.APIError):  # an HTTP error answer
        return f"api_error:{error.status}"
    return failure_code(error)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("sample", "row", "expected"), ROWS, ids=[f"{s}:{r}" for s, r, _ in ROWS])
def test_every_row_is_refused_with_its_code_through_a_strict_genai_client(
    url: str, mode: str, sample: str, row: str, expected: str
) -> None:
    client = _client(url)
    strict = harness.strict(client)
    assert type(strict) is genai.Client
    name = f"{mode}-{sample.removesuffix('.jsonl')}-{row}"
    if expected == "done":
        assert _read(strict, mode, _config(name, row), client)
        return
    with pytest.raises(Exception) as raised:
        _read(strict, mode, _config(name, row), client)
    client.close()
    assert _outcome(raised.value) == expected
    if expected.startswith(("api_error", "connection_error")):
        return  # the API's or the transport's: the guard passes it as it came
    assert isinstance(raised.value, harness.StreamProtocolError)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("path", GOOD, ids=[p.relative_to(GEMINI_LIBRARY).as_posix() for p in GOOD])
def test_a_good_answer_reads_the_same_strict_or_not(url: str, mode: str, path: Path) -> None:
    client = _client(url)
    config = _config(f"good/{path.relative_to(GEMINI_LIBRARY).as_posix()}")
    plain = _read(client, "sync", config, client)  # (its own async face runs on aiohttp)
    assert plain and _read(harness.strict(client), mode, config, client) == plain
    client.close()


def _body(http: httpx2.Client, url: str, name: str, alt: str) -> bytes:
    with http.stream(
        "POST", f"{url}{STREAM}{alt}", json={"contents": []}, headers={CASSETTE_HEADER: name}
    ) as answer:
        return b"".join(answer.iter_bytes())


@pytest.mark.slow
@pytest.mark.parametrize("framing", ["array", "sse"])
def test_strict_transport_reads_both_framings(url: str, framing: str) -> None:
    alt = "?alt=sse" if framing == "sse" else ""
    guard = harness.StrictTransport(httpx2.HTTPTransport())
    # a short read timeout for the stall rows alone: a loaded machine may pause any other
    # answer past it
    with (
        httpx2.Client(timeout=10) as plain,
        httpx2.Client(timeout=10, transport=guard) as strict,
        httpx2.Client(timeout=0.3, transport=guard) as impatient,
    ):
        _both_framings(url, alt, framing, plain, strict, impatient)


def _both_framings(
    url: str,
    alt: str,
    framing: str,
    plain: httpx2.Client,
    strict: httpx2.Client,
    impatient: httpx2.Client,
) -> None:
    for path in GOOD:
        name = f"good/{path.relative_to(GEMINI_LIBRARY).as_posix()}"
        assert _body(strict, url, name, alt) == _body(plain, url, name, alt)
    for sample, row, expected in ROWS:
        name = f"{framing}-{sample.removesuffix('.jsonl')}-{row}"
        if expected == "done" or expected.startswith("api_error"):
            continue  # an HTTP error, or the API's error chunk: passed as they came
        with pytest.raises(Exception) as raised:
            _body(impatient if row == "stall" else strict, url, name, alt)
        assert _outcome(raised.value) == expected, (sample, row)


def _guard(body: bytes, *, array: bool, size: int = 5) -> bytes:
    guard = StreamGuard(reader=GeminiReader(array=array))
    return b"".join(guarded((body[at : at + size] for at in range(0, len(body), size)), guard))


CHUNK = b'{"candidates":[{"content":{"parts":[{"text":"hi"}],"role":"model"},"index":0}]}'
FINISH = b'{"candidates":[{"content":{"parts":[{"text":""}]},"finishReason":"STOP","index":0}]}'


def test_the_array_framing_is_refused_where_it_breaks() -> None:
    good = b"[" + CHUNK + b"\n,\r\n" + FINISH + b"\n]"
    assert _guard(good, array=True) == good
    with pytest.raises(ArrayError) as raised:
        _guard(b"[" + CHUNK + b"\n\r\n" + FINISH + b"\n]", array=True)
    assert raised.value.code == "not_an_array"
    with pytest.raises(ArrayError) as raised:
        _guard(good[:-2], array=True)  # every chunk, the finish too, but no `]`
    assert raised.value.code == "truncated_array"
    with pytest.raises(harness.StreamProtocolError) as cut:
        _guard(b"[" + CHUNK, array=True)  # cut before the finish: the end rules first
    assert cut.value.code == "missing_finish_reason"


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (b"[" + CHUNK + b"\n\r\n" + FINISH + b"\n]", ArrayError),
        (b"data: {nope\r\n\r\n", SSEFormatError),
    ],
    ids=["array", "sse"],
)
def test_a_broken_framing_is_raised_as_the_sdks_own_error(body: bytes, error: type) -> None:
    """As a bad SSE line or a bad Bedrock frame is: code that catches the loaded SDKs'
    `APIError` around any call catches it, whichever framing Gemini's answer came in."""
    anthropic = pytest.importorskip("anthropic")
    guard = StreamGuard(reader=GeminiReader(array=body.startswith(b"[")))
    with pytest.raises(error) as raised:
        list(iter_as_sdk_errors(guarded(iter([body]), guard), request=None))
    assert isinstance(raised.value, anthropic.APIError)


@pytest.mark.parametrize(
    ("element", "refused"),
    [
        (
            b'{"pad": "' + b"x" * MAX_LINE_BYTES + b'"}',
            f"element 2 is longer than {MAX_LINE_BYTES} bytes",
        ),
        (
            orjson.dumps({"pad": [{}] * (MAX_VALUES // 2)}),
            f"element 2 may hold more than {MAX_VALUES} JSON values, the limit",
        ),
    ],
    ids=["long", "crowded"],
)
def test_the_array_is_held_to_the_bounds_of_an_sse_event(element: bytes, refused: str) -> None:
    with pytest.raises(ArrayError) as raised:
        _guard(b"[" + CHUNK + b"\n,\r\n" + element + b"\n]", array=True, size=2**16)
    assert (raised.value.code, str(raised.value)) == ("not_an_array", refused)


def test_sse_is_read_as_google_genai_reads_it() -> None:
    # the last event with no blank line after it: google-genai still hands it on
    unended = b"data: " + CHUNK + b"\r\n\r\ndata: " + FINISH
    assert _guard(unended, array=False) == unended
    with pytest.raises(harness.StreamProtocolError) as raised:
        _guard(b"data: " + CHUNK + b"\r\n\r\n", array=False)
    assert raised.value.code == "missing_finish_reason"
    with pytest.raises(SSEFormatError, match="not JSON"):
        _guard(b"data: {nope\r\n\r\n", array=False)


def test_generate_content_is_checked_whole(url: str) -> None:
    client = _client(url)
    strict = harness.strict(client)
    plain = strict.models.generate_content(
        model="m", contents="hi", config=_config("good/text.jsonl")
    )
    assert plain.text == "Paris is the capital of France."
    with pytest.raises(harness.StreamProtocolError) as raised:
        strict.models.generate_content(
            model="m", contents="hi", config=_config("sync-text-finish_max_tokens")
        )
    assert raised.value.code == "unsupported_finish_reason"
    client.close()
    check_response({"candidates": [{"finishReason": "MAX_TOKENS"}]}, allowed={"MAX_TOKENS"})
    assert answer_check("POST", "/v1beta/models/m:generateContent", {}, b"", (), None)
    assert answer_check("GET", "/v1beta/models/m:generateContent", {}, b"", (), None) is None


def test_allow_stop_reasons_widens_the_finish_reasons(url: str) -> None:
    client = _client(url)
    strict = harness.strict(client, allow_stop_reasons={"MAX_TOKENS"})
    assert _read(strict, "sync", _config("sync-text-finish_max_tokens"), client)
    client.close()


def test_the_copy_keeps_the_users_http_options_and_client() -> None:
    mine = httpx2.Client()
    amine = httpx2.AsyncClient()
    options = types.HttpOptions(
        base_url="http://127.0.0.1:9",
        headers={"x-team": "checkout"},
        timeout=3500,
        retry_options=types.HttpRetryOptions(attempts=4),
        httpx_client=mine,
        httpx_async_client=amine,
    )
    client = genai.Client(api_key="x", http_options=options)
    copy = harness.strict(client)
    kept = copy._api_client._http_options
    assert (kept.base_url, kept.timeout, kept.retry_options) == (
        "http://127.0.0.1:9",
        3500,
        types.HttpRetryOptions(attempts=4),
    )
    assert kept.headers is not None and kept.headers["x-team"] == "checkout"
    # it sends through the user's own HTTP clients, guarded; the original is untouched
    sends: Any = copy._api_client
    assert sends._httpx_client.inner is mine
    assert sends._async_httpx_client.inner is amine
    assert copy.aio._api_client is copy._api_client is copy.models._api_client
    assert client._api_client._httpx_client is mine
    assert client.models._api_client is client._api_client


def test_a_client_on_aiohttp_of_its_own_is_refused_in_one_line() -> None:
    aiohttp = pytest.importorskip("aiohttp")

    async def build() -> None:
        session = aiohttp.ClientSession()
        try:
            options = types.HttpOptions(base_url="http://127.0.0.1:9", aiohttp_client=session)
            with pytest.raises(ValueError, match=r"aiohttp_client= .* cannot be guarded"):
                harness.strict(genai.Client(api_key="x", http_options=options))
        finally:
            await session.close()

    asyncio.run(build())
