"""One test's cassette clients: replay the marked cassettes, or record them live, once.

The pytest plugin's `harness_client`, `harness_async_client` and `harness_requests`
fixtures share one `ClientSession`. It decides, from the record mode and what exists,
whether the test replays (a `Replayer` every client of the test shares, so a sync and
an async client answer from one order) or records (a live `recording_client` writing
each answer to the next cassette; the key comes from the variable of the cassettes' SDK,
`ANTHROPIC_API_KEY` or `OPENAI_API_KEY`, the SDK from their headers, else the marker's
`sdk=`: a cassette not recorded yet names none; on a host, `host=` or the headers' host,
the host's client with the user's cloud credentials: `Sdk.live_options`). The decision
goes through the plugin's one `RecordGate` (`harness._testing.record_once`): a cassette
shared by parallel tests is recorded once, and under `all` once per run.

With `fault_variant`, the client serves the row's variant of the good cassette. When the
good cassette is still to be recorded (no `request=` on the marker: the code's own
request records it), the first request goes live and is written, the variant is derived
from that answer and served in its place, and the rest of the run derives its rows from
the written cassette: one live call for every row.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, cast, overload

import httpx2

from harness._exceptions import InputError
from harness._modes import RecordMode
from harness._replay.cache import kept_cassettes
from harness._replay.plan import PlannedResponse
from harness._replay.replayer import Replayer, answered_as
from harness._testing.fault_runs import DOES_NOT_APPLY
from harness._testing.record_once import RecordGate

if TYPE_CHECKING:
    from anthropic import Anthropic, AsyncAnthropic

    from harness._record.live import RecordingTransport
    from harness._replay.clients import HOST, ClientKind
    from harness._replay.replayer import CapturedRequest
    from harness._replay.sdk import ReplayTransport
    from harness._testing.fault_runs import FaultCase

__all__ = ["ClientSession"]

#: How to fix a request that differs from the recorded one, under the mismatch's diff
#: (`{key}`: the variable of the cassette's SDK's key).
MISMATCH_FIX: Final = (
    "to fix it: compare fewer fields (@pytest.mark.cassette(..., match_on=[...]), or "
    "match_on=None to compare none), or record the cassette again for the new request "
    "(--harness-record=all, with {key} set)"
)
#: The header the SDK numbers its retries with ("0": a first attempt).
RETRY_HEADER: Final = "x-stainless-retry-count"


class ClientSession:
    """The cassettes of one test, replayed or recorded; see the module docstring.

    `fault` is the test's `fault_variant`; `derive`, for a pending one (its good cassette
    still to be recorded), fills it in from the cassette and says whether the row applies.
    """

    def __init__(
        self,
        paths: Sequence[Path],
        *,
        mode: RecordMode,
        match_on: Sequence[str] | None,
        run_id: str,
        where: str,
        fault: FaultCase | None = None,
        derive: Callable[[], bool] | None = None,
        sdk: str | None = None,
        host: str | None = None,
        host_for_all: bool = False,
    ) -> None:
        from harness._testing.plugin_providers import cassette_sdk, key_variable

        self.paths = list(paths)
        #: the SDK of the test's clients (the cassettes' headers', else the marker's `sdk=`)
        self.sdk = cassette_sdk(self.paths, sdk, where)
        self.key_variable = key_variable(self.sdk)
        #: where the test's clients are served (None: the cassettes' header's host)
        self.host = self._served_host(host, host_for_all, where)
        self.mode = mode
        self.match_on = match_on
        self.where = where
        self.fault = fault
        self.recording = False
        #: whether `unanswered()` was reported already (with the test's own outcome)
        self.reported = False
        #: what the test's clients sent, read from whoever answers them at each look
        self.requests: Sequence[CapturedRequest] = _SentRequests(self)
        self._recorded: list[CapturedRequest] = []  # what a recording client captures
        self._gate = RecordGate(self.paths, mode=mode, run_id=run_id)
        self._derive = derive
        self._replayer: Replayer | None = None
        self._clients: list[Any] = []
        self._session_folder: Path | None = None
        self._written: list[str] = []
        if len(self.paths) > 1 and any(self._is_session(path) for path in self.paths):
            raise InputError(f"{where}: a session folder must be the cassette marker's only name")
        if fault is not None and fault.pending and derive is None:
            raise InputError(f"{where}: a pending fault variant needs its derivation")

    def _served_host(self, host: str | None, for_all: bool, where: str) -> HOST | None:
        """`host` (a marker's: `InputError` where the cassettes' dialect is not served);
        a host chosen `for_all` (the run's) is the direct API's where it is not."""
        from harness._replay.clients import DIRECT
        from harness._testing.plugin_providers import hosted_sdk

        if host is None or host == DIRECT or hosted_sdk(self.sdk, host) is not None:
            return cast("HOST | None", host)  # the plugin checked the name
        if for_all:
            return DIRECT
        raise InputError(
            f"{where}: @pytest.mark.cassette host={host!r}: {self.sdk} cassettes are served "
            "on no such host"
        )

    def _live_sdk(self) -> Any:
        """The SDK client a recording goes through: the host's (the chosen one, else the
        one the cassettes' headers name) or the API's own."""
        from harness._replay.clients import DIRECT, sdk_named
        from harness._testing.plugin_providers import cassettes_host, hosted_sdk

        host = self.host if self.host is not None else cassettes_host(self.paths)
        hosted = None if host in (None, DIRECT) else hosted_sdk(self.sdk, str(host))
        return hosted or sdk_named(self.sdk)

    def _live_missing(self) -> str | None:
        """Why the test cannot record (its credentials not found), as a skip says it."""
        live = self._live_sdk()
        if live.live_credentials is None:
            if live.has_live_key():
                return None
            return f"needs {self.key_variable}, which is not set"
        try:
            live.live_options()
        except InputError as error:
            return f"through {live.named}: {error}"
        return None

    def _how_to_record(self) -> str:
        """How a missing cassette is recorded: with the API's key, or on a host (no key of
        the API's opts in there) through its client with the user's own credentials."""
        live = self._live_sdk()
        if live.live_credentials is None:
            return f"record it with --harness-record=missing and {self.key_variable} set"
        return (
            f"record it with --harness-record=missing, live through {live.named} with your "
            "own credentials, found where its SDK finds them"
        )

    @staticmethod
    def _is_session(path: Path) -> bool:
        return path.is_dir() or path.suffix != ".jsonl"

    # -- deciding ------------------------------------------------------------------------

    def open(self) -> str | None:
        """Decide replay or record; a reason to skip (recording needs a key not set, or the
        fault row does not apply). Raises `InputError` for a cassette missing in replay-only
        mode, or one the fault catalogue cannot derive from."""
        records = self.fault is None or self.fault.pending
        if records and self._gate.needs_recording():
            if self.fault is not None:
                from harness._testing.plugin_providers import refuse_recording

                refuse_recording(self.paths, self.where, self.mode, self.sdk)
            missing = self._live_missing()
            if missing is not None:
                names = ", ".join(str(path) for path in self.paths)
                return f"record mode {self.mode}: recording {names} live {missing}"
            if self._gate.acquire():  # no other worker recorded it while this one waited
                earlier = self._gate.earlier_failure()
                if earlier is not None:
                    self._gate.release()
                    raise InputError(f"{self.where}: not recorded again in this run: {earlier}")
                self.recording = True
                if len(self.paths) == 1 and self._is_session(self.paths[0]):
                    self._session_folder = self.paths[0]
                return None
        for path in self.paths if records else []:
            if not path.exists():
                raise InputError(f"cassette not found: {path} ({self._how_to_record()})")
        if self.fault is None:
            # Each cassette read, checked and encoded once a session (`harness._replay.cache`).
            self._replayer = Replayer(kept_cassettes(self.paths), match_on=self.match_on)
            return None
        if self.fault.pending and not self._derived():
            return self.fault.not_applying(self.paths[0].name)
        self._serve_fault()
        return None

    def _derived(self) -> bool:
        assert self._derive is not None
        return self._derive()

    def _serve_fault(self) -> _FaultReplayer:
        assert self.fault is not None
        replayer = _FaultReplayer(self.fault)
        self.fault.replay_errors = replayer.errors  # a read-only view: the case reads it
        self._replayer = replayer
        return replayer

    # -- clients ---------------------------------------------------------------------------

    def _options(self) -> dict[str, Any]:
        return {} if self.fault is None else self.fault.client_options

    def _recording_client(self, kind: ClientKind) -> Any:
        from harness._replay.clients import recording_client_of

        if self._clients:
            raise InputError(f"{self.where}: a recording test can use one client, not two")
        if self.fault is not None:
            return self._fault_recording_client(kind)
        files = [] if self._session_folder is not None else self.paths
        client = recording_client_of(
            kind,
            files,
            session=self._session_folder,
            api_key=None,  # the kind's variable's (`OPENAI_API_KEY`), its base URL's too
            base_url=None,
            description=self._description,
            requests=self._recorded,
            written=self._written,
            options={},
        )
        self._clients.append(client)
        return client

    @property
    def _sdk(self) -> Any:
        """`sdk=` for a cassette client: checked against the cassettes it replays."""
        return self.sdk

    @property
    def _description(self) -> str:
        return f"Recorded by {self.where} (record mode {self.mode})"

    def _fault_recording_client(self, kind: ClientKind) -> Any:
        """A live client whose first answer is recorded, then replaced by the fault's variant."""
        from harness._record.live import RecordingTransport

        credentials = kind.sdk.live_options()
        recording = RecordingTransport(
            kind.transport(), self.paths, description=self._description, written=self._written
        )
        assert self.fault is not None
        timeout = self.fault.client_options.get("timeout")
        transport = _RecordThenServe(recording, self._serve_recorded_fault, timeout)
        http_client = kind.http_client(transport=transport)
        client = kind.live_client(http_client, credentials=credentials, base_url=None)
        self._clients.append(client)
        return client

    def _serve_recorded_fault(self) -> ReplayTransport:
        """The transport answering once the good cassette is written: the fault's variant."""
        import pytest

        from harness._replay.sdk import ReplayTransport

        assert self.fault is not None
        if not self._derived():
            # A BaseException: it passes through the SDK and the code's `except Exception`.
            raise pytest.skip.Exception(
                self.fault.not_applying(self.paths[0].name), _use_item_location=True
            )
        return ReplayTransport(self._serve_fault())

    def client(self) -> Anthropic:
        """The test's `anthropic.Anthropic` (an `openai.OpenAI` for OpenAI cassettes)."""
        if self.recording:
            from harness._replay.clients import sync_kind

            recording: Anthropic = self._recording_client(sync_kind(self._live_sdk()))
            return recording
        from harness._replay.clients import cassette_client

        built: Anthropic = cassette_client(
            [], sdk=self._sdk, host=self.host, replayer=self._replayer, **self._options()
        )
        self._clients.append(built)
        return built

    def async_client(self) -> AsyncAnthropic:
        """The test's `anthropic.AsyncAnthropic` (an `openai.AsyncOpenAI` for OpenAI's)."""
        if self.recording:
            from harness._replay.clients import async_kind

            recording: AsyncAnthropic = self._recording_client(async_kind(self._live_sdk()))
            return recording
        from harness._replay.clients import async_cassette_client

        built: AsyncAnthropic = async_cassette_client(
            [], sdk=self._sdk, host=self.host, replayer=self._replayer, **self._options()
        )
        self._clients.append(built)
        return built

    # -- the end ----------------------------------------------------------------------------

    def unanswered(self) -> str | None:
        """The first request the cassettes could not answer (used up, a mismatch, a request a
        recording client could not record), as one report naming the test; None if none.

        A fault variant's are reported by `expect_failure`, with the row."""
        from harness._exceptions import RequestMismatchError
        from harness._replay.clients import replay_errors

        if self.fault is not None:
            return None
        errors = [error for client in self._clients for error in replay_errors(client)]
        if not errors:
            return None
        first = errors[0]
        if isinstance(first, RequestMismatchError):
            return f"{self.where}: {first}\n{MISMATCH_FIX.format(key=self.key_variable)}"
        return f"{self.where}: {first}"

    def close(self) -> str | None:
        """Release what the test held; `unanswered()`, unless it was reported already."""
        import inspect

        try:
            unanswered = None if self.reported else self.unanswered()
        finally:
            for client in self._clients:
                if not inspect.iscoroutinefunction(client.close):  # a sync client, either SDK
                    client.close()
            try:
                if self.recording:
                    self._finish_recording()
            finally:
                self._gate.release()
        return unanswered

    def _finish_recording(self) -> None:
        from harness._exceptions import RecordError
        from harness._replay.clients import replay_errors

        clients = self._clients if self.fault is None else []  # a fault's is not kept there
        refused = [
            error
            for client in clients
            for error in replay_errors(client)
            if isinstance(error, RecordError)
        ]
        if refused and not self._written:  # nothing recorded: the run does not try again
            names = ", ".join(str(path) for path in self.paths)
            self._gate.failed(f"{self.where}: recording {names} failed: {refused[0]}")
        if not self._written:
            return  # nothing was recorded (the code sent nothing, or the API refused)
        if self._session_folder is not None:
            from harness._cassette.sessions import turn_files

            for stale in turn_files(self._session_folder):
                if os.fspath(stale) not in self._written:
                    stale.unlink()
        self._gate.recorded()


class _SentRequests(Sequence["CapturedRequest"]):
    """`harness_requests`: a read-only, live view of the requests the test's clients sent,
    asked of the session's replayer (once there is one) or its recording client."""

    def __init__(self, session: ClientSession) -> None:
        self._session = session

    def _sent(self) -> Sequence[CapturedRequest]:
        replayer = self._session._replayer
        return replayer.requests if replayer is not None else self._session._recorded

    @overload
    def __getitem__(self, index: int) -> CapturedRequest: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[CapturedRequest]: ...

    def __getitem__(self, index: int | slice) -> CapturedRequest | Sequence[CapturedRequest]:
        return self._sent()[index]

    def __len__(self) -> int:
        return len(self._sent())

    def __repr__(self) -> str:
        return repr(list(self._sent()))


class _RecordThenServe(httpx2.BaseTransport, httpx2.AsyncBaseTransport):
    """Forwards the first request live through `recording` (which writes the good
    cassette), then answers it, and every later one, from the transport `serve()` makes,
    with `read_timeout` (the `stall` row's short one: the live call kept the SDK's own)."""

    def __init__(
        self,
        recording: RecordingTransport,
        serve: Callable[[], ReplayTransport],
        read_timeout: float | None,
    ) -> None:
        self.recording = recording
        self.serve = serve
        self.read_timeout = read_timeout
        self._served: ReplayTransport | None = None

    def _replayed(self, request: httpx2.Request) -> httpx2.Request:
        if self.read_timeout is not None:
            timeout = dict(request.extensions.get("timeout", {}))
            timeout["read"] = self.read_timeout
            request.extensions["timeout"] = timeout
        return request

    def _switch(self, response: httpx2.Response) -> httpx2.Response | None:
        """After the live answer: None when it was recorded (serve the variant instead),
        else the recording's own refusal, for the code to see."""
        if self.recording.errors:
            return response
        self._served = self.serve()
        return None

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        if self._served is None:
            refused = self._switch(self.recording.handle_request(request))
            if refused is not None:
                return refused
        assert self._served is not None
        return self._served.handle_request(self._replayed(request))

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if self._served is None:
            refused = self._switch(await self.recording.handle_async_request(request))
            if refused is not None:
                return refused
        assert self._served is not None
        return await self._served.handle_async_request(self._replayed(request))

    def close(self) -> None:
        self.recording.close()

    async def aclose(self) -> None:
        await self.recording.aclose()


class _FaultReplayer(Replayer):
    """Serves a fault variant; a stream-level row skips the test at a non-streaming request,
    which is answered whole (with what the skip names, the cassette's provider's
    `whole_answer`): there is no stream to break. Whether a request streams is the
    replayer's to say (`harness._replay.replayer.answered_as`: the body's `stream`, or a
    path that says it, Bedrock's, ConverseStream's, Gemini's). A retry of the broken turn
    (the SDK's retry header) is answered the variant again, so turns after it stay in
    order. A request the cassettes refuse (a path the variant's provider does not
    answer) consumes no turn, as `Replayer.respond_to` has it: it is refused, not skipped."""

    def __init__(self, case: FaultCase) -> None:
        super().__init__(case.served, match_on=None)
        self.case = case

    def respond_to(self, request: CapturedRequest) -> PlannedResponse:
        case = self.case
        variant = self.cassettes[case.variant_index]
        answered = self._next  # the turns answered in order; a refusal consumes none
        retried = (
            answered == case.variant_index + 1 and request.headers.get(RETRY_HEADER, "0") != "0"
        )
        at_variant = (retried or answered == case.variant_index) and self.at_endpoint(
            variant, request
        )
        if at_variant and not case.fault.wire and not answered_as(variant.dialect.framing, request):
            import pytest

            case.verdict = DOES_NOT_APPLY
            raise pytest.skip.Exception(
                f"fault {case.fault.name} breaks a stream, and the code made a "
                f"non-streaming request (answered with {variant.dialect.whole_answer})",
                _use_item_location=True,
            )
        if retried and at_variant:
            return self.answer_with(variant, request)
        return super().respond_to(request)
