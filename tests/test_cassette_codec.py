"""The cassette codec: lazy JSONL reading, optional header, the schema, the atomic writer."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import LIBRARY, library_cassettes

from harness import (
    Cassette,
    CassetteError,
    InputError,
    expand_paths,
    make_header,
    read_cassette,
    replay_outcome,
    write_cassette,
)
from harness._hosts import HOSTS
from harness._providers import names, provider as registered
from harness.builder import StreamBuilder
from harness_cli.main import cli

EVENTS = StreamBuilder().text(0, "Hi").stop().events()


def write_lines(path: Path, lines: list[Any]) -> Path:
    path.write_text(
        "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    )
    return path


@pytest.mark.parametrize("source", [None, 3, b"x.jsonl"], ids=["none", "int", "bytes"])
def test_a_cassette_that_is_no_path_is_an_input_error(source: Any) -> None:
    for opening in (Cassette, read_cassette, replay_outcome):
        with pytest.raises(InputError, match=r"^a cassette is a path or a Cassette, not "):
            opening(source)


def test_expand_paths_takes_one_path_alone_as_one_path(tmp_path: Path) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "a.jsonl").write_text("")
    expected = [str(folder / "a.jsonl")]
    assert expand_paths(str(folder)) == expand_paths(folder) == expand_paths([folder]) == expected


@pytest.mark.parametrize(
    ("paths", "says"),
    [
        (None, "paths are a path or a sequence of them, not NoneType"),
        (3, "paths are a path or a sequence of them, not int"),
        (["a.jsonl", None], "a path is a str or an os.PathLike, not NoneType"),
    ],
    ids=["none", "int", "none-in-list"],
)
def test_expand_paths_refuses_what_is_no_path_in_one_line(paths: Any, says: str) -> None:
    with pytest.raises(InputError) as raised:
        expand_paths(paths)
    assert str(raised.value) == says


def test_blank_lines_are_ignored_and_line_numbers_stay_true(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "c.jsonl", ["", EVENTS[0], "   ", "\t", EVENTS[1], "", "[]"])
    cassette = Cassette(path)
    lines = cassette.lines()
    assert [next(lines).number, next(lines).number] == [2, 5]
    with pytest.raises(CassetteError) as caught:
        next(lines)
    assert str(caught.value) == f"{path}:7: expected a JSON object, got list"


def test_header_is_optional(tmp_path: Path) -> None:
    plain = Cassette(write_lines(tmp_path / "plain.jsonl", EVENTS))
    assert plain.header is None
    assert list(plain.events()) == EVENTS


def test_header_on_line_1_is_metadata_not_an_event(tmp_path: Path) -> None:
    header = make_header("shows a greeting", model="claude-sonnet-4-5-20250929")
    cassette = Cassette(write_lines(tmp_path / "c.jsonl", [header, *EVENTS]))
    assert cassette.header == header
    assert cassette.description == "shows a greeting"
    assert list(cassette.events()) == EVENTS


def test_an_unknown_format_version_says_which_one_is_read(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "c.jsonl", [{"cassette": 2}, *EVENTS])
    with pytest.raises(CassetteError) as caught:
        Cassette(path)
    assert str(caught.value) == (
        f"{path}:1: cassette format version 2 is not supported (this harness reads version 1)"
    )


def test_directives_are_lines_but_not_events(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "c.jsonl", [EVENTS[0], {"harness": "abort"}, *EVENTS[1:]])
    cassette = Cassette(path)
    assert [line.kind for line in cassette.lines()].count("directive") == 1
    assert list(cassette.events()) == EVENTS


def test_reading_is_lazy_line_by_line(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "c.jsonl", [*EVENTS[:2], "{not json", *EVENTS[2:]])
    events = Cassette(path).events()
    assert [next(events), next(events)] == EVENTS[:2]  # the broken line 3 is not read yet
    with pytest.raises(CassetteError, match=r":3: not valid JSON"):
        next(events)


def test_payloads_stay_free_for_broken_providers(tmp_path: Path) -> None:
    builder = (
        StreamBuilder()
        .block_start(0, {"type": "tool_use", "id": "t", "name": "read", "input": None})
        .delta(0, {"type": "input_json_delta", "partial_json": 42})
        .delta(0, {"type": "delta_kind_from_the_future"})
        .block_start(1, {"type": "block_kind_from_the_future"})
    )
    assert Cassette(write_lines(tmp_path / "c.jsonl", builder.events())).validate() == 5


@pytest.mark.parametrize(
    ("event", "reason"),
    [
        (
            {"type": "content_block_delta", "index": "0", "delta": {"type": "text_delta"}},
            "'0' is not",
        ),
        ({"type": "content_block_delta", "index": 0}, "'delta' is a required property"),
        ({"type": "message_start"}, "'message' is a required property"),
        ({"type": "error", "error": {"type": "overloaded_error"}}, "'message' is a required"),
    ],
)
def test_the_envelope_is_strict(tmp_path: Path, event: dict[str, Any], reason: str) -> None:
    path = write_lines(tmp_path / "c.jsonl", [EVENTS[0], event])
    with pytest.raises(CassetteError) as caught:
        Cassette(path).validate()
    assert str(caught.value).startswith(f"{path}:2: event line does not match the cassette schema")
    assert reason in str(caught.value)


# -- the writer --------------------------------------------------------------------------------


def test_written_cassette_reads_back(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    write_cassette(path, EVENTS, header=make_header("round trip"))
    cassette = Cassette(path)
    assert cassette.description == "round trip"
    assert list(cassette.events()) == EVENTS


def test_writer_leaves_an_existing_file_untouched_when_the_lines_fail_midway(
    tmp_path: Path,
) -> None:
    path = tmp_path / "good.jsonl"
    write_cassette(path, EVENTS, header=make_header("the good one"))
    before = path.read_bytes()

    def interrupted() -> Iterator[dict[str, Any]]:
        yield EVENTS[0]
        yield EVENTS[1]
        raise ConnectionError("stream dropped")

    with pytest.raises(ConnectionError):
        write_cassette(path, interrupted(), header=make_header("the half one"))
    assert path.read_bytes() == before
    assert sorted(tmp_path.iterdir()) == [path]  # no temporary file left behind


@pytest.mark.parametrize(
    ("lines", "header", "says"),
    [
        (None, None, "a cassette's lines are an iterable of dicts, not NoneType"),
        ("abc", None, "a cassette's lines are an iterable of dicts, not str"),
        ([*EVENTS[:1], 3], None, "line 2 of a cassette is a dict, not int"),
        (EVENTS, "header", "a cassette header is a dict, not str"),
    ],
    ids=["none", "string", "int-line", "string-header"],
)
def test_writer_refuses_what_is_no_cassette_and_leaves_the_file(
    tmp_path: Path, lines: Any, header: Any, says: str
) -> None:
    path = tmp_path / "kept.jsonl"
    path.write_text("old\n")
    with pytest.raises(InputError) as raised:
        write_cassette(path, lines, header=header)
    assert str(raised.value) == says
    assert path.read_text() == "old\n"


def test_written_cassette_gets_the_mode_a_plain_open_would_give(tmp_path: Path) -> None:
    fresh = tmp_path / "fresh.jsonl"
    write_cassette(fresh, EVENTS)
    umask = os.umask(0)
    os.umask(umask)
    assert fresh.stat().st_mode & 0o777 == 0o666 & ~umask

    shared = tmp_path / "shared.jsonl"
    shared.write_bytes(b"")
    shared.chmod(0o640)
    write_cassette(shared, EVENTS)
    assert shared.stat().st_mode & 0o777 == 0o640


def test_writer_without_overwrite_refuses_an_existing_file(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_bytes(b"precious\n")
    with pytest.raises(FileExistsError):
        write_cassette(path, EVENTS, overwrite=False)
    assert path.read_bytes() == b"precious\n"
    assert sorted(tmp_path.iterdir()) == [path]


# -- what stays light --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "code",
    [
        pytest.param("import harness", id="import-harness"),
        pytest.param(
            f"from harness_cli.main import main; main(['validate', {str(LIBRARY)!r}])",
            id="harness-validate",
        ),
        pytest.param("from harness_cli.main import main; main(['--help'])", id="harness-help"),
    ],
)
@pytest.mark.slow
def test_anthropic_is_not_imported(code: str) -> None:
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    imported = [line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines()]
    assert any(name.startswith("harness") for name in imported)  # the probe did run
    assert not [name for name in imported if name.split(".")[0] == "anthropic"]


@pytest.mark.parametrize(
    "name",
    [
        "TextEvent",
        "ToolCall",
        "ToolCallEvent",
        "DoneEvent",
        "ModelEvent",
        "to_model_events",
        "ato_model_events",
        "StreamProtocolError",
        "Cassette",
        "read_cassette",
        "write_cassette",
    ],
)
def test_public_names_are_importable_from_harness_even_after_their_modules(name: str) -> None:
    import harness._cassette.codec
    import harness._providers.anthropic.adapter
    import harness._replay.direct  # a loaded submodule must not shadow a public name

    assert not isinstance(getattr(harness, name), types.ModuleType)


def _hosted_cassettes() -> list[Any]:
    """(provider, host) for every provider of the registry and every host, and whether the
    provider is served there."""
    return [
        pytest.param(name, host, host in registered(name).hosted, id=f"{name}-on-{host}")
        for name in names()
        for host in HOSTS
    ]


@pytest.mark.parametrize(("provider", "host", "served"), _hosted_cassettes())
def test_a_header_names_a_host_its_provider_is_served_on_or_every_command_refuses_it(
    tmp_path: Path, provider: str, host: str, served: bool
) -> None:
    source = Cassette(
        next(path for path in library_cassettes(provider) if path.parent.name != "errors")
    )
    path = tmp_path / "hosted.jsonl"
    write_cassette(
        path, [line.data for line in source.lines()], header={**(source.header or {}), "host": host}
    )
    if served:
        assert Cassette(path).validate() > 0
        return
    reason = f"{path}:1: host {host!r}: {provider} streams are served on "
    with pytest.raises(CassetteError, match=f"^{re.escape(reason)}"):
        Cassette(path)
    for command in (
        ["validate"],
        ["replay"],
        ["replay", "--via", "sdk"],
        ["export", "--to", "vcr", "--out", str(tmp_path / "vcr")],
        ["export", "--to", "har", "--out", str(tmp_path / "har")],
        ["faults", "--out", str(tmp_path / "faults")],
    ):
        result = CliRunner().invoke(cli, [*command, str(path)])
        assert result.exit_code == 2, (command, result.output)
        assert result.stderr.startswith(reason), (command, result.stderr)
        assert "internal error" not in result.stderr
