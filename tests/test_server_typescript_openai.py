"""The official TypeScript `openai` SDK against `harness serve` (`OPENAI_BASE_URL`).

Both APIs, both readers (`create({stream: true})` iterated, and the `.stream()` helper's
final answer, `tests/ts/openai_stream.cjs`): every good library cassette gives the text
and tool calls `harness replay` gives; a stream cut mid-event and an HTTP error are an
error in both; what each reader makes of each broken library cassette (raises, accepts
silently, or varies from run to run) is the table in docs/server.md, compared with the
installed release row by row, or written with `HARNESS_WRITE_TABLES=1` (`make tables`;
tests/doc_tables.py).

The Responses cassettes are served live-shaped: the library's synthetic streams end in
a `response.completed` whose `response` names no `output` (the Python SDK and the
adapter read the items from their own events), and the TypeScript `.stream()` helper
takes the final response from that event whole ("rsp.output is not iterable"); the live
API always sends it with its `output`, so each is served with the `output` its events
fold into (`framing.answer`), as the live API would have sent it.

`openai` is installed into `.node/` (ignored) on first use, as `make node` does; without
node the tests are skipped, or fail when the table is being written.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import OPENAI_LIBRARY, ROOT
from doc_tables import Block, cells, check, require, version_line
from filelock import FileLock

from harness._cassette.codec import Cassette, expand_paths
from harness._events import TextEvent, ToolCallEvent
from harness._http.hosting import ServerThread
from harness._http.server import CassetteServer
from harness._providers import provider
from harness._replay.direct import replay_outcome

NODE_PREFIX = ROOT / ".node"
NODE_OPENAI = NODE_PREFIX / "node_modules" / "openai" / "package.json"
SCRIPT = ROOT / "tests" / "ts" / "openai_stream.cjs"
DOC = ROOT / "docs" / "server.md"
GOOD = [
    f"{api}/{name}.jsonl"
    for api in ("chat", "responses")
    for name in ("text", "one_tool", "parallel_tools", "zero_argument_tool", "reasoning")
]
BROKEN = sorted(
    Path(path).relative_to(OPENAI_LIBRARY).as_posix()
    for path in expand_paths([str(OPENAI_LIBRARY)])
    if "/errors/" in path
)
RATE_LIMITED = {
    "harness": "http_error",
    "status": 429,
    "headers": {"x-should-retry": "false"},
    "body": {"error": {"message": "Rate limit reached", "type": "requests"}},
}

#: How many times the table's test reads each broken cassette: a reader whose answer
#: differs between the runs `varies`.
RUNS = 3
READERS = ("create", "stream")
VARIES = "varies"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def node_modules() -> Path:
    """The `openai` npm package, installed into `.node/` once (under a lock)."""
    require(None if shutil.which("node") else "node is not installed")
    NODE_PREFIX.mkdir(exist_ok=True)
    with FileLock(str(NODE_PREFIX / ".install.lock")):
        if not NODE_OPENAI.exists():
            npm = shutil.which("npm")
            assert npm is not None, "node is installed but npm is not: cannot get the SDK"
            command = [npm, "install", "--silent", "--prefix", str(NODE_PREFIX), "openai"]
            subprocess.run(command, check=True, timeout=300)
    return NODE_PREFIX / "node_modules"


def _live_shaped(source: Path, target: Path) -> None:
    """`source` with its terminal event's `response` carrying the whole `output`."""
    cassette = Cassette(source)
    try:
        whole = provider(cassette.provider).framing.answer(cassette.events())
    except Exception:  # an error line, no events: served as it is
        whole = None
    lines = []
    for line in source.read_text().splitlines():
        data = json.loads(line)
        response = data.get("response") if isinstance(data, dict) else None
        terminal = str(data.get("type", "")) in ("response.completed", "response.incomplete")
        if whole is not None and terminal and isinstance(response, dict):
            data["response"] = {**response, "output": whole.get("output", [])}
        lines.append(json.dumps(data))
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("served")
    for path in expand_paths([str(OPENAI_LIBRARY)]):
        _live_shaped(Path(path), folder / Path(path).relative_to(OPENAI_LIBRARY))
    for api in ("chat", "responses"):
        lines = (folder / api / "text.jsonl").read_text().splitlines()
        cut = [*lines[:4], json.dumps({"harness": "cut", "after_bytes": 9}), *lines[4:]]
        (folder / f"{api}/cut.jsonl").write_text("\n".join(cut) + "\n")
        (folder / f"{api}/429.jsonl").write_text(lines[0] + "\n" + json.dumps(RATE_LIMITED) + "\n")
    with ServerThread(CassetteServer([str(folder)], match_on=None).app()) as url:
        yield url


