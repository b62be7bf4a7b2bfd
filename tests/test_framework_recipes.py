"""docs/clients.md's recipes, "Frameworks under the cassette client": one per framework,
each run as it is shown (a test module of its own, beside the cassettes it names) where
its framework is installed; none reaching into a framework's private attributes. And
`harness.with_client`, the helper the langchain-anthropic recipe needs instead."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import sys
from typing import Any

import pytest
from conftest import LIBRARY, ROOT, not_installed

from harness import InputError, async_cassette_client, cassette_client, with_client
from harness.builder import StreamBuilder

DOC = ROOT / "docs" / "clients.md"
SECTION = "## Frameworks under the cassette client"
#: Each recipe's heading, the test module it is written to, and what it imports beyond
#: the harness's dependencies.
RECIPES: dict[str, tuple[str, tuple[str, ...]]] = {
    "The SDK's tool runner": ("test_tool_runner.py", ()),
    "pydantic-ai": ("test_pydantic_ai.py", ("pydantic_ai",)),
    "langchain-anthropic": ("test_langchain_anthropic.py", ("langchain_anthropic",)),
    "litellm": ("test_litellm.py", ("litellm", "httpx")),
}
#: The answer once the tools have run, as the page says it is written.
LISBON = StreamBuilder().text(0, "It is 18 degrees and 14:05 in Lisbon.").stop()
#: What reaches into a framework: a private attribute, its `__dict__`, `setattr`.
PRIVATE = re.compile(r"\.\s*_[A-Za-z]|__dict__|\bsetattr\(|\bvars\(")


def _recipes() -> dict[str, str]:
    """The section's Python blocks, by their heading."""
    section = DOC.read_text(encoding="utf-8").split(SECTION, 1)[1].split("\n## ", 1)[0]
    found = {}
    for part in section.split("\n### ")[1:]:
        heading, _, body = part.partition("\n")
        blocks = re.findall(r"```python\n(.*?)```", body, re.S)
        assert len(blocks) == 1, f"{heading}: {len(blocks)} Python blocks, not one"
        found[heading] = blocks[0]
    return found


def test_the_page_has_one_recipe_per_framework_and_none_touches_a_private_attribute() -> None:
    recipes = _recipes()
    assert list(recipes) == list(RECIPES)
    for heading, code in recipes.items():
        assert not PRIVATE.search(code), f"{heading}: {PRIVATE.search(code)}"


@pytest.fixture(scope="module")
def recipe_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Every recipe whose framework is installed, run once by pytest in a project of its
    own: each test's outcome, by its node id; and the whole output under "output"."""
    project = tmp_path_factory.mktemp("recipes")
    (project / "pytest.ini").write_text("[pytest]\n")
    (project / "cassettes").mkdir()
    shutil.copy(LIBRARY / "two_tools.jsonl", project / "cassettes")
    LISBON.write(project / "cassettes" / "lisbon.jsonl", "the answer once both tools have run")
    for heading, code in _recipes().items():
        name, needs = RECIPES[heading]
        if not_installed(*needs) is None:
            (project / name).write_text(code, encoding="utf-8")
    environment = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-rA", "-p", "no:cacheprovider", "-W", "ignore"],
        cwd=project,
        capture_output=True,
        text=True,
        env=environment,
        timeout=600,
    )
    outcomes = {}
    for line in result.stdout.splitlines():
        outcome, _, node = line.partition(" ")
        if outcome in {"PASSED", "FAILED", "ERROR", "SKIPPED"} and "::" in node:
            outcomes[node.split(" ")[0]] = outcome
    outcomes["output"] = result.stdout + result.stderr
    return outcomes


def _recipe_params() -> list[Any]:
    params = []
    for heading, (_, needs) in RECIPES.items():
        reason = not_installed(*needs)
        marks = [pytest.mark.skip(reason=reason)] if reason else []
        params.append(pytest.param(heading, marks=[pytest.mark.slow, *marks], id=heading))
    return params


@pytest.mark.parametrize("heading", _recipe_params())
def test_the_recipe_runs_as_shown_and_passes(recipe_run: dict[str, str], heading: str) -> None:
    name, _ = RECIPES[heading]
    ran = {node: outcome for node, outcome in recipe_run.items() if node.startswith(f"{name}::")}
    assert ran, f"{name} ran no test:\n{recipe_run['output']}"
    assert set(ran.values()) == {"PASSED"}, recipe_run["output"]


def test_with_client_refuses_what_is_not_a_chat_anthropic() -> None:
    client = cassette_client(LIBRARY / "two_tools.jsonl")
    with pytest.raises(InputError) as raised:
        with_client(object(), client)
    assert str(raised.value) == "with_client takes a langchain_anthropic ChatAnthropic, not object"


@pytest.mark.slow
@pytest.mark.skipif(
    not_installed("langchain_anthropic") is not None,
    reason=str(not_installed("langchain_anthropic")),
)
def test_with_client_gives_a_copy_its_client_and_refuses_what_is_not_one() -> None:
    from anthropic import Anthropic
    from langchain_anthropic import ChatAnthropic

    chat = ChatAnthropic(model="claude-sonnet-5", max_tokens=64, api_key="unused")  # type: ignore[call-arg, arg-type]
    sync = cassette_client(LIBRARY / "text_only.jsonl")
    served = with_client(chat, sync)
    assert served is not chat and served.invoke("Go").content == "The file has three sections."
    assert isinstance(chat._client, Anthropic) and chat._client is not sync  # the original's own
    asynchronous = async_cassette_client(LIBRARY / "two_tools.jsonl")
    message = asyncio.run(with_client(served, asynchronous).ainvoke("Go"))
    assert [call["name"] for call in message.tool_calls] == ["get_weather", "get_time"]
    with pytest.raises(InputError) as raised:
        with_client(chat, "a client")  # type: ignore[arg-type]
    assert str(raised.value) == (
        "with_client sends through an anthropic.Anthropic or AsyncAnthropic, not str"
    )
