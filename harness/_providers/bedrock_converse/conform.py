"""What `harness conform` tells a ConverseStream adapter beside the events.

The adapter's rules read no field of the request (the model is in the path), and one
policy, the stop reasons that complete an answer (`ConverseAdapter(stop_reasons=...)`).
`REQUEST` and `POLICY` are their values for a case of the library; a case's header line
carries them (docs/conform.md). `variants(name, lines)` are the cases a library
cassette gives under another policy: `max_tokens` accepted, the cut answer done.
"""

from __future__ import annotations

from typing import Any, Final

from harness._providers.bedrock_converse.adapter import COMPLETE_STOP_REASONS

__all__ = ["LIBRARY", "POLICY", "REQUEST", "variants"]

#: Its default cases: this folder of the harness's cassette library (the top level and
#: `errors/`).
LIBRARY: Final = "bedrock/converse"

#: The request fields the rules read, as a library case has them: none.
REQUEST: Final[dict[str, Any]] = {}
#: The adapter's policy by default.
POLICY: Final[dict[str, Any]] = {"stop_reasons": sorted(COMPLETE_STOP_REASONS)}

Variant = tuple[str, list[dict[str, Any]], dict[str, Any], dict[str, Any], str]


def variants(name: str, lines: list[dict[str, Any]]) -> list[Variant]:
    """(variant, lines, request, policy, what it shows) for the library cassette `name`."""
    if name == "errors/unsupported_stop_reason":
        return [
            (
                "max_tokens_accepted",
                lines,
                REQUEST,
                {**POLICY, "stop_reasons": [*POLICY["stop_reasons"], "max_tokens"]},
                "the policy accepts stopReason max_tokens: the cut answer completes",
            )
        ]
    return []