def _typescript(url: str, names: list[str], modules: Path) -> dict[tuple[str, str], Any]:
    environment = {**os.environ, "OPENAI_BASE_URL": f"{url}/v1", "NODE_PATH": str(modules)}
    environment.pop("OPENAI_API_KEY", None)
    result = subprocess.run(
        ["node", str(SCRIPT), *names],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
        check=True,
    )
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    return {(line.pop("cassette"), line.pop("reader")): line for line in lines}


def _expected(name: str) -> dict[str, Any]:
    outcome = replay_outcome(OPENAI_LIBRARY / name)
    assert outcome.error is None, name
    return {
        "text": "".join(event.text for event in outcome.events if isinstance(event, TextEvent)),
        "tool_calls": [
            {"id": event.call.id, "name": event.call.name, "input": event.call.input}
            for event in outcome.events
            if isinstance(event, ToolCallEvent)
        ],
    }


def test_every_good_cassette_gives_the_text_and_tool_calls_of_replay(
    node_modules: Path, served: str
) -> None:
    got = _typescript(served, GOOD, node_modules)
    for name in GOOD:
        for reader in READERS:
            assert got[name, reader] == _expected(name), (name, reader)


def test_a_cut_stream_and_an_http_error_are_errors_in_both_readers(
    node_modules: Path, served: str
) -> None:
    names = ["chat/cut.jsonl", "responses/cut.jsonl", "chat/429.jsonl", "responses/429.jsonl"]
    got = _typescript(served, names, node_modules)
    for name in names:
        for reader in READERS:
            assert "error" in got[name, reader], (name, reader, got[name, reader])
    assert got["chat/429.jsonl", "create"]["error"] == "RateLimitError"


def _outcomes(runs: list[dict[tuple[str, str], Any]]) -> dict[tuple[str, str], str]:
    """What each reader made of each cassette over the runs: `raises`, `accepts`, or
    `varies` where the runs disagree."""
    seen: dict[tuple[str, str], set[str]] = {}
    for got in runs:
        for key, answer in got.items():
            seen.setdefault(key, set()).add("raises" if "error" in answer else "accepts")
    return {key: said.pop() if len(said) == 1 else VARIES for key, said in seen.items()}


def _table(outcomes: dict[tuple[str, str], str]) -> str:
    lines = [
        "| cassette | `create({stream: true})` | `.stream()` |",
        "|---|---|---|",
        *(
            f"| `{name}` | " + " | ".join(outcomes[name, reader] for reader in READERS) + " |"
            for name in sorted({name for name, _ in outcomes})
        ),
    ]
    return "\n".join(lines) + "\n"


def _holds(documented: str, now: str) -> bool:
    """A documented row holds if each cell is the one now, or the documented `varies`
    (one run of a racy reader gives either answer)."""
    then, found = cells(documented), cells(now)
    return len(then) == len(found) and all(
        said in (cell, VARIES) for said, cell in zip(then, found, strict=True)
    )


def test_what_each_reader_makes_of_each_broken_cassette_is_the_doc_table(
    node_modules: Path, served: str
) -> None:
    runs = [_typescript(served, BROKEN, node_modules) for _ in range(RUNS)]
    table = _table(_outcomes(runs))
    versions = version_line(npm=("openai",), node=True)
    check(DOC, Block("typescript-openai-table", versions, table, same=_holds))
