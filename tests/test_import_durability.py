"""Many files, one sync (`AtomicBatch`, `harness import`): a killed run leaves every
cassette whole or absent, and the next run finishes the job.

The import writes each cassette to a temporary file, syncs once, renames them all and
syncs the folder; the folder is scanned once a run, not before every file.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT

from harness._cassette.codec import Cassette
from harness._files import AtomicBatch

RECORDING = ROOT / "tests" / "cassettes" / "test_chat.yaml"
#: more files than one batch of the import (256), so a run commits several times
FILES = 600


def test_nothing_changes_before_the_commit_and_everything_after(tmp_path: Path) -> None:
    old = tmp_path / "old.jsonl"
    old.write_bytes(b"old\n")
    with AtomicBatch() as batch:
        for name in ("old.jsonl", "new.jsonl"):
            with batch.write(tmp_path / name) as handle:
                handle.write(b"new\n")
        assert old.read_bytes() == b"old\n"
        assert not (tmp_path / "new.jsonl").exists()
        assert len(batch) == 2
        assert batch.commit() == []
    assert old.read_bytes() == (tmp_path / "new.jsonl").read_bytes() == b"new\n"
    assert [path.name for path in tmp_path.iterdir() if path.suffix == ".tmp"] == []


def test_leaving_without_a_commit_removes_the_temporaries(tmp_path: Path) -> None:
    with AtomicBatch() as batch, batch.write(tmp_path / "a.jsonl") as handle:
        handle.write(b"a\n")
    assert list(tmp_path.iterdir()) == []


def test_a_failed_write_leaves_nothing_and_the_rest_commits(tmp_path: Path) -> None:
    with AtomicBatch() as batch:
        with pytest.raises(RuntimeError), batch.write(tmp_path / "bad.jsonl") as handle:
            handle.write(b"half")
            raise RuntimeError("the stream broke")
        with batch.write(tmp_path / "good.jsonl") as handle:
            handle.write(b"good\n")
        batch.commit()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["good.jsonl"]


def test_a_file_that_appears_before_the_commit_is_kept_and_named(tmp_path: Path) -> None:
    target = tmp_path / "a.jsonl"
    with AtomicBatch() as batch:
        with batch.write(target, overwrite=False) as handle:
            handle.write(b"ours\n")
        target.write_bytes(b"theirs\n")
        assert batch.commit() == [str(target)]
    assert target.read_bytes() == b"theirs\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["a.jsonl"]


def test_a_folder_is_scanned_for_stale_temporaries_once(tmp_path: Path) -> None:
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        text=True,
        capture_output=True,
        check=True,
    ).stdout.strip()
    stale = tmp_path / f".x.jsonl.{dead}.abcdefgh.tmp"
    stale.write_bytes(b"left by a killed run")
    with AtomicBatch() as batch:
        with batch.write(tmp_path / "a.jsonl") as handle:
            handle.write(b"a\n")
        assert not stale.exists()
        stale.write_bytes(b"again")  # the folder was scanned: not looked at again
        with batch.write(tmp_path / "b.jsonl") as handle:
            handle.write(b"b\n")
        batch.commit()
    assert stale.exists()


def _import(source: Path, out: Path) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-c", "from harness_cli.main import main; main()"]
    return subprocess.Popen(
        [*argv, "import", str(source), "--out", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _cassettes(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in folder.glob("*.jsonl")}


def _kill_when(run: subprocess.Popen[bytes], out: Path, suffix: str) -> None:
    """SIGKILL the run as soon as a file ending in `suffix` shows in `out`."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and run.poll() is None:
        if out.exists() and any(name.endswith(suffix) for name in os.listdir(out)):
            break
        time.sleep(0.002)
    run.send_signal(signal.SIGKILL)
    run.wait(timeout=60)


@pytest.mark.slow  # eight imports of 600 files: about a minute
def test_a_killed_import_leaves_whole_cassettes_and_the_next_run_finishes(
    tmp_path: Path,
) -> None:
    source = tmp_path / "recordings"
    source.mkdir()
    for number in range(FILES):
        shutil.copy(RECORDING, source / f"test_{number:04d}.yaml")
    reference = tmp_path / "reference"
    assert _import(source, reference).wait(timeout=300) == 0
    expected = _cassettes(reference)
    assert len(expected) == FILES
    out = tmp_path / "out"
    # Killed while the first batch's temporaries are written, then just after a commit.
    for moment, suffix in (("writing", ".tmp"), ("committed", ".jsonl")):
        shutil.rmtree(out, ignore_errors=True)
        _kill_when(_import(source, out), out, suffix)
        found = _cassettes(out) if out.exists() else {}
        if moment == "committed":
            assert 0 < len(found) < FILES, "the kill fell after the whole run"
        for name, content in found.items():
            assert content == expected[name], f"{name} is not whole after the kill"
            Cassette(out / name).validate()
        status = _import(source, out).wait(timeout=300)  # the rest; what exists is kept
        assert status == (1 if found else 0)
        assert _cassettes(out) == expected
        assert [name for name in os.listdir(out) if name.endswith(".tmp")] == []
