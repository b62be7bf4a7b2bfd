"""The streamed JSON array reader (`harness._providers.jsonarray`): Gemini's body without
`alt=sse`, read in any pieces, and each body that is not one array of objects refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness._providers.jsonarray import (
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
