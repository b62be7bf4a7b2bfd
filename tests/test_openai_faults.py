"""The OpenAI fault catalogues: each variant of each good OpenAI cassette replays to its code.

Each API has its catalogue (`harness.faults.catalogue("openai-chat")`,
`catalogue("openai-responses")`), whose rows together reach every code of its error
table. The variants are derived from the good cassettes of `cassettes/openai/` and
replayed directly (`harness._replay.openai`), the wire rows included: direct replay acts
on an `http_error`, a `cut` and a stall past the read timeout as a client would. The
same wire rows through an SDK client wait for `harness.cassette_client` to serve OpenAI
cassettes. `harness faults` writes the variants of an OpenAI cassette (or session turn)
with the provider its header names.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import ROOT

from harness import Cassette, write_cassette
from harness._cassette.sessions import turn_files
from harness._directives import DONE as DONE_LINE
from harness._events import DoneEvent, ModelEvent
from harness._exceptions import ANTHROPIC
from harness._providers.openai_chat.errors import ERROR_TABLE as CHAT_TABLE
from harness._providers.openai_responses.errors import ERROR_TABLE as RESPONSES_TABLE
from harness._replay.direct import Outcome, failure_code, replay_outcome
from harness._testing.coverage import outcome_code
from harness.faults import (
    CATALOGUE,
    DONE,
    PROVIDERS,
    Fault,
    Variant,
    catalogue,
    derive_variants,
    fault_named,
    stream_lines,
)
from harness_cli.main import cli

LIBRARY = ROOT / "cassettes/openai"
CHAT, RESPONSES = "openai-chat", "openai-responses"
TABLES = {CHAT: CHAT_TABLE, RESPONSES: RESPONSES_TABLE}
Events = list[dict[str, Any]]


def _good() -> dict[str, tuple[str, Events]]:
    """The library's OpenAI cassettes that replay to done: name -> (provider, lines)."""
    good = {}
    for path in sorted(LIBRARY.glob("*/*.jsonl")):
        if replay_outcome(path).completed:
            good[path.relative_to(LIBRARY).as_posix()] = (
                Cassette(path).provider,
                stream_lines(path),
            )
    return good


GOOD = _good()
CASES = [
    pytest.param(name, variant.fault.name, id=f"{name}:{variant.fault.name}")
    for name, (provider, lines) in GOOD.items()
    for variant in derive_variants(lines, provider=provider)
]


def _variant(name: str, fault_name: str) -> Variant:
    provider, lines = GOOD[name]
    (variant,) = [
        v for v in derive_variants(lines, provider=provider) if v.fault.name == fault_name
    ]
    return variant


def _replay(lines: Events, provider: str, path: Path) -> Outcome:
    write_cassette(path, lines, header={"cassette": 1, "description": "x", "provider": provider})
    return replay_outcome(path)


@cache
def _good_events(name: str, folder: Path) -> tuple[ModelEvent, ...]:
    provider, lines = GOOD[name]
    outcome = _replay(lines, provider, folder / f"good-{name.replace('/', '-')}")
    return tuple(event for event in outcome.events if event != DoneEvent())


def _is_subsequence(part: list[Any], whole: tuple[Any, ...]) -> bool:
    remaining = iter(whole)
    return all(item in remaining for item in part)


def test_the_library_holds_good_cassettes_of_both_apis() -> None:
    providers = [provider for provider, _ in GOOD.values()]
    assert providers.count(CHAT) >= 4 and providers.count(RESPONSES) >= 4


