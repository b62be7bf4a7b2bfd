"""The session's cassette cache (`harness._replay.cache`): a file is read, checked and
encoded once while it is unchanged, read afresh when it changes, and never kept bad."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import LIBRARY

from harness._cassette.codec import Cassette, write_cassette
from harness._exceptions import CassetteError
from harness._replay import cache
from harness._replay.cache import kept, kept_cassettes

TEXT = list(Cassette(LIBRARY / "text_only.jsonl").events())
TOOLS = list(Cassette(LIBRARY / "two_tools.jsonl").events())


@pytest.fixture(autouse=True)
def empty_cache() -> Iterator[None]:
    cache.clear()
    yield
    cache.clear()


def test_the_same_unchanged_file_is_read_once(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    write_cassette(path, TEXT)
    first = kept(path)
    assert kept(path) is first
    assert kept_cassettes([path, tmp_path / "a.jsonl"]) == [first, first]


def test_a_rewritten_file_is_read_afresh(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    write_cassette(path, TEXT)
    first = kept(path)
    write_cassette(path, TOOLS)  # a re-recording: a new file renamed over the old one
    second = kept(path)
    assert second is not first
    assert [line.data for line in second.lines()] == TOOLS


def test_a_file_changed_in_place_is_read_afresh(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    write_cassette(path, TEXT)
    first = kept(path)
    with open(path, "ab") as handle:
        handle.write(b'{"type": "ping"}\n')
    assert kept(path) is not first
    assert [line.data for line in kept(path).lines()][-1] == {"type": "ping"}


def test_a_bad_cassette_raises_at_every_call_and_is_not_kept(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"type": "message_start"}\n')
    for _ in range(2):
        with pytest.raises(CassetteError, match=r"bad\.jsonl:1:"):
            kept(path)
    write_cassette(path, TEXT)
    assert [line.data for line in kept(path).lines()] == TEXT


def test_memory_is_bounded_the_least_recently_used_going_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = [tmp_path / f"{name}.jsonl" for name in "abc"]
    for path in paths:
        write_cassette(path, TEXT)
    monkeypatch.setattr(cache, "MAX_CACHED_BYTES", 2 * os.path.getsize(paths[0]))
    a, b = kept(paths[0]), kept(paths[1])
    assert kept(paths[0]) is a  # a is now the most recently used
    kept(paths[2])
    assert kept(paths[0]) is a
    assert kept(paths[1]) is not b  # evicted, read again


def test_a_cassette_given_is_read_through_itself_once(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    write_cassette(path, TEXT)
    given = Cassette(path)
    first, again = kept_cassettes([given, given])
    assert first is again
    assert first is not kept(path)  # an object given is its own, not the path's


@pytest.mark.slow
def test_the_client_fixtures_of_a_session_share_one_read_of_a_cassette(
    pytester: pytest.Pytester,
) -> None:
    (pytester.path / "cassettes").mkdir()
    write_cassette(pytester.path / "cassettes" / "a.jsonl", TEXT)
    pytester.makepyfile(
        test_shared="""
        import pytest
        from harness._replay.clients import client_replayer

        SEEN = []

        @pytest.mark.cassette("a")
        @pytest.mark.parametrize("number", range(3))
        def test_stream(harness_client, number):
            SEEN.append(id(client_replayer(harness_client).cassettes[0]))
            for _ in harness_client.messages.create(
                model="m", max_tokens=1, messages=[], stream=True
            ):
                pass

        def test_one_cassette_object():
            assert len(SEEN) == 3 and len(set(SEEN)) == 1
        """
    )
    pytester.runpytest_inprocess("-p", "no:cacheprovider").assert_outcomes(passed=4)
