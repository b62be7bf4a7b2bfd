"""A provider from outside the package, registered by its entry point, is one everywhere.

`tests/data/third_party_provider/` holds `thin_dialect`, a small dialect laid out as a
provider's package, and `thin_sdk`, the SDK its streams are read with. The
`thin_provider` fixture installs it as another distribution would (a `.dist-info` whose
`entry_points.txt` names it in `stream_harness.providers`, on `sys.path`); then replay
(direct and through its SDK), `harness serve`, the fault catalogue, the pytest plugin and
`harness conform` use it as they use the built-in providers, none of them told its name.
A bad entry point is told in one line and left out, never a traceback.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import ROOT, THIN, THIRD_PARTY, install_entry_point

from harness._cassette.codec import Cassette, schema
from harness._exceptions import StreamProtocolError
from harness._providers import ENTRY_POINT_GROUP, names, provider, refused, reset
from harness._replay.direct import replay_outcome
from harness_cli.main import cli

CASSETTES = THIRD_PARTY / "cassettes"
TEXT = CASSETTES / "text.jsonl"
ONE_CALL = CASSETTES / "one_call.jsonl"
WRONG_REASON = CASSETTES / "errors" / "wrong_reason.jsonl"
#: The request text.jsonl was recorded for.
ASKED = {"model": "thin-1", "input": "Capital of France?"}
TEXT_EVENTS = [
    {"type": "text", "text": "Paris is "},
    {"type": "text", "text": "the capital."},
    {"type": "done"},
]


def harness(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def test_its_entry_point_registers_it_after_the_built_in_providers(thin_provider: str) -> None:
    found = provider(THIN)
    assert names()[-1] == THIN and found.package == "thin_dialect"
    assert schema()["$defs"]["header"]["properties"]["provider"]["enum"][-1] == THIN
    assert Cassette(TEXT).dialect is found
    assert found.sdk.package == "thin_sdk"


def test_without_its_entry_point_there_is_no_such_provider() -> None:
    assert THIN not in names()
    with pytest.raises(KeyError, match="no provider 'thin'"):
        provider(THIN)


def test_it_replays_directly_and_through_its_own_sdk(thin_provider: str) -> None:
    assert replay_outcome(TEXT).to_json_lines() == TEXT_EVENTS
    error = replay_outcome(WRONG_REASON).error
    assert isinstance(error, StreamProtocolError)
    assert (error.provider, error.code) == (THIN, "wrong_reason")
    assert str(error).startswith("Thin stream protocol error: ")
    status, shown = harness("replay", "--format", "json", str(TEXT))
    assert (status, [json.loads(line) for line in shown.splitlines()]) == (0, TEXT_EVENTS)
    status, shown = harness("replay", "--via", "sdk", "--format", "json", str(ONE_CALL))
    assert status == 0
    assert json.loads(shown.splitlines()[1])["call"]["input"] == {"city": "Paris"}
    from harness import cassette_client

    client: Any = cassette_client(TEXT)  # the SDK of the cassette's provider
    with client:
        assert type(client).__name__ == "ThinClient"
        assert (
            "".join(line.get("text", "") for line in client.stream(**ASKED))
            == "Paris is the capital."
        )


def test_harness_serve_answers_its_endpoint_in_its_error_shape(thin_provider: str) -> None:
    import thin_sdk

    from harness._http.hosting import ServerThread, base_url_line
    from harness._http.server import CassetteServer

    server = CassetteServer([str(CASSETTES)], match_on=None)
    assert THIN in server.providers
    with ServerThread(server.app()) as url:
        assert base_url_line(url, [THIN]) == f"THIN_BASE_URL={url}"
        with thin_sdk.ThinClient(api_key="any", base_url=url, max_retries=0) as client:
            named = {"x-harness-cassette": "text"}
            lines = list(client.stream(model="thin-1", input="hi", extra_headers=named))
            assert lines[-1] == {"kind": "end", "reason": "stop"}
            with pytest.raises(thin_sdk.APIStatusError) as raised:
                for _ in range(4):  # three cassettes are served: the fourth finds none
                    list(client.stream(model="thin-1", input="hi"))
        assert raised.value.status_code == 404
        assert raised.value.body["error"]["type"] == "thin_error"


def test_its_fault_catalogue_is_derived_listed_and_replays_as_it_says(
    thin_provider: str, tmp_path: Path
) -> None:
    from harness.faults import PROVIDERS, catalogue, derive_variants, stream_lines

    assert THIN in PROVIDERS
    status, listed = harness("faults", "--list", "--provider", THIN)
    assert status == 0
    assert [line.split()[0] for line in listed.splitlines()] == [
        fault.name for fault in catalogue(THIN)
    ]
    variants = derive_variants(stream_lines(ONE_CALL), provider=THIN)
    assert [variant.fault.name for variant in variants] == [fault.name for fault in catalogue(THIN)]
    status, _ = harness("faults", str(ONE_CALL), "--out", str(tmp_path / "broken"))
    assert status == 0
    written = sorted((tmp_path / "broken").glob("*.jsonl"))
    assert len(written) == len([v for v in variants if not v.fault.before])
    for variant in variants:
        if variant.fault.wire:
            continue  # through a client: the plugin's test runs them
        path = tmp_path / f"{variant.fault.name}.jsonl"
        header = {"cassette": 1, "provider": THIN}
        path.write_text("\n".join(json.dumps(line) for line in [header, *variant.events]))
        error = replay_outcome(path).error
        assert isinstance(error, StreamProtocolError) and error.code == variant.expected_code


PLUGIN_TEST = """
import pytest