@pytest.mark.parametrize(("name", "fault_name"), CASES)
def test_every_variant_replays_directly_to_exactly_its_expected_code(
    name: str, fault_name: str, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    provider = GOOD[name][0]
    variant = _variant(name, fault_name)
    outcome = _replay(variant.events, provider, tmp_path / "variant.jsonl")
    assert outcome_code(outcome) == variant.expected_code
    events = [event for event in outcome.events if event != DoneEvent()]
    good = _good_events(name, tmp_path_factory.getbasetemp())
    assert _is_subsequence(events, good), "a fault changed the events before it"


@pytest.mark.parametrize("provider", [CHAT, RESPONSES])
def test_each_catalogue_reaches_exactly_the_codes_of_its_table(provider: str) -> None:
    rows = catalogue(provider)
    outside = ("api_error:", "connection_error:")
    codes = {
        row.expect for row in rows if row.expect != DONE and not row.expect.startswith(outside)
    }
    assert codes == set(TABLES[provider])
    assert len({row.name for row in rows}) == len(rows)


@pytest.mark.parametrize("provider", [CHAT, RESPONSES])
def test_every_row_applies_to_some_good_cassette_of_the_library(provider: str) -> None:
    applied = {
        variant.fault.name
        for good_provider, lines in GOOD.values()
        if good_provider == provider
        for variant in derive_variants(lines, provider=provider)
    }
    assert applied == {row.name for row in catalogue(provider)}


@pytest.mark.parametrize("name", list(GOOD))
def test_deriving_leaves_the_good_stream_untouched(name: str) -> None:
    provider, lines = GOOD[name]
    before = copy.deepcopy(lines)
    for variant in derive_variants(lines, provider=provider):
        for line in variant.events:
            line["mutated"] = True
    assert lines == before


def test_tool_rows_apply_only_to_a_stream_with_a_call() -> None:
    for provider, tool_row in ((CHAT, "repeat_tool_start"), (RESPONSES, "drop_tool_done")):
        text = {
            v.fault.name
            for v in derive_variants(GOOD[f"{_api(provider)}/text.jsonl"][1], provider=provider)
        }
        tool = {
            v.fault.name
            for v in derive_variants(GOOD[f"{_api(provider)}/one_tool.jsonl"][1], provider=provider)
        }
        assert tool_row in tool and tool_row not in text
    # a zero-argument call has nothing to cut in half, but can still be cut inside
    chat = {
        v.fault.name
        for v in derive_variants(GOOD["chat/zero_argument_tool.jsonl"][1], provider=CHAT)
    }
    assert "truncate_tool_json" not in chat and "cut_connection_in_tool" in chat


def _api(provider: str) -> str:
    return "chat" if provider == CHAT else "responses"


def test_chat_rows_treat_the_done_line_as_part_of_the_stream() -> None:
    lines = GOOD["chat/text.jsonl"][1]
    assert lines[-1] == {"harness": DONE_LINE}
    dropped = fault_named("drop_done", provider=CHAT).derive(lines)
    assert dropped == lines[:-1]
    late = fault_named("chunk_after_done", provider=CHAT).derive(lines)
    assert late is not None and late[:-1] == lines and "choices" in late[-1]
    for name in ("cut_connection", "cut_connection_in_tool"):
        good = GOOD["chat/one_tool.jsonl"][1]
        cut = fault_named(name, provider=CHAT).derive(good)
        assert cut is not None and cut == good[: len(cut)] and 1 <= len(cut) < len(good) - 1


def test_the_tolerated_row_repeats_a_calls_identity_on_every_piece() -> None:
    good = GOOD["chat/parallel_tools.jsonl"][1]
    repeated = fault_named("repeat_call_identity", provider=CHAT).derive(good)
    assert repeated is not None and repeated != good
    pieces = [
        piece
        for line in repeated
        for choice in line.get("choices", [])
        for piece in choice["delta"].get("tool_calls", [])
    ]
    assert len(pieces) == 4 and all(piece["id"] and piece["function"]["name"] for piece in pieces)


def test_responses_rows_number_their_events_again_but_the_gap() -> None:
    good = GOOD["responses/one_tool.jsonl"][1]
    for variant in derive_variants(good, provider=RESPONSES):
        if variant.fault.name in ("sequence_gap", "cut_mid_event", "stall", "http_500"):
            continue
        numbers = [line["sequence_number"] for line in variant.events if "sequence_number" in line]
        assert numbers == list(range(len(numbers))), variant.fault.name
    gap = fault_named("sequence_gap", provider=RESPONSES).derive(good)
    assert gap is not None
    steps = {b["sequence_number"] - a["sequence_number"] for a, b in itertools.pairwise(gap)}
    assert sorted(steps) == [1, 2]


def test_the_output_mismatch_row_changes_the_terminal_event_alone() -> None:
    """A text answer's final text becomes `Rome.`, a call's final arguments `{}`: what
    `get_final_response()` would return; every event before it is the good stream's."""
    row = fault_named("output_mismatch", provider=RESPONSES)
    checks: list[tuple[str, Callable[[Any], bool]]] = [
        ("responses/text.jsonl", lambda out: out[0]["content"][0]["text"] == "Rome."),
        ("responses/one_tool.jsonl", lambda out: out[0]["arguments"] == "{}"),
    ]
    for name, changed in checks:
        good = GOOD[name][1]
        broken = row.derive(good)
        assert broken is not None and broken[:-1] == good[:-1]
        assert broken[-1]["type"] == "response.completed"
        assert changed(broken[-1]["response"]["output"]) and not changed(
            good[-1]["response"]["output"]
        )


@pytest.mark.parametrize("provider", [CHAT, RESPONSES])
def test_the_429_before_the_good_stream_is_openais_rate_limit_answer(
    provider: str, tmp_path: Path
) -> None:
    row = fault_named("http_429_then_ok", provider=provider)
    ((answer,),) = row.before
    assert answer["status"] == 429 and answer["headers"]["retry-after-ms"] == "1"
    assert answer["body"]["error"]["code"] == "rate_limit_exceeded"
    assert outcome_code(_replay([answer], provider, tmp_path / "429.jsonl")) == "api_error:requests"


def test_anthropic_stays_the_default_provider() -> None:
    assert catalogue() is CATALOGUE is catalogue(ANTHROPIC)
    assert PROVIDERS == (ANTHROPIC, CHAT, RESPONSES, "bedrock-converse", "gemini")
    assert fault_named("drop_message_start") is fault_named(
        "drop_message_start", provider=ANTHROPIC
    )
    with pytest.raises(KeyError):
        fault_named("drop_message_start", provider=CHAT)
    with pytest.raises(ValueError, match="no fault catalogue for provider 'mistral'"):
        catalogue("mistral")


# -- the wire rows through an SDK client ----------------------------------------------------


def _sdk_events(client: Any, provider: str) -> Iterator[Any]:
    if provider == CHAT:
        messages = [{"role": "user", "content": "replay"}]
        stream = client.chat.completions.create(
            model="gpt-4.1-mini", messages=messages, stream=True
        )
    else:
        stream = client.responses.create(model="gpt-4.1-mini", input="replay", stream=True)
    with stream:
        yield from stream


def _sdk_code(error: BaseException) -> str | None:
    """An SDK error's outcome code: the transport's failure the SDK wrapped (its
    `APIConnectionError` or `APITimeoutError` is caused by httpx's), OpenAI's
    `APIStatusError` by its error's type, else `failure_code`'s."""
    import httpx2

    cause: BaseException | None = error
    while cause is not None and not isinstance(cause, httpx2.TransportError):
        cause = cause.__cause__
    if cause is not None:
        return f"connection_error:{type(cause).__name__}"
    body = getattr(error, "body", None)
    if isinstance(body, dict) and isinstance(body.get("type"), str):
        return f"api_error:{body['type']}"
    return failure_code(error)


@cache
def _unserved(provider: str) -> str | None:
    """Why `harness.cassette_client` cannot serve a good `provider` cassette yet, or None."""
    from harness import cassette_client

    good = LIBRARY / _api(provider) / "text.jsonl"
    try:
        client = cassette_client([good], match_on=None)
    except Exception as error:  # whatever it raises today: the probe only decides to skip
        return f"{type(error).__name__}: {error}"
    client.close()
    wanted = "chat" if provider == CHAT else "responses"
    return None if hasattr(client, wanted) else f"it returned an {type(client).__name__}"


def _skip_unless_served(provider: str) -> None:
    reason = _unserved(provider)
    if reason is not None:
        pytest.skip(
            f"harness.cassette_client does not serve {provider} cassettes yet ({reason}); "
            "the OpenAI SDK replay (worktree sdkreplay) brings it"
        )


WIRE = [
    pytest.param(name, fault.name, id=f"{name}:{fault.name}")
    for name, (provider, lines) in GOOD.items()
    for fault in catalogue(provider)
    if fault.wire and fault.derive(lines) is not None and name.endswith("one_tool.jsonl")
]


@pytest.mark.parametrize(("name", "fault_name"), WIRE)
def test_a_wire_row_through_a_cassette_client_ends_in_its_code(
    name: str, fault_name: str, tmp_path: Path
) -> None:
    pytest.importorskip("openai")
    from harness import cassette_client
    from harness._providers.openai_chat.adapter import to_model_events as chat_events
    from harness._providers.openai_responses.adapter import to_model_events as responses_events
    from harness._replay.calls import SDK_ATTEMPTS

    provider = GOOD[name][0]
    variant = _variant(name, fault_name)
    header = {"cassette": 1, "description": fault_name, "provider": provider}
    paths = []
    for number, response in enumerate(variant.responses, 1):
        paths.append(tmp_path / f"turn-{number:02d}.jsonl")
        write_cassette(paths[-1], response, header=header)
    served = [*paths, *[paths[-1]] * (SDK_ATTEMPTS - 1)]
    options: dict[str, Any] = {"timeout": 0.05} if fault_name == "stall" else {}
    _skip_unless_served(provider)
    client = cassette_client(served, match_on=None, **options)
    adapt = chat_events if provider == CHAT else responses_events
    extra: dict[str, Any] = {"done_at_end": True} if provider == CHAT else {}
    error: BaseException | None = None
    try:
        for _ in adapt(_sdk_events(client, provider), **extra):
            pass
    except Exception as raised:
        error = raised
    finally:
        client.close()
    assert (DONE if error is None else _sdk_code(error)) == variant.expected_code


# -- the command line -----------------------------------------------------------------------


def test_list_prints_a_providers_catalogue() -> None:
    for provider in PROVIDERS:
        result = CliRunner().invoke(cli, ["faults", "--list", "--provider", provider])
        assert result.exit_code == 0
        rows = [line.split() for line in result.output.splitlines()]
        assert [(row[0], row[1]) for row in rows] == [
            (f.name, f.expect) for f in catalogue(provider)
        ]
    default = CliRunner().invoke(cli, ["faults", "--list"]).output
    assert default == CliRunner().invoke(cli, ["faults", "--list", "--provider", ANTHROPIC]).output


@pytest.mark.parametrize("name", ["chat/one_tool.jsonl", "responses/parallel_tools.jsonl"])
def test_out_writes_the_variants_of_an_openai_cassette_with_its_provider(
    name: str, tmp_path: Path
) -> None:
    provider, lines = GOOD[name]
    out = tmp_path / "broken"
    result = CliRunner().invoke(cli, ["faults", str(LIBRARY / name), "--out", str(out)])
    assert result.exit_code == 0, result.output
    expected = derive_variants(lines, provider=provider)
    assert len(result.output.splitlines()) == len(expected)
    stem = Path(name).stem
    for variant in expected:
        fault: Fault = variant.fault
        if len(variant.responses) > 1:
            files = turn_files(out / f"{stem}.{fault.name}")
            written = [[line.data for line in Cassette(path).lines()] for path in files]
            assert written == variant.responses
            continue
        path = out / f"{stem}.{fault.name}.jsonl"
        header = Cassette(path).header
        assert header is not None
        assert (header["provider"], header["fault"], header["expect"]) == (
            provider,
            fault.name,
            variant.expected_code,
        )
        assert stream_lines(path) == [
            line for line in variant.events if "harness" not in line or line["harness"] == DONE_LINE
        ]
        assert outcome_code(replay_outcome(path)) == variant.expected_code


def test_a_session_turn_of_openai_cassettes_is_broken_in_place(tmp_path: Path) -> None:
    session = tmp_path / "session"
    session.mkdir()
    for number, name in enumerate(["chat/text.jsonl", "chat/one_tool.jsonl"], 1):
        (session / f"turn-{number:02d}.jsonl").write_bytes((LIBRARY / name).read_bytes())
    out = tmp_path / "broken"
    args = ["faults", str(session), "--turn", "1", "--out", str(out)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    first, second = turn_files(out / "session.drop_done")
    assert Cassette(first).header["provider"] == CHAT  # type: ignore[index]
    assert outcome_code(replay_outcome(first)) == "missing_done"
    assert second.read_bytes() == (session / "turn-02.jsonl").read_bytes()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            [str(LIBRARY / "chat/one_tool.jsonl"), "--provider", RESPONSES],
            f"--provider {RESPONSES}: {LIBRARY / 'chat/one_tool.jsonl'} is a cassette of "
            "openai-chat (its header names the provider; --provider is for --list)",
        ),
        (
            [str(LIBRARY / "responses/errors/refusal.jsonl")],
            f"{LIBRARY / 'responses/errors/refusal.jsonl'}: does not complete "
            "(it ends in refusal); faults need a good stream",
        ),
    ],
    ids=["provider disagrees", "not a good stream"],
)
def test_an_unusable_openai_cassette_is_one_line_and_exit_2(
    args: list[str], message: str, tmp_path: Path
) -> None:
    out = tmp_path / "broken"
    result = CliRunner().invoke(cli, ["faults", *args, "--out", str(out)])
    assert (result.exit_code, result.stderr) == (2, message + "\n")
    assert not out.exists()


def test_stream_lines_keep_chats_done_line_and_leave_the_other_directives_out(
    tmp_path: Path,
) -> None:
    lines = GOOD["chat/text.jsonl"][1]
    timed = [line for chunk in lines for line in ({"harness": "at", "ms": 5}, chunk)]
    path = tmp_path / "timed.jsonl"
    write_cassette(path, timed, header={"cassette": 1, "description": "x", "provider": CHAT})
    assert stream_lines(path) == lines
    assert [line for line in Cassette(path).events()] == lines[:-1]
