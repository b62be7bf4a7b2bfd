"""What `harness conform` tells a Responses adapter beside the events.

The adapter's rules read one field of the request, the resume's `starting_after` (a
`GET /v1/responses/{id}?stream=true&starting_after=N` stream starts at sequence N+1,
without `response.created`), and a policy, the incomplete reasons that still complete
an answer and whether a refusal is an answer (`ResponsesAdapter`'s keywords). `REQUEST`
and `POLICY` are their values for a case of the library; a case's header line carries
them (docs/conform.md), under the same names as the adapter's keywords.
`variants(name, lines)` are the cases a library cassette gives under another request or
policy, each a rule those fields decide.
"""

from __future__ import annotations

from typing import Any, Final

__all__ = ["LIBRARY", "POLICY", "REQUEST", "variants"]

#: Its default cases: this folder of the harness's cassette library (every cassette of
#: the top level and `errors/`).
LIBRARY: Final = "openai/responses"

#: The request fields the rules read, as a library case has them.
REQUEST: Final[dict[str, Any]] = {"starting_after": None}
#: The adapter's policy by default.
POLICY: Final[dict[str, Any]] = {"incomplete_reasons": [], "refusal_is_answer": False}

Variant = tuple[str, list[dict[str, Any]], dict[str, Any], dict[str, Any], str]

#: library cassette -> the sequence number a resumed variant of it starts after: in the
#: middle of an output item, so that the item was added before the resume point
_RESUMED_AFTER: Final = {"text": 4, "one_tool": 3}


def _resumed(lines: list[dict[str, Any]], after: int) -> list[dict[str, Any]]:
    return [line for line in lines if line.get("sequence_number", after + 1) > after]


def variants(name: str, lines: list[dict[str, Any]]) -> list[Variant]:
    """(variant, lines, request, policy, what it shows) for the library cassette `name`."""
    if name in _RESUMED_AFTER:
        after = _RESUMED_AFTER[name]
        return [
            (
                "resumed",
                _resumed(lines, after),
                {**REQUEST, "starting_after": after},
                POLICY,
                f"the stream resumed after sequence number {after} (starting_after): it "
                "begins mid-item, without response.created",
            )
        ]
    if name == "errors/response_incomplete":
        return [
            (
                "max_output_tokens_accepted",
                lines,
                REQUEST,
                {**POLICY, "incomplete_reasons": ["max_output_tokens"]},
                "the policy accepts an answer cut at max_output_tokens: it completes",
            )
        ]
    return []