def answer(client):
    lines = client.stream(model="thin-1", input="Capital of France?")
    return "".join(line.get("text", "") for line in lines)


@pytest.mark.cassette("text")
def test_replay(harness_replay):
    assert [event.type for event in harness_replay.events] == ["text", "text", "done"]


@pytest.mark.cassette("text")
def test_client(harness_client, harness_requests):
    assert answer(harness_client) == "Paris is the capital."
    assert harness_requests[0].json["input"] == "Capital of France?"


@pytest.mark.cassette("one_call")
def test_rows(fault_variant):
    fault_variant.assert_caught()
"""


@pytest.mark.slow
def test_the_plugin_replays_it_and_runs_its_catalogue(
    thin_provider: str, pytester: pytest.Pytester
) -> None:
    from harness.faults import catalogue

    pytester.makeini("[pytest]\naddopts = -p no:cacheprovider\nfilterwarnings = error\n")
    shutil.copytree(CASSETTES, pytester.path / "cassettes")
    pytester.makepyfile(test_thin=PLUGIN_TEST)
    result = pytester.runpytest_inprocess()
    rows = len(catalogue(THIN))
    result.assert_outcomes(passed=2 + rows)


@pytest.mark.slow
def test_harness_conform_judges_an_adapter_of_it(thin_provider: str) -> None:
    reference = [sys.executable, str(ROOT / "tests" / "conform_openai_adapter.py")]
    status, shown = harness("conform", "--provider", THIN, "--", *reference)
    from harness._testing.conform import collect_cases

    cases = collect_cases(provider=THIN)  # its library's, and its catalogue's rows of each
    wired = sum(case.wire for case in cases)
    agree = f"{len(cases) - wired}/{len(cases) - wired} cases agree"
    assert (status, shown.splitlines()) == (
        0,
        [f"{agree} ({wired} wire-level cases skipped: --serve runs them)"],
    )
    assert {case.source for case in cases} == {str(TEXT), str(ONE_CALL), str(WRONG_REASON)}
    trusting = [sys.executable, "-c", 'import sys; sys.stdin.read(); print(\'{"type": "done"}\')']
    status, shown = harness("conform", "--provider", THIN, "--", *trusting)
    assert status == 1
    assert "wrong_reason" in shown


def _bad(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, line: str) -> None:
    install_entry_point(
        tmp_path / "site", monkeypatch, f"[{ENTRY_POINT_GROUP}]\n{line}\n", "broken_dialect"
    )


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("mistral = no_such_package", "no package no_such_package is installed"),
        ("mistral = thin_dialect:FRAMING", "is not a package's import path"),
        ("anthropic = thin_dialect", "'anthropic' is a built-in provider's name"),
        ("mistral = thin_dialect.cassettes", "no package thin_dialect.cassettes"),
    ],
)
def test_a_bad_entry_point_is_told_in_one_line_and_left_out(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    line: str,
    why: str,
) -> None:
    _bad(tmp_path, monkeypatch, line)
    name = line.split(" = ")[0]
    with caplog.at_level(logging.WARNING, logger="harness.providers"):
        registered = names()
    assert registered == (
        "anthropic",
        "openai-chat",
        "openai-responses",
        "bedrock-converse",
        "gemini",
    )
    [record] = caplog.records
    assert "\n" not in record.getMessage() and why in record.getMessage()
    assert why in refused()[name]
    if name != "anthropic":
        with pytest.raises(KeyError, match="its entry point was left out"):
            provider(name)
    reset()


@pytest.mark.slow
def test_a_command_with_a_bad_entry_point_installed_says_so_on_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _bad(tmp_path, monkeypatch, "mistral = no_such_package")
    command = "from harness_cli.main import cli; cli()"
    ran = subprocess.run(
        [sys.executable, "-c", command, "replay", str(ROOT / "cassettes" / "text_only.jsonl")],
        capture_output=True,
        text=True,
        env=os.environ.copy(),
        check=False,
    )
    assert ran.returncode == 0
    assert ran.stderr.splitlines() == [
        f"stream-harness: entry point mistral = no_such_package (group {ENTRY_POINT_GROUP}) "
        "left out: no package no_such_package is installed"
    ]
    reset()
