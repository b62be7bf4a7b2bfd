"""Google Vertex AI's `streamRawPredict` for a partner model (Anthropic's): the same
server-sent events as the direct API, at Vertex's path.

    POST /v1/projects/{project}/locations/{region}
         /publishers/anthropic/models/{model}:streamRawPredict      (one path)

`rawPredict` is the same answer not streamed. `anthropic.AnthropicVertex` reads the body
with the same SSE decoder as `anthropic.Anthropic`, so a cassette's bytes are the direct
API's (`Framing.encode`), and so is what the guard reads.

`AnthropicVertex`'s `messages.count_tokens` posts to the same `:rawPredict` under the
model `count-tokens` (`.../models/count-tokens:rawPredict`): that is no Messages call,
and no model is named so, so `PLAIN_PATH` leaves it out, and a cassette client or
`harness serve` refuses it as any other path of no dialect, where it was answered the
`Message` of the stream, read as a count with no `input_tokens`.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["PLAIN_PATH", "STREAM_PATH"]

_MODEL: Final = (
    r"/projects/(?P<project>[^/]+)/locations/(?P<region>[^/]+)"
    r"/publishers/(?P<publisher>[^/]+)/models/(?P<model>(?!count-tokens:)[^/:]+)"
)
STREAM_PATH: Final = re.compile(rf"(?:/v1)?{_MODEL}:streamRawPredict")
PLAIN_PATH: Final = re.compile(rf"(?:/v1)?{_MODEL}:rawPredict")
