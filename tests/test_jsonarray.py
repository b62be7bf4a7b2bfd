"""The streamed JSON array reader (`harness._providers.jsonarray`): Gemini's body without
`alt=sse`, read in any pieces, and each body that is not one array of objects refused.
Bounded as the SSE and frame readers are: an element longer than `MAX_LINE_BYTES` is
refused as soon as that is known, the rest of it unread, and one that may hold more than
`MAX_VALUES` values before it is parsed."""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Callable, Iterator
from itertools import pairwise
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import parsing_spied
from hypothesis import given, settings, strategies as st

from harness._json import MAX_LINE_BYTES, MAX_VALUES, values_at_most
from harness._providers import jsonarray
from harness._providers.jsonarray import (
    MAX_ELEMENT,
    SEPARATOR,
    ArrayDecoder,
    ArrayError,
    elements_from_body,
    elements_from_chunks,
)

BODY = (Path(__file__).parent / "data" / "gemini" / "llm_gemini_tool_call_array.json").read_bytes()


def test_a_recorded_body_reads_the_same_whole_and_cut_at_every_byte() -> None:
    whole = elements_from_body(BODY)
    assert [len(element["candidates"]) for element in whole] == [1, 1]
    assert list(elements_from_chunks(BODY[at : at + 1] for at in range(len(BODY)))) == whole


def test_braces_and_escapes_inside_strings_do_not_end_an_element() -> None:
    body = b'[{"a": "} \\" {"}\r\n,\r\n{"b": "\\\\"}]'
    assert elements_from_body(body) == [{"a": '} " {'}, {"b": "\\"}]
    assert list(elements_from_chunks(body[at : at + 1] for at in range(len(body)))) == [
        {"a": '} " {'},
        {"b": "\\"},
    ]


def test_each_element_comes_as_soon_as_it_is_whole() -> None:
    decoder = ArrayDecoder()
    assert decoder.feed(b'[{"a": 1}\n,') == [{"a": 1}]
    assert decoder.rest_at == 9
    assert decoder.feed(b'{"b"') == []
    assert decoder.feed(b": 2}]") == [{"b": 2}]
    decoder.finish()


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"", "truncated_array"),
        (b'[{"a": 1}', "truncated_array"),
        (b'[{"a": ', "truncated_array"),
        (b'{"a": 1}', "not_an_array"),
        (b"data: {}", "not_an_array"),
        (b"[1, 2]", "not_an_array"),
        (b'["text"]', "not_an_array"),
        (b"[[]]", "not_an_array"),
        (b"[{},]", "not_an_array"),
        (b"[{}{}]", "not_an_array"),
        (b"[,{}]", "not_an_array"),
        (b"[{}] []", "not_an_array"),
        (b'[{"a": NaN}]', "not_an_array"),
    ],
)
def test_a_body_that_is_not_one_array_of_objects_is_refused(body: bytes, code: str) -> None:
    with pytest.raises(ArrayError) as raised:
        elements_from_body(body)
    assert raised.value.code == code


def test_an_element_past_the_bound_is_refused_as_soon_as_that_much_is_held() -> None:
    decoder = ArrayDecoder(max_element=64)
    decoder.feed(b'[{"a": "' + b"x" * 50)
    with pytest.raises(ArrayError, match="longer than 64 bytes"):
        decoder.feed(b"x" * 20)


def test_an_empty_array_is_no_element() -> None:
    assert elements_from_body(b" [ ] ") == []


MIB = 2**20
TOO_LONG = f"element 1 is longer than {MAX_LINE_BYTES} bytes"


def _crowded(count: int) -> bytes:
    """An element of a list of `count` `{}`: it may hold `2 * count + 2` values."""
    return orjson.dumps({"pad": [{}] * count})


def _long(size: int) -> bytes:
    """An element of one text, `size` bytes long."""
    return b'{"pad": "' + b"x" * (size - 11) + b'"}'


