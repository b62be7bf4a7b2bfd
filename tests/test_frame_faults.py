"""The binary fault rows: a stream served in AWS event-stream frames (a Bedrock cassette),
broken in its frames by `frame` lines, which direct replay, the cassette clients and
`harness serve` carry out alike, and which `harness faults`, the fault runs and
`harness.strict` (through `anthropic.AnthropicBedrock`) judge by the framing's codes.
Over SSE there are no such rows, and a `frame` line is refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import LIBRARY, anthropic_on, not_installed

import harness
from harness import to_model_events
from harness._cassette.codec import Cassette, make_header, write_cassette
from harness._exceptions import CassetteError
from harness._http.hosting import ServerThread
from harness._http.server import CassetteServer
from harness._providers.eventstream import FrameError
from harness._providers.frame_rows import FRAME_ROWS
from harness._replay.direct import failure_code, frame_error, replay_outcome
from harness._testing.coverage import outcome_code
from harness._testing.fault_runs import run_fault
from harness.faults import catalogue, derive_variants, stream_lines
from harness_cli.main import cli

anthropic = pytest.importorskip("anthropic")
pytest.importorskip("botocore", reason=not_installed("botocore"))

ROWS = [fault.name for fault in FRAME_ROWS]
ASK: Any = {
    "model": "claude-sonnet-5",
    "max_tokens": 64,
    "messages": [{"role": "user", "content": "Go"}],
}


def _good(tmp_path: Path, host: str | None = "bedrock") -> Path:
    """The library's two_tools stream, as recorded on `host`."""
    source = Cassette(LIBRARY / "two_tools.jsonl")
    path = tmp_path / "good.jsonl"
    named = {} if host is None else {"host": host}
    write_cassette(path, list(source.events()), header=make_header("two tools", **named))
    return path


def _variant(tmp_path: Path, name: str) -> tuple[Path, str]:
    """Row `name`'s variant of the good Bedrock stream, written, and its expected code."""
    good = Cassette(_good(tmp_path))
    variants = derive_variants(stream_lines(good), header=good.header)
    (found,) = [variant for variant in variants if variant.fault.name == name]
    path = tmp_path / f"{name}.jsonl"
    write_cassette(path, found.events, header=make_header(name, host="bedrock"))
    return path, found.expected_code


def _read(client: Any) -> str:
    """What a streamed request came to: `done`, or the code (the class) of what it raised."""
    try:
        for _ in client.messages.create(**ASK, stream=True):
            pass
    except Exception as error:
        return failure_code(error) or type(error).__name__
    return "done"


def test_the_binary_rows_are_a_framed_streams_alone(tmp_path: Path) -> None:
    assert catalogue("anthropic", host="bedrock")[-len(FRAME_ROWS) :] == FRAME_ROWS
    for host in (None, "vertex"):
        assert not set(FRAME_ROWS) & set(catalogue("anthropic", host=host))
        good = Cassette(_good(tmp_path, host))
        names = {v.fault.name for v in derive_variants(stream_lines(good), header=good.header)}
        assert not names & set(ROWS)
    good = Cassette(_good(tmp_path))
    names = {v.fault.name for v in derive_variants(stream_lines(good), header=good.header)}
    assert set(ROWS) <= names


@pytest.mark.parametrize("name", ROWS)
def test_each_row_comes_to_its_code_directly_and_through_the_guarded_bedrock_client(
    tmp_path: Path, name: str
) -> None:
    path, expected = _variant(tmp_path, name)
    assert outcome_code(replay_outcome(path)) == expected
    with harness.cassette_client(path, match_on=None, max_retries=0) as client:
        assert isinstance(client, anthropic.AnthropicBedrock)  # the header's host
        assert _read(harness.strict(client)) == expected


@pytest.mark.parametrize("name", [row for row in ROWS if row != "exception_mid_stream"])
def test_direct_replay_names_the_frame_at_fault_by_its_place_in_the_body_as_the_guard_does(
    tmp_path: Path, name: str
) -> None:
    """Direct replay reads the broken frame alone; it still names it as the guard, reading
    the whole body, does (`frame 11: ...`), not as the first."""
    path, _ = _variant(tmp_path, name)
    direct = replay_outcome(path).error
    guarded: BaseException | None = None
    with harness.cassette_client(path, match_on=None, max_retries=0) as client:
        try:
            for _ in harness.strict(client).messages.create(**ASK, stream=True):
                pass
        except Exception as error:
            guarded = frame_error(error)
    assert isinstance(direct, FrameError) and isinstance(guarded, FrameError)
    assert str(direct) == str(guarded)
    assert not str(direct).startswith("frame 1:")


