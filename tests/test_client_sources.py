"""Cassette clients take what they are given: a path, `-`, a `Cassette`, a folder; each
source is opened, and its header read, once."""

from __future__ import annotations

import io
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import LIBRARY

from harness import (
    Cassette,
    CassetteLine,
    InputError,
    Replayer,
    async_cassette_client,
    cassette_client,
    cassettes_from,
)
from harness._cassette import codec
from harness._json import dump_line
from harness._replay import cache
from harness._replay.clients import client_replayer
from harness.builder import StreamBuilder

TEXT_ONLY = LIBRARY / "text_only.jsonl"
ASK: Any = {
    "model": "claude-sonnet-5",
    "max_tokens": 64,
    "messages": [{"role": "user", "content": "Hi"}],
}


def text_of(client: Any) -> str:
    with client.messages.stream(**ASK) as stream:
        return str(stream.get_final_text())


@pytest.fixture
def stdin(monkeypatch: pytest.MonkeyPatch) -> Iterator[io.BytesIO]:
    """Standard input holding one cassette (text "from stdin")."""
    lines = StreamBuilder().text(0, "from stdin").stop().events()
    data = io.BytesIO(b"".join(dump_line(line) + b"\n" for line in lines))

    class Stdin:
        buffer = data

    monkeypatch.setattr(sys, "stdin", Stdin())
    yield data


def test_one_path_alone_is_one_cassette_everywhere_cassettes_are_taken() -> None:
    assert [c.path for c in cassettes_from(str(TEXT_ONLY))] == [str(TEXT_ONLY)]
    assert [c.path for c in Replayer(str(TEXT_ONLY)).cassettes] == [str(TEXT_ONLY)]


@pytest.mark.parametrize(
    ("given", "says"),
    [
        (None, "cassettes are a path, a Cassette or a sequence of them, not NoneType"),
        (3, "cassettes are a path, a Cassette or a sequence of them, not int"),
        ([None], "a cassette is a path or a Cassette, not NoneType"),
        ([TEXT_ONLY, 3], "a cassette is a path or a Cassette, not int"),
    ],
    ids=["none", "int", "none-in-list", "int-in-list"],
)
def test_cassettes_that_are_no_sources_are_one_input_error(given: Any, says: str) -> None:
    for taking in (cassettes_from, Replayer, cassette_client, async_cassette_client):
        with pytest.raises(InputError) as raised:
            taking(given)
        assert str(raised.value) == says


def test_a_client_reads_a_cassette_from_stdin(stdin: io.BytesIO) -> None:
    client = cassette_client(["-", "-"], match_on=None)  # named twice: read once, kept
    assert text_of(client) == text_of(client) == "from stdin"


def test_a_cassette_read_from_stdin_and_passed_in_is_used(stdin: io.BytesIO) -> None:
    given = Cassette("-")
    client = cassette_client(given, match_on=None)
    assert text_of(client) == "from stdin"


class Renamed(Cassette):
    """A cassette whose lines are changed on the way: served only if the object is used."""

    def lines(self) -> Iterator[CassetteLine]:
        for line in super().lines():
            delta = line.data.get("delta", {})
            if delta.get("type") == "text_delta":
                line = CassetteLine(
                    line.number,
                    line.kind,
                    {**line.data, "delta": {**delta, "text": delta["text"].upper()}},
                )
            yield line


def test_a_cassette_object_passed_in_is_used_as_it_is() -> None:
    plain = text_of(cassette_client(TEXT_ONLY, match_on=None))
    given = Renamed(TEXT_ONLY)
    client = cassette_client(given, match_on=None)
    assert text_of(client) == plain.upper() != plain
    assert client_replayer(client).cassettes[0].header is given.header


def test_the_async_client_takes_a_cassette_object_too() -> None:
    import asyncio

    async def text() -> str:
        client = async_cassette_client(Renamed(TEXT_ONLY), match_on=None)
        async with client.messages.stream(**ASK) as stream:
            return str(await stream.get_final_text())

    assert asyncio.run(text()) == text_of(cassette_client(TEXT_ONLY, match_on=None)).upper()


@pytest.fixture
def opens(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How many times the codec opens each file."""
    counts: dict[str, int] = {}
    real_open = open

    def counting(path: Any, *args: Any, **kwargs: Any) -> Any:
        counts[str(path)] = counts.get(str(path), 0) + 1
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(codec, "open", counting, raising=False)
    return counts


def test_each_source_is_opened_and_its_header_read_once(
    opens: dict[str, int], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    headers: list[Any] = []
    check = codec.Cassette._check

    def counting_check(self: Cassette, number: int, kind: str, data: dict[str, Any]) -> None:
        if kind == "header":
            headers.append(self.path)
        check(self, number, kind, data)

    monkeypatch.setattr(codec.Cassette, "_check", counting_check)
    cache.clear()  # a file an earlier test read is kept for the session: counted here afresh
    for number in (1, 2):
        StreamBuilder().text(0, f"turn {number}").stop().write(
            tmp_path / f"turn-{number:02d}.jsonl", "t"
        )
    client = cassette_client([TEXT_ONLY, tmp_path, TEXT_ONLY], match_on=None)
    for _ in range(4):
        text_of(client)
    expected = [str(TEXT_ONLY), str(tmp_path / "turn-01.jsonl"), str(tmp_path / "turn-02.jsonl")]
    assert opens == dict.fromkeys(expected, 1)
    assert sorted(headers) == sorted(expected)
