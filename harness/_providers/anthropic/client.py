"""The SDK a Messages stream is read with: `anthropic`, its `Anthropic` and `AsyncAnthropic`.

`SDK` says which package and client classes, the API's base URL (its paths start with
`/v1` below it), the variables the client reads (`ANTHROPIC_BASE_URL`,
`ANTHROPIC_API_KEY`); a dependency of the harness, so no extra installs it. A live
recording goes through the SDK itself (`RECORDING`: `harness._record.live`).
"""

from __future__ import annotations

from typing import Final

from harness._providers.sdk import ClientEnv, Sdk

__all__ = ["RECORDING", "SDK"]

SDK: Final = Sdk(
    "anthropic",
    ("Anthropic", "AsyncAnthropic"),
    "https://api.anthropic.com",
    ClientEnv("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"),
    label="Anthropic",
)
#: How `harness record` records a Messages stream: through the SDK's own streamed call.
RECORDING: Final = "sdk"