#: What the SDK makes of each row without the guard: botocore refuses a bad CRC, but
#: waits for the rest of a cut frame (the body ended: the stream simply stops) and
#: passes over a frame it does not know: silent, where the guard refuses.
UNGUARDED = {
    "frame_prelude_crc": "connection_error:ChecksumMismatch",
    "frame_message_crc": "connection_error:ChecksumMismatch",
    "frame_cut_in_prelude": "done",
    "frame_cut_in_payload": "done",
    "exception_mid_stream": "api_error:throttlingException",
    "unknown_message_type": "done",
}


@pytest.mark.parametrize("name", ROWS)
def test_served_by_harness_serve_each_row_is_what_the_in_process_client_gets(
    tmp_path: Path, name: str
) -> None:
    path, expected = _variant(tmp_path, name)
    for guard, outcome in ((False, UNGUARDED[name]), (True, expected)):
        with ServerThread(CassetteServer([str(path)], match_on=None).app()) as url:
            client = anthropic_on("bedrock", base_url=url, max_retries=0)
            assert _read(harness.strict(client) if guard else client) == outcome


def test_the_guard_raises_a_bad_frame_as_the_sdks_own_error(tmp_path: Path) -> None:
    path, _ = _variant(tmp_path, "frame_cut_in_payload")
    with (
        harness.cassette_client(path, match_on=None, max_retries=0) as client,
        pytest.raises(FrameError) as raised,
    ):
        list(harness.strict(client).messages.create(**ASK, stream=True))
    assert raised.value.code == "truncated_frame"
    assert isinstance(raised.value, anthropic.APIError)  # neither wrapped nor retried


def test_a_frame_line_asked_for_as_sse_is_refused_in_one_line(tmp_path: Path) -> None:
    path, _ = _variant(tmp_path, "frame_message_crc")
    with (
        harness.cassette_client(path, host="direct", match_on=None, max_retries=0) as client,
        pytest.raises(anthropic.NotFoundError, match="a frame line breaks event-stream"),
    ):
        list(client.messages.create(**ASK, stream=True))
    unframed = tmp_path / "unframed.jsonl"
    write_cassette(unframed, [line.data for line in Cassette(path).lines()])
    with pytest.raises(CassetteError, match=r"unframed.jsonl:\d+: a frame line breaks event-str"):
        replay_outcome(unframed)


@pytest.mark.parametrize(
    "command",
    [["replay"], ["replay", "--trace"], ["replay", "--via", "sdk"], ["validate"], ["coverage"]],
    ids=" ".join,
)
def test_a_frame_line_in_a_cassette_read_as_sse_is_unusable_input_at_its_line(
    tmp_path: Path, command: list[str]
) -> None:
    """Not an internal error, nor a failed stream: the cassette cannot be read so (exit 2)."""
    path, _ = _variant(tmp_path, "frame_message_crc")
    unframed = tmp_path / "unframed.jsonl"
    write_cassette(unframed, [line.data for line in Cassette(path).lines()])
    result = CliRunner().invoke(cli, [*command, str(unframed)])
    assert result.exit_code == 2, result.output
    assert "internal error" not in result.output
    assert f"{unframed}:" in result.output
    assert "a frame line breaks event-stream frames" in result.output


def test_harness_faults_writes_the_rows_of_a_bedrock_cassette_naming_its_host(
    tmp_path: Path,
) -> None:
    out = tmp_path / "broken"
    result = CliRunner().invoke(cli, ["faults", str(_good(tmp_path)), "--out", str(out)])
    assert result.exit_code == 0, result.output
    for name in ROWS:
        written = out / f"good.{name}.jsonl"
        header = Cassette(written).header or {}
        assert header["host"] == "bedrock"
        assert outcome_code(replay_outcome(written)) == header["expect"]
    listed = CliRunner().invoke(cli, ["faults", "--list", "--host", "bedrock"])
    assert [line.split()[0] for line in listed.output.splitlines()][-len(ROWS) :] == ROWS
    plain = CliRunner().invoke(cli, ["faults", "--list"])
    assert not set(ROWS) & {line.split()[0] for line in plain.output.splitlines()}


