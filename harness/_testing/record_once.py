"""Record a test run's cassettes once: the lock and run marker every record route takes.

The pytest plugin records in two ways, the marker's `request=` sent by `harness record`'s
code (`harness_replay`, `fault_variant`) and the code's own requests through a recording
client (`harness_client`, `harness_async_client`); both decide through one `RecordGate`.

A gate covers the cassettes of one test. `needs_recording()` says whether the record mode
asks for them: `missing` when one does not exist, `all` (and `drift`, whose paths are the
copies it writes) when one was not re-recorded yet in this run. Parallel runs (`pytest
-n 2`) record a shared cassette once: `acquire()` takes a `filelock.FileLock` per
cassette (in one order everywhere, so no two tests wait on each other) and decides
again, so a test that waited for another worker's recording finds it written and replays
it; the recording test holds the locks to its end, then `recorded()` leaves the run
marker, keyed by the run id (xdist's `testrunuid`, shared by every worker of one run),
which tells the rest of the run, under `all`, not to record again. A recording that
failed leaves a failure marker instead, holding its report (`failed()`): the rest of the
run reports that first failure (`earlier_failure()`) without calling the API again.
Locks and markers live in the temporary folder, keyed by the cassette's absolute path,
so the cassette folder stays clean.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final

from harness._modes import RecordMode

if TYPE_CHECKING:
    from filelock import BaseFileLock

__all__ = ["LOCK_TIMEOUT_S", "RecordGate"]

#: How long a test waits for another worker's live recording of a cassette it shares.
LOCK_TIMEOUT_S: Final = 600


def _key(path: Path) -> str:
    return hashlib.sha256(os.fsencode(path.resolve())).hexdigest()[:24]


class RecordGate:
    """Whether one test records `paths` live, decided under their locks; see the module doc."""

    def __init__(self, paths: Sequence[Path], *, mode: RecordMode, run_id: str) -> None:
        self.paths = list(paths)
        self.mode = mode
        self._run_folder = Path(tempfile.gettempdir()) / f"stream-harness-run-{run_id}"
        self._locks: list[BaseFileLock] = []

    def needs_recording(self) -> bool:
        """Whether the record mode asks for these cassettes now (no lock taken)."""
        if self.mode.rerecords:
            return not all((self._run_folder / _key(path)).exists() for path in self.paths)
        if self.mode is RecordMode.MISSING:
            return not all(path.exists() for path in self.paths)
        return False

    def acquire(self) -> bool:
        """Take the locks and decide again: True (locks held) when this test is to record,
        False (locks released) when another test recorded them while this one waited."""
        from filelock import FileLock

        folder = Path(tempfile.gettempdir()) / "stream-harness-locks"
        folder.mkdir(exist_ok=True)
        for path in sorted(self.paths):
            lock = FileLock(folder / f"{_key(path)}.lock", timeout=LOCK_TIMEOUT_S)
            lock.acquire()
            self._locks.append(lock)
        if self.needs_recording():
            return True
        self.release()
        return False

    def recorded(self) -> None:
        """Mark the cassettes recorded in this run (call it before `release`)."""
        self._run_folder.mkdir(exist_ok=True)
        for path in self.paths:
            (self._run_folder / _key(path)).touch()

    def failed(self, report: str) -> None:
        """Keep, for the rest of the run, why recording these cassettes failed (call it
        before `release`)."""
        self._run_folder.mkdir(exist_ok=True)
        for path in self.paths:
            (self._run_folder / f"{_key(path)}.failed").write_text(report, encoding="utf-8")

    def earlier_failure(self) -> str | None:
        """The report of a recording of one of these cassettes that failed earlier in this
        run, or None."""
        for path in self.paths:
            marker = self._run_folder / f"{_key(path)}.failed"
            if marker.exists():
                return marker.read_text(encoding="utf-8")
        return None

    def release(self) -> None:
        """Release the locks this gate holds (none: nothing happens)."""
        while self._locks:
            self._locks.pop().release()
