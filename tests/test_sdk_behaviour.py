"""What the installed SDK readers do with each broken stream, against what the docs say
(docs/sdk-readers.md, `harness/sdk_behaviour.json`), and `harness doctor`."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import ROOT

from harness._testing import sdk_behaviour as behaviour
from harness_cli.main import cli


def _changes(provider: str) -> list[behaviour.Change]:
    documented = behaviour.documented()
    return behaviour.changed_rows(
        provider, behaviour.measure(provider), documented["rows"][provider]
    )


@pytest.mark.slow
@pytest.mark.parametrize("provider", behaviour.PROVIDERS)
def test_the_installed_sdk_readers_do_what_the_docs_say(provider: str) -> None:
    changes = _changes(provider)
    documented = behaviour.measured_with(behaviour.documented())
    installed = {name: behaviour.installed_version(name) for name in behaviour.MEASURED_WITH}
    assert not changes, (
        f"the installed release reads {len(changes)} row(s) otherwise than documented "
        f"(documented with {documented}, installed {installed}); review, then `make tables`:\n"
        + "\n".join(str(change) for change in changes)
    )


def test_the_page_shows_the_documented_measurement() -> None:
    text = (ROOT / "docs" / "sdk-readers.md").read_text()
    assert behaviour.table(behaviour.documented()) in text
    documented = behaviour.documented()["rows"]
    assert set(documented) == set(behaviour.PROVIDERS)
    for provider, rows in documented.items():
        assert len(rows) > 30 and all(
            set(r) == set(behaviour.READERS[provider]) for r in rows.values()
        )


def test_each_provider_page_shows_its_rows_as_documented() -> None:
    pages = behaviour.summary_pages(ROOT / "docs")
    assert {page.name: named for page, named in pages.items()} == {
        "bedrock-converse.md": ["bedrock-converse"],
        "gemini.md": ["gemini"],
    }
    documented = behaviour.documented()
    for page in pages:
        text = page.read_text()
        assert behaviour.with_summaries(text, documented) == text, f"{page.name}: `make tables`"
    shown = behaviour.summary(documented, "bedrock-converse")
    assert "| raises EventStreamError | `internalServerException_mid_stream`, " in shown
    assert shown.startswith(f"Measured with boto3 {documented['tested']['boto3']} ")


def test_a_summary_groups_the_faults_by_outcome_and_splits_those_whose_cassettes_differ() -> None:
    measured = {
        "tested": {"boto3": "1.0"},
        "rows": {
            "bedrock-converse": {
                "text/cut": {"converse_stream()": "returns"},
                "text/stall": {"converse_stream()": "raises connection_error:ReadTimeout"},
                "two_tools/cut": {"converse_stream()": "raises IndexError"},
                "two_tools/stall": {"converse_stream()": "raises connection_error:ReadTimeout"},
                "two_tools/nan": {"converse_stream()": "returns"},
            }
        },
    }
    assert behaviour.summary(measured, "bedrock-converse").splitlines()[3:] == [
        "|---|---|",
        "| returns | `text/cut`, `nan` |",
        "| raises IndexError | `two_tools/cut` |",
        "| raises connection_error:ReadTimeout | `stall` |",
    ]


def test_changed_rows_names_each_row_and_reader_that_differs() -> None:
    then = {"text/a": {"x()": "returns", "y()": "returns"}, "text/b": {"x()": "returns"}}
    now = {"text/a": {"x()": "returns", "y()": "raises IndexError"}, "text/c": {"x()": "returns"}}
    shown = [str(change) for change in behaviour.changed_rows("openai-chat", now, then)]
    assert shown == [
        "openai-chat text/a via y(): documented returns, now raises IndexError",
        "openai-chat text/b via x(): documented returns, now (not derived)",
        "openai-chat text/c via x(): documented (not measured), now returns",
    ]


def test_the_lower_bounds_are_pyproject_tomls() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = [*project["dependencies"], *project["optional-dependencies"]["test"]]
    bounds = behaviour.lower_bounds()
    for requirement in declared:
        name, _, lowest = requirement.partition(">=")
        assert bounds[behaviour.project_name(name.partition("[")[0])] == lowest


def test_each_sdks_range_is_told_by_its_import_name_too() -> None:
    """An SDK named as it is imported (`google.genai`) finds its project's bound
    (`google-genai>=` in pyproject.toml)."""
    bounds = behaviour.lower_bounds()
    for package in behaviour.PACKAGES:
        if package in {"anthropic", "openai", "boto3", "google.genai"}:
            assert behaviour.project_name(package) in bounds, package


@pytest.mark.parametrize(
    ("installed", "status"),
    [
        (None, "not installed"),
        ("2.9.3", "older than the lowest release supported (2.10)"),
        ("2.10", "tested (2.10 to 2.17.0)"),
        ("2.17.0", "tested (2.10 to 2.17.0)"),
        ("2.17.1rc1", "newer than tested (2.17.0): the rows below say whether it behaves the same"),
        ("2.100.0", "newer than tested (2.17.0): the rows below say whether it behaves the same"),
    ],
)
def test_a_version_is_placed_against_the_tested_range(installed: str | None, status: str) -> None:
    assert behaviour.version_status(installed, "2.17.0", "2.10") == status


def _documented_otherwise(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A documentation that says one Chat row reads otherwise than it does; its row."""
    documented = behaviour.documented()
    row = "text/cut_connection"
    reader = "chat.completions.stream()"
    documented["rows"]["openai-chat"][row][reader] = "raises connection_error:Invented"
    path = tmp_path / "sdk_behaviour.json"
    path.write_text(json.dumps(documented))
    monkeypatch.setattr(behaviour, "BEHAVIOUR_FILE", path)
    return f"openai-chat {row} via {reader}: documented raises connection_error:Invented, now "


