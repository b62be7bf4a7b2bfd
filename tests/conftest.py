"""Shared test configuration: the project's paths, and `pytester` for the plugin's tests."""

import contextlib
import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

# The machines set PYTHONDONTWRITEBYTECODE, so every run (and each xdist worker) compiled
# and assertion-rewrote every test module and the library again: half of collection.
# This process, and every process the tests start (the CLI, pytest inside pytest, an
# example's run: `import anthropic` alone is 3 s compiled, 6-8 s from source), keep their
# compiled modules under .venv/pycache, outside the tree.
_VENV = Path(__file__).resolve().parent.parent / ".venv"
if sys.dont_write_bytecode and _VENV.is_dir():
    sys.pycache_prefix = str(_VENV / "pycache")
    sys.dont_write_bytecode = False
    os.environ["PYTHONPYCACHEPREFIX"] = sys.pycache_prefix
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

# pytester runs in-process and unloads every module first imported during an inner run;
# loading what the plugin imports lazily now keeps one copy of each class across runs
# (and saves re-importing the SDK and hypothesis, ~3 s, in every run).
import anthropic
import hypothesis
import orjson
import pytest
from aiohttp import web

import harness._replay.direct
import harness._strict.client
import harness._strict.report
import harness._testing.fault_report
import harness._testing.fault_runs
import harness._testing.trace
import harness._view.report
import harness.faults
import harness.snapshot
from harness._cassette.codec import Cassette, expand_paths, of_provider
from harness._exceptions import ANTHROPIC
from harness._hosts import bedrock
from harness._http.hosting import ServerThread
from harness._providers.gemini.errors import PROVIDER as GEMINI
from harness._providers.openai_chat.errors import PROVIDER as OPENAI_CHAT
from harness._providers.openai_responses.errors import PROVIDER as OPENAI_RESPONSES
from harness._replay.direct import failure_code, transport_error

pytest_plugins = ["pytester"]


