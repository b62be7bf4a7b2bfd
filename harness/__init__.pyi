# The public API of `harness`, the one list: `harness/__init__.py` loads each name from
# here on first use (lazy_loader.attach_stub), and type checkers read it. In a stub,
# `import X as X` is what marks a re-export.

from . import (
    agent as agent,
    builder as builder,
    faults as faults,
    snapshot as snapshot,
)
from ._cassette.codec import (
    AT_DIRECTIVE as AT_DIRECTIVE,
    FORMAT_VERSION as FORMAT_VERSION,
    Cassette as Cassette,
    CassetteLine as CassetteLine,
    CassetteSource as CassetteSource,
    DirectiveHandler as DirectiveHandler,
    expand_paths as expand_paths,
    make_header as make_header,
    read_cassette as read_cassette,
    write_cassette as write_cassette,
)
from ._cassette.request import (
    CapturedRequest as CapturedRequest,
)
from ._events import (
    DoneEvent as DoneEvent,
    ModelEvent as ModelEvent,
    TextEvent as TextEvent,
    ToolCall as ToolCall,
    ToolCallEvent as ToolCallEvent,
    event_to_json as event_to_json,
)
from ._exceptions import (
    ERROR_TABLE as ERROR_TABLE,
    PROTOCOL_ERROR_PREFIX as PROTOCOL_ERROR_PREFIX,
    AgentError as AgentError,
    AgentFailed as AgentFailed,
    CassetteError as CassetteError,
    CassetteImportError as CassetteImportError,
    EmptyTurnError as EmptyTurnError,
    HarnessError as HarnessError,
    InputError as InputError,
    OutputError as OutputError,
    RecordError as RecordError,
    ReplayError as ReplayError,
    RequestMismatchError as RequestMismatchError,
    SessionError as SessionError,
    StreamProtocolError as StreamProtocolError,
    ToolError as ToolError,
    UnknownFaultError as UnknownFaultError,
)
from ._http.hosting import (
    ServerThread as ServerThread,
)
from ._http.proxy import (
    RecordingProxy as RecordingProxy,
)
from ._http.server import (
    CassetteServer as CassetteServer,
)
from ._interop.export import (
    export_har as export_har,
    export_vcr as export_vcr,
)
from ._interop.importer import (
    ImportReport as ImportReport,
    import_recording as import_recording,
    import_vcr as import_vcr,
)
from ._modes import (
    RecordMode as RecordMode,
    Via as Via,
)
from ._providers.anthropic.adapter import (
    StreamAdapter as StreamAdapter,
    ato_model_events as ato_model_events,
    to_model_events as to_model_events,
)
from ._record.live import (
    build_request as build_request,
    record as record,
)
from ._replay.clients import (
    DUMMY_API_KEY as DUMMY_API_KEY,
    async_cassette_client as async_cassette_client,
    async_recording_client as async_recording_client,
    captured_requests as captured_requests,
    cassette_client as cassette_client,
    recording_client as recording_client,
    replay_errors as replay_errors,
)
from ._replay.direct import (
    Outcome as Outcome,
    acollect as acollect,
    collect as collect,
    failure_code as failure_code,
    failure_to_json as failure_to_json,
    is_stream_failure as is_stream_failure,
    replay_outcome as replay_outcome,
)
from ._replay.frameworks import (
    with_client as with_client,
)
from ._replay.httpx1 import (
    HTTPXReplayTransport as HTTPXReplayTransport,
)
from ._replay.plan import (
    Chunking as Chunking,
    RealtimePacer as RealtimePacer,
)
from ._replay.replayer import (
    Replayer as Replayer,
    cassettes_from as cassettes_from,
)
from ._replay.sdk import (
    ReplayTransport as ReplayTransport,
    aoutcome_via_sdk as aoutcome_via_sdk,
    areplay_events as areplay_events,
    outcome_via_sdk as outcome_via_sdk,
    replay_events as replay_events,
)
from ._strict.client import (
    strict as strict,
)
from ._strict.transport import (
    StrictTransport as StrictTransport,
)
from ._testing.fault_runs import (
    Adapter as Adapter,
    ExpectFailure as ExpectFailure,
    FaultCase as FaultCase,
)
from ._version import (
    __version__ as __version__,
)
from .builder import (
    ChatStreamBuilder as ChatStreamBuilder,
    ResponsesStreamBuilder as ResponsesStreamBuilder,
    StreamBuilder as StreamBuilder,
)