@pytest.mark.slow
def test_doctor_lists_the_rows_that_differ_and_exits_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = _documented_otherwise(tmp_path, monkeypatch)
    result = CliRunner().invoke(cli, ["doctor", "--provider", "openai-chat"])
    assert result.exit_code == 1, result.output
    rows = len(behaviour.documented()["rows"]["openai-chat"])
    assert f"openai-chat: {rows} rows x 2 readers, 1 differ" in result.output
    [line] = [line.strip() for line in result.output.splitlines() if "Invented" in line]
    assert line.startswith(expected)
    assert "anthropic            " in result.output  # every package's version is listed


def test_doctor_serves_the_rows_to_the_clients_on_each_host_the_dialect_is_served_on() -> None:
    assert behaviour.hosts("anthropic") == ("bedrock", "vertex")
    assert behaviour.hosts("openai-chat") == ()


def test_doctor_leaves_a_host_whose_extra_is_missing_unchecked_and_says_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`AnthropicBedrock` reads its frames with botocore (the `bedrock` extra's): without
    it the Bedrock host's rows are not compared (not a difference, not a failure)."""
    import sys

    assert behaviour.host_unusable("anthropic", "bedrock") is None
    monkeypatch.setitem(sys.modules, "botocore", None)
    said = behaviour.host_unusable("anthropic", "bedrock")
    assert said == (
        'Anthropic on Bedrock needs botocore, not installed; pip install "stream-harness[bedrock]"'
    )
    assert behaviour.host_unusable("anthropic", "vertex") is None


@pytest.mark.slow
def test_doctor_reads_the_rows_through_anthropicbedrock_and_anthropicvertex_as_documented(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    documented = behaviour.documented()
    row, reader = "text_only/drop_message_stop", "messages.create(stream=True)"
    assert reader in documented["rows"]["anthropic"][row]
    documented["rows"]["anthropic"][row][reader] = "raises connection_error:Invented"
    path = tmp_path / "sdk_behaviour.json"
    path.write_text(json.dumps(documented))
    monkeypatch.setattr(behaviour, "BEHAVIOUR_FILE", path)
    result = CliRunner().invoke(cli, ["doctor", "--provider", "anthropic"])
    assert result.exit_code == 1, result.output
    rows = len(documented["rows"]["anthropic"])
    for host in ("bedrock", "vertex"):
        assert f"anthropic on {host}: {rows} rows x 2 readers, 1 differ" in result.output
        assert f"anthropic on {host} {row} via {reader}: documented raises" in result.output


@pytest.mark.slow
def test_boto3s_reader_is_served_through_its_own_bedrock_runtime_client() -> None:
    from harness._replay.clients import cassette_client

    reader = behaviour.READERS["bedrock-converse"]["converse_stream()"]
    library = ROOT / "cassettes" / "bedrock" / "converse"
    client = cassette_client(library / "text.jsonl")
    assert type(client).__module__ == "botocore.client"
    client.close()
    assert behaviour._outcome(reader, [library / "errors" / "missing_message_stop.jsonl"], {}) == (
        "returns"
    )
    thrown = behaviour._outcome(reader, [library / "errors" / "throttling_exception.jsonl"], {})
    assert thrown == "raises EventStreamError"


@pytest.mark.slow
def test_doctor_checks_boto3_and_names_a_row_it_reads_otherwise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    documented = behaviour.documented()
    row, reader = "two_tools/drop_tool_stop", "converse_stream()"
    documented["rows"]["bedrock-converse"][row][reader] = "raises Invented"
    path = tmp_path / "sdk_behaviour.json"
    path.write_text(json.dumps(documented))
    monkeypatch.setattr(behaviour, "BEHAVIOUR_FILE", path)
    result = CliRunner().invoke(cli, ["doctor", "--provider", "bedrock-converse"])
    assert result.exit_code == 1, result.output
    rows = len(documented["rows"]["bedrock-converse"])
    assert f"bedrock-converse: {rows} rows x 1 reader, 1 differ" in result.output
    assert (
        f"bedrock-converse {row} via {reader}: documented raises Invented, now returns"
        in result.output
    )
    assert "boto3" in result.output