@pytest.fixture
def pytester(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """pytest's `pytester`, whose runs leave langsmith's pytest plugin off as this suite
    does (pyproject.toml): pytester clears `PYTEST_ADDOPTS`, and the plugin, which
    langchain brings, costs each inner pytest process about 3 s."""
    monkeypatch.setenv("PYTEST_ADDOPTS", "-p no:langsmith_plugin")
    return pytester


# CI (`CI=true`, as .ci/run is called) replays the same generated examples every run, so
# a landing never hangs on a new draw; a developer's run draws new ones each time.
hypothesis.settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI"):
    hypothesis.settings.load_profile("ci")

ROOT = Path(__file__).resolve().parent.parent
#: the cassette library: Anthropic's happy paths at the top, one cassette per error code in
#: errors/, the agent sessions in sessions/; OpenAI's in openai/chat/ and openai/responses/,
#: Gemini's in gemini/
LIBRARY = ROOT / "cassettes"
#: the OpenAI part of the library (`cassettes/openai/generate.py`)
OPENAI_LIBRARY = LIBRARY / "openai"
#: the Gemini part of the library (`cassettes/gemini/generate.py`)
GEMINI_LIBRARY = LIBRARY / "gemini"
#: provider -> its part of the library (Anthropic's: all but openai/ and gemini/, by the headers)
LIBRARY_FOLDERS = {
    ANTHROPIC: LIBRARY,
    OPENAI_CHAT: OPENAI_LIBRARY / "chat",
    OPENAI_RESPONSES: OPENAI_LIBRARY / "responses",
    GEMINI: GEMINI_LIBRARY,
}
#: provider -> the folder of its error cassettes, one per row of its table, named after it
ERRORS_FOLDERS = {provider: folder / "errors" for provider, folder in LIBRARY_FOLDERS.items()}
#: the recorded agent sessions
SESSIONS = LIBRARY / "sessions"
EXAMPLES = ROOT / "examples"
LENIENT_EXAMPLE = EXAMPLES / "lenient_adapter"
#: the npm packages `make node` installs (the official TypeScript SDK among them)
NODE_MODULES = ROOT / ".node" / "node_modules"
#: a `Message` whose tool input holds `NaN`: no strict JSON, but every SDK's reader takes it
NAN_TOOL_INPUT = (
    b'{"type":"message","id":"msg_1","role":"assistant","model":"m","content":'
    b'[{"type":"tool_use","id":"toolu_1","name":"read","input":{"x":NaN}}],'
    b'"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}'
)
#: a script asking a server for cassettes through the TypeScript SDK's `messages.stream()`
TYPESCRIPT_SCRIPT = Path(__file__).parent / "ts" / "final_message.cjs"


def not_installed(*modules: str) -> str | None:
    """Why a test of an optional package cannot run here (the `frameworks` extra, which
    `make test` installs), or None when every one of `modules` is importable."""
    missing = [name for name in modules if importlib.util.find_spec(name) is None]
    if not missing:
        return None
    return (
        f"{', '.join(missing)} not installed: the frameworks extra "
        "(make test installs it: uv sync --all-extras from uv.lock)"
    )


def typescript_final_messages(
    url: str, names: list[str], modules: Path = NODE_MODULES
) -> dict[str, dict[str, Any]]:
    """What the TypeScript SDK made of each named cassette served at `url` (no key set):
    its final message's fields, or the error it raised, by cassette name."""
    environment = {**os.environ, "ANTHROPIC_BASE_URL": url, "NODE_PATH": str(modules)}
    environment.pop("ANTHROPIC_API_KEY", None)
    result = subprocess.run(
        ["node", str(TYPESCRIPT_SCRIPT), *names],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
        check=True,
    )
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    return {line.pop("cassette"): line for line in lines}


def parsing_spied(monkeypatch: pytest.MonkeyPatch, module: Any) -> list[int]:
    """The sizes of what `module` (a reader of a peer's bytes) parses with orjson from now
    on: its `orjson` swapped for a spy that notes each size, then parses."""
    parsed: list[int] = []

    def parsing(data: Any) -> Any:
        parsed.append(len(data))
        return orjson.loads(data)

    reading = SimpleNamespace(loads=parsing, JSONDecodeError=orjson.JSONDecodeError)
    monkeypatch.setattr(module, "orjson", reading)
    return parsed


def boto3_runtime(url: str, **options: Any) -> Any:
    """boto3's `bedrock-runtime` client as its docs build one, at a server of ours (`url`),
    with dummy credentials passed explicitly; `options` (`config`) go to it."""
    import boto3

    return boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        endpoint_url=url,
        aws_access_key_id="AKIDEXAMPLE",
        aws_secret_access_key="wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
        **options,
    )


def as_direct(body: Any) -> Any:
    """An error body as the direct API words it: a refusal of the harness's at a Bedrock
    path is in Bedrock's shape (`{"message", "__type"}`, which boto3 reads too), the same
    message the direct API's `not_found_error` carries."""
    if isinstance(body, dict) and "__type" in body:
        assert body["__type"] == "ResourceNotFoundException", body
        return {"type": "error", "error": {"type": "not_found_error", "message": body["message"]}}
    return body


def anthropic_on(host: str, **options: Any) -> Any:
    """An `anthropic` client of `host` (`direct`, `bedrock`, `vertex`) built as its docs
    build one, with dummy credentials passed explicitly; `options` (`base_url`,
    `http_client`, `max_retries`) go to it."""
    if host == "bedrock":
        return anthropic.AnthropicBedrock(
            aws_access_key="AKIDEXAMPLE",
            aws_secret_key="wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
            aws_region="us-east-1",
            **options,
        )
    if host == "vertex":
        return anthropic.AnthropicVertex(
            region="us-east5", project_id="a-project", access_token="a-token", **options
        )
    return anthropic.Anthropic(api_key="sk-test", **options)