def _pieces(body: bytes, size: int) -> Iterator[bytes]:
    return (body[at : at + size] for at in range(0, len(body), size))


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes of the elements the reader parses from now on."""
    return parsing_spied(monkeypatch, jsonarray)


def test_an_element_is_held_to_what_a_line_may_hold() -> None:
    assert MAX_ELEMENT == MAX_LINE_BYTES


def test_an_element_longer_than_a_line_is_refused_before_the_rest_of_it_is_read() -> None:
    read = 0

    def body() -> Iterator[bytes]:  # 17 MiB of one text, a MiB at a time, and no end
        nonlocal read
        for piece in [b'[{"pad": "', *[b"x" * MIB] * 17]:
            read += 1
            yield piece

    with pytest.raises(ArrayError) as refused:
        list(elements_from_chunks(body()))
    assert (refused.value.code, str(refused.value)) == ("not_an_array", TOO_LONG)
    assert read == 9  # its opening, and the eight MiB it holds one byte past the limit


def test_a_piece_past_the_limit_is_refused_and_none_of_it_held() -> None:
    piece = b"[" + _long(MAX_LINE_BYTES + MIB)
    decoder = ArrayDecoder()
    tracemalloc.start()
    try:
        with pytest.raises(ArrayError, match=TOO_LONG):
            decoder.feed(piece)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < MIB, f"peak {peak / MIB:.1f} MiB"


@pytest.mark.parametrize("size", [MAX_LINE_BYTES + 9, 65536, 100_003], ids=str)
def test_an_element_of_the_length_a_line_may_hold_is_read_one_byte_more_refused(
    size: int,
) -> None:
    element = _long(MAX_LINE_BYTES)
    (read,) = elements_from_chunks(_pieces(b"[" + element + b"]", size))
    assert len(read["pad"]) == MAX_LINE_BYTES - 11
    with pytest.raises(ArrayError, match=TOO_LONG):
        list(elements_from_chunks(_pieces(b"[" + _long(MAX_LINE_BYTES + 1) + b"]", size)))


@pytest.mark.parametrize("size", [2**22, 65536, 100_003], ids=str)
def test_an_element_of_too_many_values_is_refused_unparsed_as_soon_as_they_are_counted(
    size: int, parsed: list[int]
) -> None:
    first = b'{"candidates": []}'
    crowded = _crowded(MAX_VALUES)  # 3 MiB: twice the values it may hold
    body = b"[" + first + SEPARATOR + crowded + b"]"
    read = 0
    decoder = ArrayDecoder()
    with pytest.raises(ArrayError) as refused:
        for piece in _pieces(body, size):
            read += len(piece)
            decoder.feed(piece)
    assert refused.value.code == "not_an_array"
    assert str(refused.value) == f"element 2 may hold more than {MAX_VALUES} JSON values, the limit"
    assert parsed == [len(first)]  # the element before it only
    if size < len(body):
        assert read < len(first) + len(crowded) * 3 // 4  # refused where its count passed


@pytest.mark.parametrize("size", [2**21, 65536, 100_003], ids=str)
def test_an_element_of_as_many_values_as_the_limit_is_read_one_more_refused(size: int) -> None:
    most = _crowded(MAX_VALUES // 2 - 1)
    over = b'{"a":0,' + most[1:]  # one comma more
    assert (values_at_most(most), values_at_most(over)) == (MAX_VALUES, MAX_VALUES + 1)
    (read,) = elements_from_chunks(_pieces(b"[" + most + b"]", size))
    assert len(read["pad"]) == MAX_VALUES // 2 - 1
    with pytest.raises(ArrayError, match="may hold more than"):
        list(elements_from_chunks(_pieces(b"[" + over + b"]", size)))


def test_megabytes_of_white_space_between_elements_are_passed_over() -> None:
    body = b"[" + b" \r\n\t" * MIB + b'{"a": 1}' + b"\n" * MIB + b"]"
    assert list(elements_from_chunks(_pieces(body, 65536))) == [{"a": 1}]


JSON: Any = st.recursive(
    # within 64 bits: past them orjson reads the nearest double (docs/reliability.md)
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)
DUMPS: dict[str, Callable[[Any], str]] = {
    "compact": lambda value: json.dumps(value, separators=(",", ":"), ensure_ascii=False),
    "indented": lambda value: json.dumps(value, indent=2),
}


@pytest.mark.slow
@settings(deadline=None)
@given(
    elements=st.lists(st.dictionaries(st.text(), JSON, max_size=4), max_size=4),
    dumps=st.sampled_from(sorted(DUMPS)),
    cuts=st.lists(st.integers(0, 10**4), max_size=8),
    step=st.sampled_from([1, 2, 7, 64]),
)
def test_any_array_of_objects_cut_anywhere_reads_as_json_reads_it(
    elements: list[dict[str, Any]], dumps: str, cuts: list[int], step: int
) -> None:
    text = "[" + "\n,\r\n".join(map(DUMPS[dumps], elements)) + "\n]"
    body = text.encode()
    at = sorted({cut % (len(body) + 1) for cut in cuts} | {0, len(body)})
    with pytest.MonkeyPatch.context() as patch:  # stretches short enough to end anywhere
        patch.setattr(jsonarray, "STEP", step)
        assert list(elements_from_chunks(body[a:b] for a, b in pairwise(at))) == elements


def test_an_integer_past_64_bits_is_read_as_orjson_reads_it() -> None:
    """The decision docs/reliability.md states: an event's JSON is orjson's reading, whose
    integer past 64 bits is the nearest double (`json.loads` would keep it exact)."""
    body = (
        b'[{"big": 18446744073709551616, "low": -9223372036854775809, "max": 18446744073709551615}]'
    )
    assert list(elements_from_chunks([body])) == [
        {"big": 2.0**64, "low": -(2.0**63), "max": 2**64 - 1}
    ]
