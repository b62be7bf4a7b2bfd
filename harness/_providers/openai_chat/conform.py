"""What `harness conform` tells a Chat Completions adapter beside the chunks.

The adapter's rules read one field of the request, `tool_choice` (a forced call finishes
with `stop`), and a policy, the finish reasons that complete an answer and whether a
refusal is an answer (`ChatAdapter`'s keywords). `REQUEST` and `POLICY` are their values
for a case of the library; a case's header line carries them (docs/conform.md), under
the same names as the adapter's keywords. `variants(name, lines)` are the cases a
library cassette gives under another request or policy, each a rule those fields decide,
and the deviations every adapter must read alike (OpenRouter's `delta.annotations`
without `index`, on two chunks: passed over, the answer done; docs/profiles.md).
"""

from __future__ import annotations

import copy
from typing import Any, Final

from harness._providers.openai_chat.adapter import COMPLETE_FINISH_REASONS

__all__ = ["LIBRARY", "POLICY", "REQUEST", "variants"]

#: Its default cases: this folder of the harness's cassette library (every cassette of
#: the top level and `errors/`).
LIBRARY: Final = "openai/chat"

#: The request fields the rules read, as a library case has them.
REQUEST: Final[dict[str, Any]] = {"tool_choice": None}
#: The adapter's policy by default.
POLICY: Final[dict[str, Any]] = {
    "finish_reasons": sorted(COMPLETE_FINISH_REASONS),
    "refusal_is_answer": False,
}

Variant = tuple[str, list[dict[str, Any]], dict[str, Any], dict[str, Any], str]


def _citation(url: str, title: str) -> dict[str, Any]:
    """An OpenRouter `url_citation` annotation, as it sends them: without `index`."""
    return {"type": "url_citation", "url_citation": {"url": url, "title": title, "content": ""}}


def _annotated(lines: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """`lines` with annotations without `index` on their last two text chunks."""
    annotated = copy.deepcopy(lines)
    texts = [
        line["choices"][0]["delta"]
        for line in annotated
        if line.get("choices") and line["choices"][0].get("delta", {}).get("content")
    ]
    if len(texts) < 2:
        return None
    first = _citation("https://en.wikipedia.org/wiki/Paris", "Paris")
    texts[-2]["annotations"] = [first]
    texts[-1]["annotations"] = [first, _citation("https://en.wikipedia.org/wiki/France", "France")]
    return annotated


def variants(name: str, lines: list[dict[str, Any]]) -> list[Variant]:
    """(variant, lines, request, policy, what it shows) for the library cassette `name`."""
    if name == "text":
        annotated = _annotated(lines)
        if annotated is None:
            return []
        return [
            (
                "annotations_without_index",
                annotated,
                REQUEST,
                POLICY,
                "url_citation annotations without index on two chunks (OpenRouter): "
                "passed over, the answer done",
            )
        ]
    if name == "errors/stop_with_tool_calls":
        return [
            (
                "tool_choice_required",
                lines,
                {**REQUEST, "tool_choice": "required"},
                POLICY,
                "the request forced a call (tool_choice required): finish_reason stop "
                "with the call completes the answer",
            )
        ]
    if name == "errors/refusal":
        return [
            (
                "refusal_is_answer",
                lines,
                REQUEST,
                {**POLICY, "refusal_is_answer": True},
                "the policy takes a refusal as an answer: its text is yielded as text",
            )
        ]
    if name == "errors/unsupported_finish_reason":
        return [
            (
                "length_accepted",
                lines,
                REQUEST,
                {**POLICY, "finish_reasons": [*POLICY["finish_reasons"], "length"]},
                "the policy accepts finish_reason length: the cut answer completes",
            )
        ]
    return []
