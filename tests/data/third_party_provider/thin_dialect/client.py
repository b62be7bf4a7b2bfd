"""The SDK a thin stream is read with: `thin_sdk` (`ThinClient`, `AsyncThinClient`)."""

from __future__ import annotations

from typing import Final

from harness._providers.sdk import ClientEnv, Sdk

SDK: Final = Sdk(
    "thin_sdk",
    ("ThinClient", "AsyncThinClient"),
    "https://api.thin.example",
    ClientEnv("THIN_BASE_URL", "THIN_API_KEY"),
    label="Thin",
)
RECORDING: Final = "http"


def auth_headers(api_key: str) -> dict[str, str]:
    return {"authorization": f"Bearer {api_key}"}
