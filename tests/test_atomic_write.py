"""`atomic_write`: an interrupted or killed write leaves the old file and no temporary behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from harness._files import atomic_write, remove_stale_temporaries

#: A writer that has written part of the new content, says so, and waits to be killed.
#: Ctrl-C raises in it as in a terminal, and SIGHUP and SIGTERM take their default
#: actions, also when the suite runs as a background job (which starts its children with
#: SIGINT ignored) or under `nohup` (SIGHUP ignored).
WRITER = """
import signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)
for signum in (signal.SIGHUP, signal.SIGTERM):
    signal.signal(signum, signal.SIG_DFL)
from harness._files import atomic_write
with atomic_write(sys.argv[1]) as handle:
    handle.write(b"half of the new content")
    handle.flush()
    print("writing", flush=True)
    time.sleep(60)
"""


def start_writer(target: Path) -> subprocess.Popen[str]:
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(target)], stdout=subprocess.PIPE, text=True
    )
    assert writer.stdout is not None
    assert writer.stdout.readline() == "writing\n"
    return writer


def temporaries(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir() if path.name.endswith(".tmp"))


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_signal_mid_write_leaves_the_old_file_and_no_temporary(
    tmp_path: Path, signum: int
) -> None:
    target = tmp_path / "rec.jsonl"
    target.write_bytes(b"the old content\n")
    with start_writer(target) as writer:
        assert len(temporaries(tmp_path)) == 1
        writer.send_signal(signum)
        status = writer.wait(timeout=30)
    assert status != 0
    if signum != signal.SIGINT:
        assert status == -signum  # it still dies of the signal, as without the handler
    assert target.read_bytes() == b"the old content\n"
    assert temporaries(tmp_path) == []


def test_the_next_write_removes_the_temporary_of_a_killed_run(tmp_path: Path) -> None:
    target = tmp_path / "rec.jsonl"
    with start_writer(target) as writer:
        writer.kill()  # SIGKILL: nothing can clean up
        writer.wait(timeout=30)
    assert len(temporaries(tmp_path)) == 1
    with atomic_write(target) as handle:
        handle.write(b"new\n")
    assert target.read_bytes() == b"new\n"
    assert temporaries(tmp_path) == []


def test_a_temporary_of_a_live_writer_or_another_file_is_kept(tmp_path: Path) -> None:
    target = tmp_path / "rec.jsonl"
    live = tmp_path / f".rec.jsonl.{os.getpid()}.abcd1234.tmp"
    other = tmp_path / ".other.jsonl.999999999.abcd1234.tmp"
    foreign = tmp_path / ".rec.jsonl.not-ours.tmp"
    for path in (live, other, foreign):
        path.write_bytes(b"")
    assert remove_stale_temporaries(str(target)) == []
    assert temporaries(tmp_path) == sorted(p.name for p in (live, other, foreign))


def test_a_failed_write_leaves_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "rec.jsonl"
    target.write_bytes(b"old\n")
    with pytest.raises(RuntimeError), atomic_write(target) as handle:
        handle.write(b"partial")
        raise RuntimeError("the stream broke")
    assert target.read_bytes() == b"old\n"
    assert temporaries(tmp_path) == []


@pytest.mark.parametrize("before", [signal.SIG_DFL, signal.SIG_IGN], ids=["default", "ignored"])
def test_a_write_leaves_the_signal_actions_as_it_found_them(
    tmp_path: Path, before: signal.Handlers
) -> None:
    """Default actions are restored after the write; an ignored signal (`nohup`'s SIGHUP)
    stays ignored during it too: the write never makes a signal the user ignores fatal."""
    for signum in (signal.SIGTERM, signal.SIGHUP):
        previous = signal.signal(signum, before)
        try:
            with atomic_write(tmp_path / "x") as handle:
                handle.write(b"x")
                during = signal.getsignal(signum)
            assert (during is signal.SIG_IGN) is (before is signal.SIG_IGN)
            assert signal.getsignal(signum) is before
        finally:
            signal.signal(signum, previous)


def test_a_fifo_is_written_into_not_replaced(tmp_path: Path) -> None:
    """A FIFO (a shell's `>(...)`) stays a FIFO, and its reader gets the bytes."""
    import stat
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    with atomic_write(fifo) as handle:
        handle.write(b"<html>a page</html>\n")
    reader.join(timeout=10)
    assert got == [b"<html>a page</html>\n"]
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert [entry.name for entry in tmp_path.iterdir()] == ["pipe"], "no temporary left"


def test_a_device_is_taken_for_one_and_never_replaced(tmp_path: Path) -> None:
    """A device goes the FIFO's way (written into, never replaced); a regular file, a
    folder or nothing at all does not. Only asked, not written: a test that replaced
    `/dev/full` or `/dev/null` on a regression would break the machine it runs on."""
    from harness._files import _special

    (tmp_path / "file").write_text("")
    assert _special("/dev/null")
    assert not any(_special(str(tmp_path / name)) for name in ("file", "absent", "."))


@pytest.mark.parametrize("where", ["a folder", "no folder"])
def test_a_write_that_cannot_be_made_names_the_file_asked_for(tmp_path: Path, where: str) -> None:
    """Not the hidden temporary beside it, which the caller never named."""
    target = tmp_path / "out.jsonl"
    if where == "a folder":
        target.mkdir()
    else:
        target = tmp_path / "missing" / "out.jsonl"
    with pytest.raises(OSError) as raised, atomic_write(target) as handle:
        handle.write(b"x")
    assert raised.value.filename == str(target)
    assert ".tmp" not in str(raised.value)
