"""Every registered provider keeps the promises docs/providers.md makes of one."""

from __future__ import annotations

import ast
import json
import pickle
import re
from pathlib import Path

import pytest

from harness._cassette.codec import EVENT_SCHEMAS, schema
from harness._exceptions import ERROR_TABLES, StreamProtocolError
from harness._providers import PACKAGES, provider

ROOT = Path(__file__).resolve().parent.parent
PROVIDERS = ROOT / "harness" / "_providers"


def test_the_registry_and_the_schema_name_the_same_providers() -> None:
    assert sorted(PACKAGES) == sorted(EVENT_SCHEMAS)
    assert sorted(PACKAGES) == sorted(schema()["$defs"]["header"]["properties"]["provider"]["enum"])


def test_the_docs_show_the_registry_as_it_is() -> None:
    page = (ROOT / "docs" / "providers.md").read_text(encoding="utf-8")
    for name, package in PACKAGES.items():
        assert f'        "{name}": "{package}",\n' in page


@pytest.mark.parametrize("name", sorted(PACKAGES))
def test_a_provider_is_a_subpackage_saying_what_lives_there(name: str) -> None:
    folder = PROVIDERS / PACKAGES[name]
    docstring = ast.get_docstring(ast.parse((folder / "__init__.py").read_text()))
    assert docstring
    modules = sorted(p.stem for p in folder.glob("*.py") if p.stem != "__init__")
    assert {"adapter", "errors", "framing", "faults", "guard", "interop", "tracing"} <= set(modules)
    assert (folder / "events.schema.json").is_file()
    assert [m for m in modules if f"`{m}`" not in docstring] == []


@pytest.mark.parametrize("name", sorted(PACKAGES))
def test_a_provider_answers_with_its_table_and_its_drivers(name: str) -> None:
    found = provider(name)
    assert found.table is ERROR_TABLES[name]
    assert callable(found.to_model_events) and callable(found.ato_model_events)
    code = next(iter(found.table.templates))
    fields = {field: "0" for field in re.findall(r"\{(\w+)\}", found.table.templates[code])}
    error = StreamProtocolError(code, provider=name, **fields)
    assert str(error).startswith(found.table.prefix)
    again = pickle.loads(pickle.dumps(error))
    assert (again.code, again.provider, str(again)) == (code, name, str(error))


def test_an_unknown_provider_is_named_with_the_known_ones() -> None:
    with pytest.raises(KeyError, match=r"no provider 'gemini' \(known: anthropic, openai-chat"):
        provider("gemini")


@pytest.mark.parametrize("name", sorted(PACKAGES))
def test_no_provider_imports_another_or_an_sdk(name: str) -> None:
    others = {p for p in PACKAGES.values() if p != PACKAGES[name]}
    for path in (PROVIDERS / PACKAGES[name]).glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                parts = node.module.split(".")
                assert not (len(parts) > 2 and parts[1] == "_providers" and parts[2] in others)
                if node.col_offset == 0:  # at import time
                    assert parts[0] not in {"anthropic", "openai"}, path


def test_each_provider_brings_its_event_lines_schema_and_no_two_clash() -> None:
    seen: dict[str, str] = {}
    for name in PACKAGES:
        part = provider(name).events_schema
        assert part["line"] in part["$defs"]
        assert EVENT_SCHEMAS[name] == part["line"]
        for definition in part["$defs"]:
            assert definition not in seen, f"{name} and {seen[definition]} both define it"
            seen[definition] = name
    assert set(seen) <= set(schema()["$defs"])


def test_validate_prints_the_whole_schema_or_asks_for_a_path() -> None:
    from click.testing import CliRunner

    from harness_cli.main import cli

    printed = CliRunner().invoke(cli, ["validate", "--schema"])
    assert printed.exit_code == 0
    assert json.loads(printed.output) == schema()
    asked = CliRunner().invoke(cli, ["validate"])
    assert asked.exit_code == 2
    assert "give a cassette PATH to check, or --schema" in asked.output


@pytest.mark.parametrize("name", sorted(PACKAGES))
def test_every_provider_names_its_trace_rows_through_the_same_functions(name: str) -> None:
    tracing = provider(name).module("tracing")
    assert sorted(tracing.__all__) == [
        "arguments",
        "compared",
        "describe",
        "machine",
        "open_items",
        "shown_text",
    ]
    assert tracing.shown_text({}) == ""
    assert tracing.arguments({}) == []
    assert tracing.open_items(tracing.machine(), 4) == ((), 0)
