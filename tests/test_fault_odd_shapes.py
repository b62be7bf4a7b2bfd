"""Every provider's fault catalogue derives from any stream its adapter completes.

A cassette handed to `harness faults` or `harness conform` may hold what no library
cassette does: an id that is a number, an index that is an object, a start that is a
string, a key more or one missing. Each row reads a stream as its provider's adapter
does, so that it finds what it breaks or is left out; never a bare exception (which the
command line reports as its own bug). Here every field of every event line of the
library's richest good cassettes (the two each provider's catalogue derives the most
rows from, for each provider of the registry) is set to a value of another JSON type
(or `true`, which Python takes for `1`) or removed, in the first line holding it and in
every line at once. A stream the codec refuses, or that does not replay to
`done`, is what `harness faults` refuses (exit 2); any other derives, and each variant
(the wire's and the frames' rows aside: they need a client) replays to exactly the code
its row names.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner
from conftest import LIBRARY, library_cassettes

from harness import Cassette, CassetteError
from harness._replay.direct import replay_outcome
from harness._testing.coverage import DONE, outcome_code
from harness.faults import PROVIDERS, derive_variants, stream_lines
from harness_cli.main import cli

Events = list[dict[str, Any]]
Path_ = tuple[str | int, ...]

#: A value of each other JSON type (an object for an array: neither keys a dict), and
#: `true` (`True == 1` in Python: an index of it keys the block at 1, as the adapters'
#: dicts do)
ODD: tuple[Any, ...] = (7, "x", None, {"a": 1}, True)
#: The good cassettes of each provider read, the richest first
PER_PROVIDER = 2
#: the field removed
REMOVED = object()


def _fields(value: Any, at: Path_ = ()) -> Iterator[Path_]:
    """The path of every field below `value` (a list's first two items)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield (*at, key)
            yield from _fields(item, (*at, key))
    elif isinstance(value, list):
        for position, item in enumerate(value[:2]):
            yield (*at, position)
            yield from _fields(item, (*at, position))


def _changed(line: dict[str, Any], field: Path_, odd: Any) -> dict[str, Any] | None:
    """`line` with `field` set to `odd` (or removed); None where it has no such field."""
    changed = copy.deepcopy(line)
    holder: Any = changed
    for step in field[:-1]:
        if not isinstance(holder, dict | list):
            return None
        try:
            holder = holder[step]  # type: ignore[index]
        except (KeyError, IndexError, TypeError):
            return None
    last = field[-1]
    if isinstance(holder, dict) and isinstance(last, str) and last in holder:
        if odd is REMOVED:
            del holder[last]
        else:
            holder[last] = odd
        return changed
    if isinstance(holder, list) and isinstance(last, int) and last < len(holder):
        if odd is REMOVED:
            return None
        holder[last] = odd
        return changed
    return None


def _mutants(lines: Events) -> Iterator[Events]:
    """Each field of the event lines, changed in the first line holding it, then in every
    line holding it."""
    events = [at for at, line in enumerate(lines) if "harness" not in line]
    first: dict[Path_, int] = {}
    for at in events:
        for field in _fields(lines[at]):
            first.setdefault(field, at)
    for field, at in first.items():
        for odd in (*ODD, REMOVED):
            changed = _changed(lines[at], field, odd)
            if changed is not None:
                yield [*lines[:at], changed, *lines[at + 1 :]]
            every = [
                _changed(line, field, odd) if "harness" not in line else None for line in lines
            ]
            if sum(line is not None for line in every) > 1:
                yield [line if new is None else new for line, new in zip(lines, every, strict=True)]


def _richness(provider: str, path: Path) -> tuple[int, int]:
    """How many rows derive from the cassette at `path`, then how many lines it has."""
    cassette = Cassette(path)
    lines = stream_lines(cassette)
    return len(derive_variants(lines, provider=provider, header=cassette.header)), len(lines)


def _good_cassettes() -> list[Any]:
    """The `PER_PROVIDER` richest library cassettes (sessions' turns aside) that replay
    to `done`, of each provider that has a catalogue."""
    params = []
    for provider in PROVIDERS:
        good = [
            path
            for path in library_cassettes(provider)
            if "sessions" not in path.parts and _code(path) == DONE
        ]
        good.sort(key=lambda path: (*(-count for count in _richness(provider, path)), path))
        params += [
            pytest.param(provider, path, id=f"{provider}:{path.relative_to(LIBRARY).as_posix()}")
            for path in good[:PER_PROVIDER]
        ]
    return params


def _write(path: Path, header: dict[str, Any] | None, lines: Events) -> None:
    """A cassette written plainly (`write_cassette` syncs each to disk, which costs four
    times its replay here)."""
    whole = [header, *lines] if header is not None else lines
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in whole))


def _code(path: Path) -> str | None:
    """How the cassette at `path` replays (directly), or None where the codec refuses it."""
    try:
        return outcome_code(replay_outcome(path, sdk_objects=False))
    except CassetteError:
        return None


