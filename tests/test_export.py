"""`harness export --to vcr`: vcrpy replays the exported cassettes, and import gives them back.

Each exported file is replayed by vcrpy itself (`record_mode="none"`) under the real
Anthropic client, through the adapter: it must end as the harness's own replay of the
cassette ends. Fault variants end in the outcome their header expects.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import vcr
import yaml
from anthropic import Anthropic
from click.testing import CliRunner
from conftest import LIBRARY

from harness import Cassette, replay_outcome, to_model_events
from harness._replay.direct import failure_code
from harness._testing.coverage import outcome_code
from harness_cli.main import cli

CASSETTES = sorted(LIBRARY.glob("*.jsonl")) + sorted((LIBRARY / "errors").glob("*.jsonl"))


def _code_via_vcrpy(path: Path) -> str:
    """How a stream replayed by vcrpy, through the SDK and the adapter, ends."""
    with (
        vcr.VCR(record_mode="none").use_cassette(str(path)),
        Anthropic(api_key="sk-not-a-real-key", max_retries=0) as client,
    ):
        try:
            stream = client.messages.create(
                model="claude-harness-test",
                max_tokens=64,
                messages=[{"role": "user", "content": "hi"}],
                stream=True,
            )
            list(to_model_events(stream))
        except Exception as error:
            code = failure_code(error)
            if code is None:
                raise
            return code
    return "done"


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("exported")
    args = ["export", *map(str, CASSETTES), "--to", "vcr", "--out", str(out)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    return out


@pytest.mark.parametrize("path", CASSETTES, ids=lambda path: path.stem)
def test_vcrpy_replays_an_exported_cassette_to_the_same_outcome(exported: Path, path: Path) -> None:
    assert _code_via_vcrpy(exported / f"{path.stem}.yaml") == outcome_code(replay_outcome(path))


@pytest.mark.slow
def test_vcrpy_replays_every_exported_fault_variant_to_its_expected_outcome(
    tmp_path: Path,
) -> None:
    runner = CliRunner()
    good = LIBRARY / "interleaved.jsonl"
    faults = runner.invoke(cli, ["faults", str(good), "--out", str(tmp_path / "broken")])
    assert faults.exit_code == 0, faults.output
    variants = sorted((tmp_path / "broken").glob("*.jsonl"))
    assert len(variants) > 10
    export = runner.invoke(
        cli, ["export", str(tmp_path / "broken"), "--to", "vcr", "--out", str(tmp_path / "vcr")]
    )
    assert export.exit_code == 0, export.output
    for variant in variants:
        header = Cassette(variant).header
        assert header is not None
        if header["fault"] in ("cut_mid_event", "stall"):
            continue  # a vcrpy cassette keeps a body, not a dropped connection or its timing
        exported = tmp_path / "vcr" / f"{variant.stem}.yaml"
        assert exported.read_text().startswith(
            f"# Exported by stream-harness from {variant}\n# fault {header['fault']}: "
        )
        assert _code_via_vcrpy(exported) == header["expect"], variant.name


def test_export_then_import_gives_the_same_events_and_request(
    exported: Path, tmp_path: Path
) -> None:
    result = CliRunner().invoke(cli, ["import", str(exported), "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    for path in CASSETTES:
        back = Cassette(tmp_path / f"{path.stem}-01.jsonl")
        assert list(back.events()) == list(Cassette(path).events()), path.name
        original = Cassette(path).header or {}
        assert back.header is not None
        if "request" in original:
            assert back.header["request"] == original["request"]


def test_a_recorded_request_and_sdk_version_go_into_the_vcrpy_request(tmp_path: Path) -> None:
    source = tmp_path / "rec.jsonl"
    request = {"model": "claude-haiku-4-5", "max_tokens": 16, "messages": []}
    header = {"cassette": 1, "source": "recorded", "sdk_version": "0.69.0", "request": request}
    events = [json.loads(line) for line in (LIBRARY / "text_only.jsonl").read_text().splitlines()]
    events = [event for event in events if "cassette" not in event]
    source.write_text("".join(json.dumps(line) + "\n" for line in [header, *events]))
    result = CliRunner().invoke(cli, ["export", str(source), "--to", "vcr", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    interaction = yaml.safe_load((tmp_path / "rec.yaml").read_text())["interactions"][0]
    assert json.loads(interaction["request"]["body"]) == {**request, "stream": True}
    assert interaction["request"]["headers"]["x-stainless-package-version"] == ["0.69.0"]


def test_an_existing_output_is_left_as_it_was(tmp_path: Path) -> None:
    (tmp_path / "text_only.yaml").write_text("mine\n")
    args = ["export", str(LIBRARY / "text_only.jsonl"), "--to", "vcr", "--out", str(tmp_path)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1
    assert result.stderr == (
        f"{tmp_path / 'text_only.yaml'}: already exists, left as it was (use --force)\n"
    )
    assert (tmp_path / "text_only.yaml").read_text() == "mine\n"
    assert CliRunner().invoke(cli, [*args, "--force"]).exit_code == 0


def test_an_unusable_cassette_is_one_line_and_the_others_still_export(tmp_path: Path) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"type": "content_block_delta"}\n')
    args = [str(broken), str(LIBRARY / "text_only.jsonl")]
    result = CliRunner().invoke(cli, ["export", *args, "--to", "vcr", "--out", str(tmp_path / "o")])
    assert result.exit_code == 1
    assert result.stderr.startswith(f"{broken}:1: ")
    assert result.stderr.count("\n") == 1
    assert (tmp_path / "o" / "text_only.yaml").exists()


def test_export_out_naming_a_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    target = tmp_path / "taken"
    target.write_text("keep me\n")
    args = ["export", str(LIBRARY / "text_only.jsonl"), "--to", "vcr", "--out", str(target)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2
    assert result.stderr == f"{target}: exists and is not a folder\n"
    assert target.read_text() == "keep me\n"


def test_directives_are_not_carried_over(tmp_path: Path) -> None:
    events = list(Cassette(LIBRARY / "text_only.jsonl").events())
    recorded = tmp_path / "recorded.jsonl"
    lines = []
    for number, event in enumerate(events):
        lines += [{"harness": "at", "ms": number * 40}, event]
    lines.append({"harness": "abort"})
    recorded.write_text("".join(json.dumps(line) + "\n" for line in lines))
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["export", str(recorded), "--to", "vcr", "--out", str(out)])
    assert result.exit_code == 0, result.output
    body = yaml.safe_load((out / "recorded.yaml").read_text())["interactions"][0]["response"]
    assert "harness" not in body["body"]["string"]
    assert body["body"]["string"].count("event: ") == len(events)