def library_cassettes(provider: str | None = ANTHROPIC, folder: Path = LIBRARY) -> list[Path]:
    """The library's cassettes below `folder` (every `*.jsonl`, sessions' turns included),
    sorted, of the provider their headers name: Anthropic's by default, the readers that
    mean "the Anthropic library"; None for every cassette, the readers of any provider."""
    paths = expand_paths([str(folder)])
    return [Path(path) for path in (paths if provider is None else of_provider(paths, provider)[0])]


def library_streams() -> list[Any]:
    """Every Anthropic library cassette's events and every fault variant's, as pytest
    params (the cassette's name, then the fault's)."""
    params = []
    for path in library_cassettes():
        events = list(Cassette(path).events())
        name = str(Path(path).relative_to(LIBRARY))
        params.append(pytest.param(events, id=name))
        params += [
            pytest.param(variant.events, id=f"{name}:{variant.fault.name}")
            for variant in harness.faults.derive_variants(events)
        ]
    return params


def sdk_message(events: list[dict[str, Any]]) -> dict[str, Any]:
    """What the SDK's own `messages.stream()` accumulator makes of a stream's events: the
    reference a cassette's fold, an import or a client is checked against."""
    from anthropic._models import construct_type
    from anthropic.lib.streaming._messages import accumulate_event
    from anthropic.types import RawMessageStreamEvent

    snapshot = None
    buffers: dict[int, bytes] = {}
    for event in events:
        if event["type"] == "ping":
            continue
        built = construct_type(type_=RawMessageStreamEvent, value=event)
        snapshot = accumulate_event(
            event=built,  # type: ignore[arg-type]
            current_snapshot=snapshot,
            json_bufs=buffers,
        )
    assert snapshot is not None
    dumped: dict[str, Any] = snapshot.model_dump(mode="json")
    return dumped


@contextlib.contextmanager
def raises_connection_error(name: str, match: str = "") -> Iterator[None]:
    """The block fails as a dropped or timed-out connection does, named by the transport
    error in what it raised (`RemoteProtocolError`, `ReadTimeout`): whether the SDK release
    wrapped it in its `APIConnectionError` or not does not matter (docs/replay.md)."""
    with pytest.raises(Exception) as raised:
        yield
    assert failure_code(raised.value) == f"connection_error:{name}", repr(raised.value)
    assert match in str(transport_error(raised.value))


def read_then_close(url: str, path: str, body: dict[str, Any], headers: dict[str, str]) -> bytes:
    """POST `body` over a bare socket, read until the last event (Chat's `data: [DONE]`)
    and close at once, before the chunked body's end: as the openai SDK does."""
    import socket
    from urllib.parse import urlsplit

    where = urlsplit(url)
    sent = json.dumps(body).encode()
    head = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    request = (
        f"POST {path} HTTP/1.1\r\nHost: {where.netloc}\r\n{head}"
        f"Content-Type: application/json\r\nContent-Length: {len(sent)}\r\n\r\n"
    ).encode() + sent
    got = b""
    with socket.create_connection((where.hostname, where.port), timeout=30) as connection:
        connection.sendall(request)
        while b"data: [DONE]\n\n" not in got:
            piece = connection.recv(65536)
            if not piece:
                break
            got += piece
    return got


#: A provider's package from outside the harness (tests/data/third_party_provider/README.md).
THIRD_PARTY = ROOT / "tests" / "data" / "third_party_provider"
#: Its name, as its entry point registers it.
THIN = "thin"