def _wrong_rows(provider: str, header: Any, lines: Events, folder: Path) -> list[Any]:
    """Each row whose variant of a good stream (`lines`) replays to another code than its
    own: `(row, expected, got)`; none for a stream that is not good."""
    mutant, variant = folder / "mutant.jsonl", folder / "variant.jsonl"
    _write(mutant, header, lines)
    if _code(mutant) != DONE:
        return []  # refused by `harness faults`: not a good stream
    wrong = []
    for found in derive_variants(stream_lines(mutant), provider=provider, header=header):
        if found.fault.wire or found.fault.framed:
            continue
        _write(variant, header, found.events)
        code = _code(variant)
        if code != found.expected_code:
            wrong.append((found.fault.name, found.expected_code, code))
    return wrong


@pytest.mark.slow  # every row over every mutant of each provider's streams: seconds each
@pytest.mark.parametrize(("provider", "good"), _good_cassettes())
def test_every_row_derives_from_odd_shapes_and_replays_to_its_code(
    provider: str, good: Path, tmp_path: Path
) -> None:
    header = Cassette(good).header
    lines = stream_lines(good)
    wrong = [
        (*found, mutant)
        for mutant in [lines, *_mutants(lines)]
        for found in _wrong_rows(provider, header, mutant, tmp_path)
    ]
    assert not wrong, wrong[:3]


@pytest.mark.parametrize(
    ("good", "field", "value", "row"),
    [
        pytest.param(
            "openai/responses/one_piece_call.jsonl",
            "arguments",
            None,
            "arguments_mismatch",
            id="a call sent whole, its arguments.done naming none",
        ),
        pytest.param(
            "openai/responses/text.jsonl",
            "response",
            {},
            "inconsistent_response",
            id="no response id before the end",
        ),
    ],
)
def test_a_responses_row_finding_nothing_to_contradict_is_left_out(
    good: str, field: str, value: Any, row: str, tmp_path: Path
) -> None:
    cassette = Cassette(LIBRARY / good)
    lines = [
        {**line, field: value}
        if field in line and line.get("type") != "response.completed"
        else line
        for line in stream_lines(cassette)
    ]
    _write(tmp_path / "good.jsonl", cassette.header, lines)
    assert _code(tmp_path / "good.jsonl") == DONE
    variants = derive_variants(lines, provider=cassette.provider, header=cassette.header)
    assert row not in {variant.fault.name for variant in variants}
    assert _wrong_rows(cassette.provider, cassette.header, lines, tmp_path) == []


#: Converse cassettes a row used to raise on (an id that is a number or missing, an index
#: that is an object, a start that is a string, a tool delta that is a string)
CONVERSE_ODD_SHAPES = {
    "id_a_number": ('"toolUseId":"a"', '"toolUseId":5'),
    "id_missing": ('"toolUseId":"a",', ""),
    "index_an_object": ('"contentBlockIndex":1', '"contentBlockIndex":{"a":1}'),
    "start_a_string": ('"start":{"toolUse":{"toolUseId":"a","name":"b"}}', '"start":"x"'),
    "tool_delta_a_string": ('"toolUse":{"input":"{}"}', '"toolUse":"x"'),
}
_CONVERSE = (
    '{"cassette":1,"provider":"bedrock-converse"}\n'
    '{"messageStart":{"role":"assistant"}}\n'
    '{"contentBlockDelta":{"contentBlockIndex":0,"delta":{"text":"Hi."}}}\n'
    '{"contentBlockStop":{"contentBlockIndex":0}}\n'
    '{"contentBlockStart":{"contentBlockIndex":1,"start":{"toolUse":{"toolUseId":"a","name":"b"}}}}\n'
    '{"contentBlockDelta":{"contentBlockIndex":1,"delta":{"toolUse":{"input":"{}"}}}}\n'
    '{"contentBlockStop":{"contentBlockIndex":1}}\n'
    '{"contentBlockStart":{"contentBlockIndex":2,"start":{"toolUse":{"toolUseId":"c","name":"d"}}}}\n'
    '{"contentBlockDelta":{"contentBlockIndex":2,"delta":{"toolUse":{"input":"{\\"e\\": 1}"}}}}\n'
    '{"contentBlockStop":{"contentBlockIndex":2}}\n'
    '{"messageStop":{"stopReason":"tool_use"}}\n'
)


@pytest.mark.parametrize("shape", sorted(CONVERSE_ODD_SHAPES))
@pytest.mark.parametrize("command", ["faults", "conform"])
def test_faults_and_conform_take_a_converse_stream_of_odd_shape(
    shape: str, command: str, tmp_path: Path
) -> None:
    old, new = CONVERSE_ODD_SHAPES[shape]
    assert old in _CONVERSE
    good = tmp_path / f"{shape}.jsonl"
    good.write_text(_CONVERSE.replace(old, new))
    assert _code(good) == DONE
    arguments = (
        ["faults", str(good), "--out", str(tmp_path / "out")]
        if command == "faults"
        else ["conform", "--provider", "bedrock-converse", str(good), "--", "true"]
    )
    result = CliRunner().invoke(cli, arguments)
    assert "internal error" not in result.output, result.output
    if command == "faults":
        assert result.exit_code == 0, result.output
        written = sorted((tmp_path / "out").glob("*.jsonl"))
        assert any(".truncate_tool_json." in path.name for path in written)


def test_the_library_has_a_good_cassette_of_every_provider_with_a_catalogue() -> None:
    covered = {param.values[0] for param in _good_cassettes()}
    assert covered == set(PROVIDERS)
