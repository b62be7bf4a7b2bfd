"""Compatible servers as named profiles: frozen sets of tolerated Chat Completions
deviations, as data (docs/profiles.md is their table).

A `Profile` is the adapter's policy knobs for one server family: each knob reads one
deviation into the canonical form OpenAI's own API sends, never hands wrong data on.
`OPENAI` (the default) is OpenAI's API and loosens nothing. A `Deviation` is one thing a
server is publicly reported to send: what the default makes of it (`default`: an error
code, or `done` where the default already reads it), what the profile makes of it
(`profiled`), how it is read, and where it was reported. Where a deviation cannot be
read without guessing (a dropped or merged call), the profile still refuses it:
`profiled` is then the same error code. Every deviation has a cassette for each profile
listing it, `tests/data/profiles/<profile>/<deviation>.jsonl`, in that server's shape
where servers send it differently (tests hold it).

Pure data: imported by the adapter, so it imports nothing of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

__all__ = ["DEVIATIONS", "OPENAI", "PROFILES", "Deviation", "Profile", "profile"]

#: a deviation the machine reads to an answer: the outcome code of a good stream
DONE: Final = "done"


@dataclass(frozen=True, slots=True)
class Deviation:
    """One publicly reported way a server's stream differs from OpenAI's."""

    name: str
    summary: str
    #: what the default profile makes of it: an outcome code (`done`, an error code)
    default: str
    #: what the profiles listing it make of it
    profiled: str
    #: how it is read into the canonical form (or why it cannot be)
    reading: str
    #: public issues, pull requests or documentation pages showing it, one a server at least
    sources: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Profile:
    """A named, frozen set of tolerated deviations: the knobs `ChatAdapter` reads."""

    name: str
    server: str
    #: the names of the `DEVIATIONS` this profile is documented to meet
    deviations: tuple[str, ...] = ()
    #: `stop` finishing an answer that opened calls is read as `tool_calls`
    stop_finishes_calls: bool = False
    #: a `tool_calls[]` piece without an integer `index` is read as the index it must
    #: have: a new `id` opens the next call, no `id` continues the one open call
    unindexed_pieces: bool = False
    #: a `delta.content` that is a list of parts is read by its parts: `text` parts as
    #: the answer's text, `thinking`, `reference` and `tool_reference` parts passed over
    content_parts: bool = False
    #: the chunks of one answer may each carry another `id`: the first chunk's names it
    varying_chunk_ids: bool = False
    #: the guard hands `delta.annotations` on with each entry's `index` (its place in the
    #: message's list), an exact repeat of one handed on dropped
    indexed_annotations: bool = False


_STOP_WITH_CALLS = (
    "`stop` read as `tool_calls` (the calls are complete: their arguments must parse); "
    "`length` and `content_filter` still cut the answer"
)
_UNINDEXED = (
    "a piece with a new `id` opens the next index (0, 1, ...), a piece without `id` "
    "continues the one open call; with two calls open and no `id`, refused "
    "(`incomplete_tool_call_start`): which call it belongs to is a guess"
)

_CONTENT_PARTS = (
    "`text` parts read as the answer's text, in order; `thinking` parts (the model's "
    "reasoning), `reference` and `tool_reference` parts passed over, as "
    "`reasoning_content` is; a part of "
    "any other type refused (`non_string_content`); the guard hands `content` on as the "
    "text joined, the thinking as `reasoning_content`"
)

DEVIATIONS: Final[dict[str, Deviation]] = {
    deviation.name: deviation
    for deviation in (
        Deviation(
            "filter_chunks",
            'content-filter chunks: `object: ""`, `choices: []` with '
            "`prompt_filter_results`, and `content_filter_results` on choices",
            DONE,
            DONE,
            "passed over by every profile, the default included: they hold nothing of the answer",
            ("https://learn.microsoft.com/en-us/azure/ai-services/openai/concepts/content-filter",),
        ),
        Deviation(
            "stop_with_tool_calls",
            '`finish_reason: "stop"` on an answer that made tool calls (no forcing '
            "`tool_choice` in the request)",
            "stop_with_tool_calls",
            DONE,
            _STOP_WITH_CALLS,
            (
                "https://github.com/vllm-project/vllm/pull/25054",
                "https://github.com/ollama/ollama/pull/7963",
                "https://github.com/googleapis/python-genai/issues/2868",
            ),
        ),
        Deviation(
            "missing_finish_reason",
            "no `finish_reason` at all before `[DONE]`",
            "missing_finish_reason",
            "missing_finish_reason",
            "refused by every profile: without a finish reason a cut answer and a whole "
            "one look the same",
            ("https://github.com/vllm-project/vllm/issues/27572",),
        ),
        Deviation(
            "missing_call_id",
            "a call's first piece without an `id` (its `index` and name present)",
            "incomplete_tool_call_start",
            "incomplete_tool_call_start",
            "refused by every profile: the tool's result names the call by its id, and an "
            "id the server never sent would be the harness's invention",
            ("https://github.com/vllm-project/vllm/issues/18412",),
        ),
        Deviation(
            "one_chunk_call",
            "a whole call in one piece: `index`, `id`, name and all its `arguments`",
            DONE,
            DONE,
            "read by the default: an opening piece may carry arguments",
            ("https://github.com/ollama/ollama/pull/7963",),
        ),
        Deviation(
            "merged_parallel_calls",
            "parallel calls all sent at `index` 0, each with its own `id`: the SDK's "
            "readers join them into one call with unparsable arguments",
            "duplicate_tool_call",
            "duplicate_tool_call",
            "refused by every profile: which arguments belong to which call, or whether "
            "a call was dropped, cannot be known",
            ("https://github.com/BerriAI/litellm/pull/37792",),
        ),
        Deviation(
            "repeated_id_and_name",
            "a call's `id` and `function.name` repeated, unchanged, on every piece",
            DONE,
            DONE,
            "read by the default as one call; the guard hands the chunk on with the "
            "repeats dropped (docs/strict.md)",
            (
                "https://github.com/ggml-org/llama.cpp/pull/12379",
                "https://github.com/BerriAI/litellm/issues/8990",
            ),
        ),
        Deviation(
            "in_band_error",
            'an `{"error": ...}` chunk mid-stream (OpenRouter adds `finish_reason: '
            '"error"` on a choice)',
            "api_error:server_error",
            "api_error:server_error",
            "an error under every profile: `api_error:<type>`",
            (
                "https://openrouter.ai/docs/api-reference/streaming",
                "https://github.com/TanStack/ai/issues/1172",
            ),
        ),
        Deviation(
            "second_finish_chunk",
            "a second chunk repeating `finish_reason` with an empty delta (and `usage`)",
            DONE,
            DONE,
            "read by the default: choice 0 may repeat its finish reason",
            ("https://openrouter.ai/docs/api-reference/streaming",),
        ),
        Deviation(
            "missing_index",
            "`tool_calls[]` pieces without `index` (Gemini: a call in pieces; Mistral: "
            "whole calls side by side in one chunk)",
            "incomplete_tool_call_start",
            DONE,
            _UNINDEXED,
            (
                "https://github.com/THU-MAIC/OpenMAIC/issues/1556",
                "https://github.com/comet-ml/opik/pull/8363",
            ),
        ),
        Deviation(
            "content_parts",
            "`delta.content` as a list of parts: `thinking` parts (their text in a list of "
            "`text` parts), then `text` parts carrying the answer",
            "non_string_content",
            DONE,
            _CONTENT_PARTS,
            (
                "https://github.com/comet-ml/opik/pull/8376",
                "https://github.com/Arize-ai/openinference/pull/3761",
            ),
        ),
        Deviation(
            "varying_chunk_ids",
            "every chunk of one answer carries a new `id` (compound models; the last "
            "chunk's is `stub`)",
            "inconsistent_chunk",
            DONE,
            "the first chunk's `id` names the answer, the others' are not compared; the "
            "guard hands every chunk on with the first one's `id`",
            (
                "https://console.groq.com/docs/compound",
                "https://github.com/BerriAI/litellm/issues/1571",
            ),
        ),
        Deviation(
            "annotations_without_index",
            "`delta.annotations` (`url_citation`s) without `index`, on more than one "
            "chunk: `chat.completions.stream()` raises `RuntimeError: Expected list delta "
            "entry to have an `index` key`",
            DONE,
            DONE,
            "passed over by every profile (citations are not the answer's text); under the "
            "profile the guard hands each annotation on with its `index`, an exact repeat "
            "dropped, so that the SDK's helper gathers them",
            (
                "https://github.com/openai/openai-agents-js/pull/1617",
                "https://openrouter.ai/docs/features/web-search",
            ),
        ),
        Deviation(
            "reasoning_content",
            "`reasoning_content` deltas before the answer's `content`",
            DONE,
            DONE,
            "passed over by every profile: the reasoning is not the answer",
            ("https://api-docs.deepseek.com/guides/reasoning_model",),
        ),
    )
}

#: OpenAI's own API: the default, loosening nothing.
OPENAI: Final = Profile("openai", "OpenAI's API (the default)")

PROFILES: Final[dict[str, Profile]] = {
    found.name: found
    for found in (
        OPENAI,
        Profile("azure", "Azure OpenAI", ("filter_chunks",)),
        Profile(
            "vllm",
            "vLLM",
            ("stop_with_tool_calls", "missing_finish_reason", "missing_call_id"),
            stop_finishes_calls=True,
        ),
        Profile(
            "ollama",
            "Ollama",
            ("one_chunk_call", "stop_with_tool_calls", "merged_parallel_calls"),
            stop_finishes_calls=True,
        ),
        Profile("llamacpp", "llama.cpp's llama-server", ("repeated_id_and_name",)),
        Profile("fireworks", "Fireworks", ("repeated_id_and_name",)),
        Profile(
            "openrouter",
            "OpenRouter",
            ("in_band_error", "second_finish_chunk", "annotations_without_index"),
            indexed_annotations=True,
        ),
        Profile(
            "gemini",
            "Gemini's OpenAI-compatible endpoint",
            ("missing_index", "stop_with_tool_calls"),
            stop_finishes_calls=True,
            unindexed_pieces=True,
        ),
        Profile("deepseek", "DeepSeek", ("reasoning_content",)),
        Profile("groq", "Groq", ("in_band_error", "varying_chunk_ids"), varying_chunk_ids=True),
        Profile(
            "mistral",
            "Mistral's API",
            ("content_parts", "missing_index"),
            unindexed_pieces=True,
            content_parts=True,
        ),
    )
}


def profile(name: str) -> Profile:
    """The profile called `name`; `ValueError` naming the known ones if none is."""
    try:
        return PROFILES[name]
    except KeyError:
        known = ", ".join(PROFILES)
        raise ValueError(f"no profile {name!r} for openai-chat (known: {known})") from None
