"""`harness import` of whole folders: go on past bad files, one summary line, progress on a tty."""

from __future__ import annotations

import gzip
import os
import pty
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import ROOT

from harness_cli.main import cli

RECORDINGS = ROOT / "tests" / "data" / "recordings"
STREAM = RECORDINGS / "vcrpy_legacy_httpx.json"
HARNESS = Path(sys.executable).parent / "harness"


def _mixed_folder(root: Path) -> Path:
    """Good, compressed, HAR, broken and foreign files, and one that is not a recording."""
    folder = root / "recordings"
    (folder / "nested").mkdir(parents=True)
    shutil.copy(STREAM, folder / "good.json")
    (folder / "nested" / "packed.yaml.gz").write_bytes(gzip.compress(STREAM.read_bytes()))
    shutil.copy(RECORDINGS / "devtools.har", folder / "nested" / "browser.har")
    (folder / "broken.yaml").write_text("interactions: [\n")
    (folder / "package.json").write_text('{"name": "app", "version": "1.0.0"}\n')
    (folder / "README.md").write_text("not a recording\n")
    return folder


def test_a_mixed_folder_imports_what_it_can_and_reports_the_rest(tmp_path: Path) -> None:
    folder = _mixed_folder(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / "good-01.jsonl").write_text("an earlier import, kept\n")
    result = CliRunner().invoke(cli, ["import", str(folder), "--out", str(out)])
    assert result.exit_code == 1
    assert sorted(path.name for path in out.iterdir()) == [
        "browser-02.jsonl",
        "browser-03.jsonl",
        "good-01.jsonl",
        "packed-01.jsonl",
    ]
    assert (out / "good-01.jsonl").read_text() == "an earlier import, kept\n"
    errors = result.stderr.splitlines()
    assert errors[0].startswith(f"{folder / 'broken.yaml'}: not a vcrpy cassette: ")
    assert errors[1] == (
        f"{out / 'good-01.jsonl'}: already exists, left as it was (use --force to replace it)"
    )
    assert errors[2].startswith(f"{folder / 'package.json'}: not a vcrpy cassette: neither")
    assert len(errors) == 3
    assert result.stdout.splitlines()[-1] == (
        "5 files: 3 cassettes written, 2 skipped, 1 kept (already there), 2 files unreadable"
    )


def test_a_folder_of_only_unusable_files_exits_2(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("{")
    (tmp_path / "b.har").write_text("[]")
    result = CliRunner().invoke(cli, ["import", str(tmp_path), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert len(result.stderr.splitlines()) == 2
    assert result.stdout == "2 files: 0 cassettes written, 0 skipped, 2 files unreadable\n"


def test_a_folder_without_recordings_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x")
    result = CliRunner().invoke(cli, ["import", str(tmp_path), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert result.stderr == f"{tmp_path}: no recordings found (*.yaml, *.yml, *.json, *.har)\n"


def test_a_missing_path_is_one_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["import", str(tmp_path / "nope"), "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert result.stderr == f"{tmp_path / 'nope'}: no such file or folder\n"


def test_no_progress_bar_off_a_terminal(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli, ["import", str(_mixed_folder(tmp_path)), "--out", str(tmp_path / "o")]
    )
    assert "importing" not in result.output


@pytest.mark.slow
def test_a_progress_bar_on_a_terminal_and_the_report_after_it(tmp_path: Path) -> None:
    folder = _mixed_folder(tmp_path)
    controller, terminal = pty.openpty()
    try:
        process = subprocess.run(
            [str(HARNESS), "import", str(folder), "--out", str(tmp_path / "o")],
            stdout=subprocess.PIPE,
            stderr=terminal,
            check=False,
        )
        os.close(terminal)
        shown = b""
        while True:
            try:
                chunk = os.read(controller, 4096)
            except OSError:  # the terminal closed: all read
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(controller)
    assert process.returncode == 1
    text = shown.decode()
    assert "importing" in text and "100%" in text
    assert text.index("100%") < text.index("broken.yaml: not a vcrpy cassette")
    assert "importing" not in process.stdout.decode()
    assert process.stdout.decode().splitlines()[-1].startswith("5 files: 4 cassettes written")


@pytest.mark.slow
def test_figure_importing_a_folder_of_2000_files(tmp_path: Path) -> None:
    """Prints the figure the docs quote; asserts the outcome, never the time."""
    folder = tmp_path / "many"
    for group in range(20):
        (folder / f"suite{group:02d}").mkdir(parents=True)
        for number in range(100):
            target = folder / f"suite{group:02d}" / f"test_{number:03d}.json"
            shutil.copy(STREAM, target)
    started = time.perf_counter()
    result = CliRunner().invoke(cli, ["import", str(folder), "--out", str(tmp_path / "o")])
    elapsed = time.perf_counter() - started
    assert result.exit_code == 0, result.output[-500:]
    assert result.stdout.splitlines()[-1] == "2000 files: 2000 cassettes written, 0 skipped"
    print(f"\nimport of 2,000 files (one stream each): {elapsed:.2f} s")
