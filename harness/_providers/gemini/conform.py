"""What `harness conform` tells a Gemini adapter beside the chunks.

The adapter's rules read no field of the request (a Gemini answer says itself whether it
streams, and a call is answered by its name), and one policy, the finish reasons that
complete an answer (`GeminiAdapter`'s keyword). `REQUEST` and `POLICY` are their values
for a case of the library; a case's header line carries them (docs/conform.md), under
the same names as the adapter's keywords. `variants(name, lines)` are the cases a
library cassette gives under another policy: `MAX_TOKENS` accepted, a cut answer
completes.
"""

from __future__ import annotations

from typing import Any, Final

from harness._providers.gemini.adapter import COMPLETE_FINISH_REASONS

__all__ = ["LIBRARY", "POLICY", "REQUEST", "variants"]

#: Its default cases: this folder of the harness's cassette library (every cassette of
#: the top level and `errors/`).
LIBRARY: Final = "gemini"

#: The request fields the rules read: none.
REQUEST: Final[dict[str, Any]] = {}
#: The adapter's policy by default.
POLICY: Final[dict[str, Any]] = {"finish_reasons": sorted(COMPLETE_FINISH_REASONS)}

Variant = tuple[str, list[dict[str, Any]], dict[str, Any], dict[str, Any], str]


def variants(name: str, lines: list[dict[str, Any]]) -> list[Variant]:
    """(variant, lines, request, policy, what it shows) for the library cassette `name`."""
    if name == "errors/unsupported_finish_reason":
        return [
            (
                "max_tokens_accepted",
                lines,
                REQUEST,
                {**POLICY, "finish_reasons": [*POLICY["finish_reasons"], "MAX_TOKENS"]},
                "the policy accepts finishReason MAX_TOKENS: the cut answer completes",
            )
        ]
    return []
