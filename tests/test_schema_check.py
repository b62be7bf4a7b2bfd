"""The compiled pre-check agrees with the `jsonschema` validator whenever it answers.

`True` lets the codec skip the validator, so a `True` for a line the validator rejects
would be a bug; `False` is exact too, because `not` and `if` are built from it.
"""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest
from conftest import library_cassettes
from hypothesis import given, settings, strategies as st
from jsonschema import Draft202012Validator

from harness._cassette.codec import schema
from harness._cassette.schema import compile_check

KINDS = ("header", "event", "directive")
DEFINITIONS = schema()["$defs"]
EVENT_TYPES = DEFINITIONS["event"]["properties"]["type"]["enum"]


def validator(kind: str) -> Draft202012Validator:
    return Draft202012Validator({"$ref": f"#/$defs/{kind}", "$defs": DEFINITIONS})


CHECKS = {kind: compile_check({"$ref": f"#/$defs/{kind}"}, DEFINITIONS) for kind in KINDS}
VALIDATORS = {kind: validator(kind) for kind in KINDS}

WORDS = st.sampled_from(
    ["", "x", "text", "text_delta", "tool_use", "synthetic", "abort", *EVENT_TYPES]
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 3),
    st.floats(-2, 3, allow_nan=False),
    WORDS,
)
KEYS = st.sampled_from(
    ["type", "index", "delta", "content_block", "message", "error", "message",
     "cassette", "harness", "description", "source", "text", "partial_json", "model"]
)  # fmt: skip
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=10,
)
LINES = st.one_of(
    st.dictionaries(KEYS, VALUES, max_size=5),
    st.fixed_dictionaries(
        {"type": st.sampled_from(EVENT_TYPES)},
        optional={key: VALUES for key in ("index", "delta", "content_block", "error", "harness")},
    ),
    st.fixed_dictionaries(
        {"cassette": SCALARS},
        optional={"description": VALUES, "source": VALUES, "model": VALUES},
    ),
    VALUES,
)


@settings(max_examples=300, deadline=None)
@given(line=LINES)
@pytest.mark.slow
def test_a_verdict_always_agrees_with_the_validator(line: Any) -> None:
    for kind in KINDS:
        verdict = CHECKS[kind](line)
        assert verdict is None or verdict == VALIDATORS[kind].is_valid(line), kind


def cassette_lines() -> list[tuple[str, Any]]:
    found = []
    for path in library_cassettes():
        for raw in path.read_bytes().splitlines():
            if raw.strip():
                found.append((path.name, orjson.loads(raw)))
    return found


def kind_of(line: dict[str, Any]) -> str:
    return "header" if "cassette" in line else "directive" if "harness" in line else "event"


def test_every_line_of_every_cassette_is_settled_by_the_fast_check() -> None:
    lines = cassette_lines()
    assert len(lines) > 100
    for name, line in lines:
        kind = kind_of(line)
        assert CHECKS[kind](line) is VALIDATORS[kind].is_valid(line) is True, (name, line)


ODD_VALUES: tuple[Any, ...] = (None, True, 1.0, -1, "1", [], {"type": "x"})


def near_misses(line: dict[str, Any]) -> list[dict[str, Any]]:
    """`line` with each key, and each key of a nested object, removed or given an odd value."""
    variants: list[dict[str, Any]] = []
    for key, value in line.items():
        variants.append({k: v for k, v in line.items() if k != key})
        variants.extend({**line, key: odd} for odd in ODD_VALUES)
        if isinstance(value, dict):
            for inner in value:
                variants.append({**line, key: {k: v for k, v in value.items() if k != inner}})
                variants.extend({**line, key: {**value, inner: odd}} for odd in ODD_VALUES)
    return variants


@pytest.mark.slow
def test_near_misses_of_every_cassette_line_get_the_validators_verdict() -> None:
    checked = 0
    lines = cassette_lines()
    distinct = {orjson.dumps(line, option=orjson.OPT_SORT_KEYS): line for _, line in lines}
    for line in distinct.values():
        for variant in near_misses(line):
            for kind in KINDS:
                verdict = CHECKS[kind](variant)
                assert verdict is None or verdict == VALIDATORS[kind].is_valid(variant), variant
                checked += 1
    assert checked > 10_000


def test_the_check_follows_the_schema_file_not_a_copy_of_it() -> None:
    changed = copy.deepcopy(DEFINITIONS)
    changed["event"]["properties"]["type"]["enum"].remove("ping")
    check = compile_check({"$ref": "#/$defs/event"}, changed)
    assert CHECKS["event"]({"type": "ping"}) is True
    assert check({"type": "ping"}) is False


@pytest.mark.parametrize(
    "keyword", [{"pattern": "^a"}, {"additionalProperties": False}, {"$dynamicRef": "#x"}]
)
def test_an_unknown_keyword_is_never_a_certain_match(keyword: dict[str, Any]) -> None:
    check = compile_check({"type": "object", **keyword})
    assert check({"type": "x"}) is None
    assert check("not an object") is False


def test_json_equality_rules_hold_for_const() -> None:
    check = compile_check({"const": 1})
    assert (check(1), check(1.0), check(True), check("1"), check(None)) == (
        True, True, False, False, False,
    )  # fmt: skip
