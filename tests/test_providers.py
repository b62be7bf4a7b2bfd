"""Every registered provider keeps the promises docs/providers.md makes of one.

The contract is one set of tests driven by the registry: each runs for every built-in
provider and for `thin`, a provider from outside the package registered by its entry
point (`tests/data/third_party_provider/`, installed by the `thin_provider` fixture), so
a new provider, built in or not, is tested by the same tests.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import json
import pickle
import re
from pathlib import Path

import pytest
from conftest import THIN

from harness._cassette.codec import EVENT_SCHEMAS, schema
from harness._exceptions import ERROR_TABLES, StreamProtocolError
from harness._providers import PACKAGES, REQUIRED, Provider, names, provider, providers
from harness._providers.wire import DirectBuilders

ROOT = Path(__file__).resolve().parent.parent
PROVIDERS = ROOT / "harness" / "_providers"
#: The parts every built-in provider has (a third party's may leave out all but `REQUIRED`).
BUILT_IN_PARTS = {
    "adapter",
    "client",
    "errors",
    "faults",
    "framing",
    "guard",
    "interop",
    "reading",
    "tracing",
}
#: Every provider the contract runs for: the built-in ones, and one from outside.
CONTRACT = [*sorted(PACKAGES), THIN]


@pytest.fixture(params=CONTRACT)
def found(request: pytest.FixtureRequest) -> Provider:
    """Each provider of the contract, registered (the third party's by its entry point)."""
    if request.param == THIN:
        request.getfixturevalue("thin_provider")
    return provider(request.param)


def _folder(found: Provider) -> Path:
    spec = importlib.util.find_spec(found.package)
    assert spec is not None and spec.submodule_search_locations is not None
    return Path(next(iter(spec.submodule_search_locations)))


def test_the_registry_and_the_schema_name_the_same_providers() -> None:
    assert sorted(PACKAGES) == sorted(EVENT_SCHEMAS) == sorted(names())
    assert sorted(PACKAGES) == sorted(schema()["$defs"]["header"]["properties"]["provider"]["enum"])


def test_a_provider_by_its_entry_point_joins_the_schema(thin_provider: str) -> None:
    assert [*PACKAGES, THIN] == list(EVENT_SCHEMAS) == list(names())
    assert schema()["$defs"]["header"]["properties"]["provider"]["enum"] == [*PACKAGES, THIN]


def test_the_docs_show_the_registry_as_it_is() -> None:
    page = (ROOT / "docs" / "providers.md").read_text(encoding="utf-8")
    for name, package in PACKAGES.items():
        assert f'        "{name}": "{package}",\n' in page


def test_a_provider_is_a_package_saying_what_lives_there(found: Provider) -> None:
    folder = _folder(found)
    docstring = ast.get_docstring(ast.parse((folder / "__init__.py").read_text()))
    assert docstring
    modules = sorted(p.stem for p in folder.glob("*.py") if p.stem != "__init__")
    assert set(REQUIRED) <= set(modules)
    assert (folder / "events.schema.json").is_file()
    assert [m for m in modules if f"`{m}`" not in docstring] == []
    assert [part for part in modules if not found.has(part)] == []


@pytest.mark.parametrize("name", sorted(PACKAGES))
def test_a_built_in_provider_has_every_part(name: str) -> None:
    folder = PROVIDERS / PACKAGES[name]
    assert {p.stem for p in folder.glob("*.py")} >= BUILT_IN_PARTS


def test_a_provider_answers_with_its_table_and_its_drivers(found: Provider) -> None:
    name = found.name
    assert found.table is ERROR_TABLES[name]
    assert callable(found.to_model_events) and callable(found.ato_model_events)
    code = next(iter(found.table.templates))
    fields = {field: "0" for field in re.findall(r"\{(\w+)\}", found.table.templates[code])}
    error = StreamProtocolError(code, provider=name, **fields)
    assert str(error).startswith(found.table.prefix)
    again = pickle.loads(pickle.dumps(error))
    assert (again.code, again.provider, str(again)) == (code, name, str(error))


def test_an_unknown_provider_is_named_with_the_known_ones() -> None:
    with pytest.raises(KeyError, match=r"no provider 'mistral' \(known: anthropic, openai-chat"):
        provider("mistral")


def test_no_provider_imports_another_or_an_sdk(found: Provider) -> None:
    others = {each.package for each in providers() if each is not found}
    sdks = {each.sdk.package for each in providers() if each.has("client")}
    for path in _folder(found).glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            modules: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                modules = [node.module]
            elif isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            for module in modules:
                assert not any(
                    module == other or module.startswith(f"{other}.") for other in others
                )
                if isinstance(node, ast.stmt) and node.col_offset == 0:  # at import time
                    assert module.split(".")[0] not in sdks, path


def test_each_provider_brings_its_event_lines_schema_and_no_two_clash(thin_provider: str) -> None:
    seen: dict[str, str] = {}
    for name in names():
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


def test_every_provider_names_its_trace_rows_through_the_same_functions(found: Provider) -> None:
    tracing = found.tracing
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


@pytest.mark.parametrize("name", sorted(PACKAGES))
@pytest.mark.parametrize("junk", [None, 3, [1], "abc"], ids=["none", "int", "list", "string"])
def test_every_adapter_reads_an_item_that_is_no_event_by_its_rules(name: str, junk: object) -> None:
    """An item neither a line's dict nor an SDK object is judged by the adapter's rules (a
    protocol error, or passed over), never an AttributeError from inside."""
    machine = provider(name).tracing.machine()
    with contextlib.suppress(StreamProtocolError):
        assert isinstance(machine.feed(junk), list)


def test_every_provider_says_which_sdk_reads_it_and_how(found: Provider) -> None:
    """Its `client` (the SDK: its package, classes, base URL, variables; how `harness
    record` records it) and its `reading` (the SDK's readers, `create` first; what direct
    replay feeds the adapter): what replay, the cassette clients, serve and record ask."""
    sdk = found.sdk
    assert sdk.package and len(sdk.clients) == 2 and sdk.base_url.startswith("https://")
    assert sdk.env.key_variable and sdk.env.base_url_variable
    assert found.client_env is sdk.env
    assert found.recording in {"sdk", "http"}
    if found.recording == "http":
        assert callable(found.module("client").auth_headers)
    assert found.readers[0] == "create"
    for reader in found.readers:
        assert callable(getattr(found.reading, f"{reader}_items"))
        assert callable(getattr(found.reading, f"a{reader}_items"))
    assert isinstance(found.reading.direct_builders(False), DirectBuilders)
    assert found.reading.error_line(ValueError("not the API's")) is None


def test_every_provider_names_what_it_answers_a_plain_request_with(found: Provider) -> None:
    """What a skipped stream row's reason names (the plugin's fault runs): its `interop`'s
    `answer`, or a name that is no provider's for one without `interop` (`thin`)."""
    if found.has("interop"):
        assert found.whole_answer == found.recorded.answer != ""
    else:
        assert found.whole_answer == "its whole answer"


def test_every_provider_serves_its_endpoints_and_claims_its_calls(found: Provider) -> None:
    """Its endpoints are `harness serve`'s routes to it; a provider with a `guard` claims a
    POST to each (the strict guard's dispatch) and no other provider's."""
    from harness._http.dialects import post_routes
    from harness._strict.dialects import provider_of

    framing = found.framing
    assert framing.endpoints
    for endpoint in framing.endpoints:
        assert post_routes()[endpoint] is found
        if found.has("guard"):
            assert provider_of("POST", f"/prefix{endpoint}") is found


def test_every_catalogue_row_expects_a_code_of_its_table_or_the_wire(found: Provider) -> None:
    wire_outcomes = ("done", "api_error:", "connection_error:")
    for fault in found.catalogue:
        assert fault.expect in found.table.templates or fault.expect.startswith(wire_outcomes)
