"""One test's cassette clients: replay the marked cassettes, or record them live, once.

The pytest plugin's `harness_client`, `harness_async_client` and `harness_requests`
fixtures share one `ClientSession`. It decides, from the record mode and what exists,
whether the test replays (a `Replayer` every client of the test shares, so a sync and
an async client answer from one order) or records (a live `recording_client` writing
each answer to the next cassette; the key comes from `ANTHROPIC_API_KEY`).

Parallel runs (`pytest -n 2`) record a shared cassette once: a `filelock.FileLock` per
cassette is taken before deciding, and held until the recording test ends, so the other
tests wait, find the cassette written, and replay it. Under `all`, a per-run marker
(keyed by xdist's `testrunuid`, shared by every worker of one run) says the cassette
was already re-recorded in this run. Locks and markers live in the temporary folder,
keyed by the cassette's absolute path, so the cassette folder stays clean.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from harness._exceptions import InputError
from harness._modes import RecordMode
from harness._record.live import api_key_from_environment
from harness._replay.plan import PlannedResponse
from harness._replay.replayer import Replayer

if TYPE_CHECKING:
    from anthropic import Anthropic, AsyncAnthropic
    from filelock import BaseFileLock

    from harness._replay.replayer import CapturedRequest
    from harness._testing.fault_runs import FaultCase

__all__ = ["ClientSession"]

API_KEY_VARIABLE: Final = "ANTHROPIC_API_KEY"
#: How long a test waits for another worker's live recording of a cassette it shares.
LOCK_TIMEOUT_S: Final = 600


def _key(path: Path) -> str:
    return hashlib.sha256(os.fsencode(path.resolve())).hexdigest()[:24]


class ClientSession:
    """The cassettes of one test, replayed or recorded; see the module docstring."""

    def __init__(
        self,
        paths: Sequence[Path],
        *,
        mode: RecordMode,
        match_on: Sequence[str] | None,
        run_id: str,
        where: str,
        fault: FaultCase | None = None,
    ) -> None:
        self.paths = list(paths)
        self.mode = mode
        self.match_on = match_on
        self.where = where
        self.fault = fault
        self.recording = False
        self.requests: list[CapturedRequest] = []
        self._run_folder = Path(tempfile.gettempdir()) / f"stream-harness-run-{run_id}"
        self._locks: list[BaseFileLock] = []
        self._replayer: Replayer | None = None
        self._clients: list[Any] = []
        self._session_folder: Path | None = None
        self._written: list[str] = []
        if len(self.paths) > 1 and any(self._is_session(path) for path in self.paths):
            raise InputError(f"{where}: a session folder must be the cassette marker's only name")

    @staticmethod
    def _is_session(path: Path) -> bool:
        return path.is_dir() or path.suffix != ".jsonl"

    # -- deciding ------------------------------------------------------------------------

    def _needs_recording(self) -> bool:
        if self.mode is RecordMode.ALL:
            return not all((self._run_folder / _key(path)).exists() for path in self.paths)
        if self.mode is RecordMode.MISSING:
            return not all(path.exists() for path in self.paths)
        return False

    def open(self) -> str | None:
        """Decide replay or record; a reason to skip when recording needs a key not set.

        Raises `InputError` for a cassette that is missing in replay-only mode.
        """
        if self.fault is None and self._needs_recording():
            if not os.environ.get(API_KEY_VARIABLE):
                names = ", ".join(str(path) for path in self.paths)
                return (
                    f"record mode {self.mode}: recording {names} live needs "
                    f"{API_KEY_VARIABLE}, which is not set"
                )
            self._lock()
            if self._needs_recording():  # no other worker recorded it while this one waited
                self.recording = True
                if len(self.paths) == 1 and self._is_session(self.paths[0]):
                    self._session_folder = self.paths[0]
                return None
            self._unlock()
        for path in self.paths if self.fault is None else []:
            if not path.exists():
                raise InputError(
                    f"cassette not found: {path} (record it with --harness-record=missing "
                    f"and {API_KEY_VARIABLE} set)"
                )
        if self.fault is None:
            self._replayer = Replayer(self.paths, match_on=self.match_on)
        else:
            self._replayer = _FaultReplayer(self.fault)
            self.fault.replay_errors = self._replayer.errors  # type: ignore[assignment]
        self.requests = self._replayer.requests
        return None

    def _lock(self) -> None:
        from filelock import FileLock

        folder = Path(tempfile.gettempdir()) / "stream-harness-locks"
        folder.mkdir(exist_ok=True)
        for path in sorted(self.paths):  # one order everywhere: no two tests wait on each other
            lock = FileLock(folder / f"{_key(path)}.lock", timeout=LOCK_TIMEOUT_S)
            lock.acquire()
            self._locks.append(lock)

    def _unlock(self) -> None:
        while self._locks:
            self._locks.pop().release()

    # -- clients ---------------------------------------------------------------------------

    def _options(self) -> dict[str, Any]:
        return {} if self.fault is None else self.fault.client_options

    def _recording_client(self, asynchronous: bool) -> Any:
        from harness._replay.clients import recording_client

        if self._clients:
            raise InputError(f"{self.where}: a recording test can use one client, not two")
        files = [] if self._session_folder is not None else self.paths
        client = recording_client(
            files,
            session=self._session_folder,
            api_key=api_key_from_environment(),
            asynchronous=asynchronous,
            description=f"Recorded by {self.where} (record mode {self.mode})",
            requests=self.requests,
            written=self._written,
        )
        self._clients.append(client)
        return client

    def client(self) -> Anthropic:
        """The test's `anthropic.Anthropic`."""
        if self.recording:
            recording: Anthropic = self._recording_client(asynchronous=False)
            return recording
        from harness._replay.clients import cassette_client

        built = cassette_client([], replayer=self._replayer, **self._options())
        self._clients.append(built)
        return built

    def async_client(self) -> AsyncAnthropic:
        """The test's `anthropic.AsyncAnthropic`."""
        if self.recording:
            recording: AsyncAnthropic = self._recording_client(asynchronous=True)
            return recording
        from harness._replay.clients import async_cassette_client

        built = async_cassette_client([], replayer=self._replayer, **self._options())
        self._clients.append(built)
        return built

    # -- the end ----------------------------------------------------------------------------

    def close(self) -> str | None:
        """Release what the test held; the first thing the cassettes could not answer, if any."""
        from anthropic import Anthropic

        for client in self._clients:
            if isinstance(client, Anthropic):
                client.close()
        try:
            if self.recording:
                self._finish_recording()
        finally:
            self._unlock()
        from harness._replay.clients import replay_errors

        errors = [error for client in self._clients for error in replay_errors(client)]
        if self.fault is not None:
            errors = []  # expect_failure reports them, with the row
        return f"{self.where}: {errors[0]}" if errors else None

    def _finish_recording(self) -> None:
        if self._session_folder is not None:
            from harness._cassette.sessions import turn_files

            for stale in turn_files(self._session_folder):
                if os.fspath(stale) not in self._written:
                    stale.unlink()
        self._run_folder.mkdir(exist_ok=True)
        for path in self.paths:
            (self._run_folder / _key(path)).touch()


class _FaultReplayer(Replayer):
    """Serves a fault variant; a stream-level row skips the test at a non-streaming request,
    which gets the `Message` JSON: there is no stream to break."""

    def __init__(self, case: FaultCase) -> None:
        super().__init__(case.served, match_on=None)
        self.case = case

    def respond(
        self, method: str, path: str, headers: Mapping[str, str], body: bytes
    ) -> PlannedResponse:
        if not self.case.fault.wire and b'"stream":true' not in body.replace(b" ", b""):
            import pytest

            # A BaseException: it passes through the SDK and the code's `except Exception`.
            raise pytest.skip.Exception(
                f"fault {self.case.fault.name} breaks a stream, and the code made a "
                "non-streaming request (answered with the Message JSON)",
                _use_item_location=True,
            )
        return super().respond(method, path, headers, body)
