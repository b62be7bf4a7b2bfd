"""Raw streams written in Python, a builder a dialect, each writing what its API sends.

`messages` holds `StreamBuilder` (Anthropic's Messages stream), `chat` holds
`ChatStreamBuilder` (OpenAI's Chat Completions chunks, ended by `data: [DONE]`),
`responses` holds `ResponsesStreamBuilder` (OpenAI's Responses events, numbered); `base`
holds what they share: the lines, `raw` and `directive`, `interleave`, `events()`,
`write(path, description, request=...)` (a cassette whose header names the provider),
and `split_json`. High-level calls write a whole part of an answer the way the API sends
it; low-level calls place one line each, for interleaving and for deliberately broken
streams (docs/faults.md, docs/openai.md). It may import `harness._cassette` (the header
and the writer).
"""

from harness.builder.base import split_json
from harness.builder.chat import ChatStreamBuilder
from harness.builder.messages import StreamBuilder
from harness.builder.responses import ResponsesStreamBuilder

__all__ = ["ChatStreamBuilder", "ResponsesStreamBuilder", "StreamBuilder", "split_json"]