@pytest.mark.parametrize("name", ROWS)
def test_a_fault_run_judges_each_row_of_a_bedrock_cassette(tmp_path: Path, name: str) -> None:
    fault = next(f for f in catalogue("anthropic", host="bedrock") if f.name == name)
    (tmp_path / "variants").mkdir()
    case = run_fault(to_model_events, _good(tmp_path), fault, tmp_path / "variants")
    assert case is not None
    assert case.caught, case.report()
    assert (Cassette(case.path).header or {})["host"] == "bedrock"


@pytest.mark.slow
def test_fault_variant_runs_the_binary_rows_of_a_bedrock_cassette(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini(
        "[pytest]\naddopts = --strict-markers -p no:cacheprovider\nfilterwarnings = error\n"
    )
    (pytester.path / "cassettes").mkdir()
    _good(pytester.path / "cassettes")
    pytester.makepyfile(
        test_inner="""
        import pytest

        @pytest.mark.cassette("good")
        def test_rows(fault_variant):
            fault_variant.assert_caught()
        """
    )
    result = pytester.runpytest("-q", "-k", "frame or exception or message_type")
    result.assert_outcomes(passed=len(ROWS))


def _with_frame(tmp_path: Path, headers: dict[str, Any]) -> Path:
    """The good Bedrock stream with a frame of `headers` of its own after its first event
    (line 3: the header is line 1)."""
    events = list(Cassette(_good(tmp_path)).events())
    frame = {"harness": "frame", "headers": headers, "payload": {}}
    path = tmp_path / "framed.jsonl"
    write_cassette(path, [events[0], frame, *events[1:]], header=make_header("x", host="bedrock"))
    return path


#: `frame` lines no frame can hold, and why each is refused: the event-stream wire gives a
#: header's name one byte of length, a string two, a whole number 64 bits. The schema
#: counts characters, the codec bytes of UTF-8 (an `é` is two).
UNFRAMABLE: dict[str, tuple[dict[str, Any], str]] = {
    "name_of_256_bytes": ({"a" * 256: "x"}, "is too long"),
    "name_of_256_bytes_in_128_characters": ({"é" * 128: "x"}, "a frame header's name of 256"),
    "string_of_65536_bytes": ({"a": "a" * 65_536}, "is too long"),
    "string_of_65536_bytes_in_32768_characters": (
        {"a": "é" * 32_768},
        "frame header 'a': a string of 65536 bytes (UTF-8), and a frame holds 65535 at most",
    ),
    "integer_over_64_bits": ({"a": 2**63}, "is greater than the maximum"),
    # read as the float -2**63 (orjson reads an integer past 64 bits as a float)
    "integer_under_64_bits": ({"a": -(2**63) - 1}, "is no string, boolean or whole number"),
    "float_past_any_integer": ({":message-type": 1e300}, "is greater than the maximum"),
    "whole_float": ({":message-type": 2.0}, "2.0 is no string, boolean or whole number"),
}


@pytest.mark.parametrize("case", sorted(UNFRAMABLE))
def test_a_frame_line_no_frame_can_hold_is_refused_at_its_line(tmp_path: Path, case: str) -> None:
    headers, reason = UNFRAMABLE[case]
    path = _with_frame(tmp_path, headers)
    for command in ("validate", "replay"):
        result = CliRunner().invoke(cli, [command, str(path)])
        assert result.exit_code == 2, result.output
        (line,) = result.stderr.splitlines()
        assert line.startswith(f"{path}:3: "), line
        assert reason in line
        assert len(line) < 300  # a value of megabytes is told by its length


@pytest.mark.parametrize(
    "headers",
    [
        {"a" * 255: "x"},
        {"a": "a" * 65_535},
        {"a": "é" * 32_767},
        {"a": 2**63 - 1, "b": -(2**63), "c": True},
    ],
    ids=["name_of_255_bytes", "string_of_65535_bytes", "string_of_65534_bytes", "integers"],
)
def test_a_frame_line_at_the_bounds_replays_to_what_its_frame_reads(
    tmp_path: Path, headers: dict[str, Any]
) -> None:
    # no `:message-type` an event or exception has: the framing's reader refuses the frame
    assert outcome_code(replay_outcome(_with_frame(tmp_path, headers))) == "bad_frame"