def install_entry_point(
    site: Path, monkeypatch: pytest.MonkeyPatch, lines: str, distribution: str = "thin_dialect"
) -> None:
    """A distribution's `.dist-info` in `site`, put on `sys.path` (and on `PYTHONPATH`, for
    the commands a test runs), whose `entry_points.txt` holds `lines`; the provider
    registry reads it at its next use."""
    from harness._providers import reset

    info = site / f"{distribution}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {distribution}\nVersion: 0.1\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(lines, encoding="utf-8")
    for path in (THIRD_PARTY, site):
        monkeypatch.syspath_prepend(str(path))
    paths = [str(site), str(THIRD_PARTY), *filter(None, [os.environ.get("PYTHONPATH")])]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(paths))
    reset()


@pytest.fixture
def thin_provider(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The `thin` provider installed as another distribution installs one: by its entry
    point, from a folder outside the package; forgotten again after the test."""
    from harness._providers import reset

    install_entry_point(
        tmp_path / "site", monkeypatch, f"[stream_harness.providers]\n{THIN} = thin_dialect\n"
    )
    yield THIN
    reset()


#: The inner loop's share of each matrix: of a parametrized test's cases, `make quick`
#: (`-m "not slow"`) runs this many, spread evenly from its first case to its last;
#: the rest are marked `slow`, so `make test` runs them all (CONTRIBUTING.md).
QUICK_CASES = 4


def _spread(count: int, kept: int) -> set[int]:
    """`kept` positions of `count`, evenly spaced, the first and the last among them."""
    if count <= kept:
        return set(range(count))
    return {round(step * (count - 1) / (kept - 1)) for step in range(kept)}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Marks a matrix's cases beyond the inner loop's share `slow` (before `-m` selects):
    the same cases every run and on every worker, since collection order is the file's.
    A snapshot test keeps every case (syrupy would find the others' snapshots unused)."""
    matrices: dict[str, list[pytest.Item]] = {}
    for item in items:
        if isinstance(item, pytest.Function) and item.originalname != item.name:
            matrices.setdefault(item.nodeid.partition("[")[0], []).append(item)
    for nodeid, cases in matrices.items():
        if "/test_snapshots.py::" in nodeid:
            continue
        kept = _spread(len(cases), QUICK_CASES)
        for position, case in enumerate(cases):
            if position not in kept:
                case.add_marker(pytest.mark.slow)


#: Streams of models whose dialect the harness does not speak, as
#: `invoke_model_with_response_stream` yields them (each a `chunk` event's `bytes`).
OTHER_BEDROCK_DIALECTS: dict[str, list[dict[str, Any]]] = {
    "meta.llama3-1-8b-instruct-v1:0": [
        {"generation": "Hello", "prompt_token_count": 5, "generation_token_count": 1},
        {"generation": " world", "generation_token_count": 2, "stop_reason": None},
        {"generation": "", "generation_token_count": 2, "stop_reason": "stop"},
    ],
    "mistral.mistral-large-2407-v1:0": [
        {"outputs": [{"text": "Hello", "stop_reason": None}]},
        {"outputs": [{"text": " world", "stop_reason": "stop"}]},
    ],
    "us.amazon.nova-lite-v1:0": [
        {"messageStart": {"role": "assistant"}},
        {"contentBlockDelta": {"delta": {"text": "Hello"}, "contentBlockIndex": 0}},
        {"contentBlockStop": {"contentBlockIndex": 0}},
        {"messageStop": {"stopReason": "max_tokens"}},  # Converse's rules would refuse it
    ],
}


def bedrock_invoked_at(events: list[Any]) -> ServerThread:
    """A Bedrock of ours answering `invoke_model_with_response_stream` with `events` in
    its chunk frames and `invoke_model` with the last of them, whatever the model."""

    async def answer(request: web.Request) -> web.Response:
        await request.read()
        if request.path.endswith("/invoke-with-response-stream"):
            framed = b"".join(bedrock.encode_event(event) for event in events)
            return web.Response(body=framed, content_type=bedrock.CONTENT_TYPE)
        return web.json_response(events[-1])

    app = web.Application()
    app.router.add_post("/{path:.*}", answer)
    return ServerThread(app)
