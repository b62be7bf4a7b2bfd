"""The SDK a Chat Completions stream is read with: `openai`, the one OpenAI's two dialects share.

`SDK` is `openai_shared.OPENAI_SDK` (`OpenAI`, `AsyncOpenAI`, the `openai` extra, the
base URL below `/v1`, `OPENAI_BASE_URL` and `OPENAI_API_KEY`). A live recording is a
plain streamed POST (`RECORDING`: `harness._record.over_http`), its key sent as
`auth_headers` says, without importing the SDK.
"""

from __future__ import annotations

from typing import Final

from harness._providers.openai_shared import OPENAI_SDK, auth_headers

__all__ = ["RECORDING", "SDK", "auth_headers"]

SDK: Final = OPENAI_SDK
#: How `harness record` records it: a plain streamed POST, no SDK.
RECORDING: Final = "http"
