"""`GeminiModelClient`: the agent loop over Gemini's `streamGenerateContent`, through
google-genai's `Client` (its async face, `client.aio`).

The loop's messages and tool definitions become a Gemini request (the provider's
`conversation` module, through the registry): its `contents` go to
`aio.models.generate_content_stream(model=..., contents=..., config=...)`, and the rest
of the body (`systemInstruction`, `tools`, `generationConfig`'s fields) is its `config`,
which google-genai sends back as that body. Each `GenerateContentResponse` it yields goes
through the provider's strict adapter as the chunk it was on the wire
(`reading.wire_chunk`), the abort signal answered as `adapted` answers it
(`DialectModelClient`); an `{"error": ...}` chunk, which google-genai raises
mid-stream, is handed to the adapter as that chunk (`reading.error_line`), so a turn
fails with the API error replay reports. google-genai is imported only when a client is
created without one (`genai.Client()`, its key from the environment).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Final

from harness._providers import provider
from harness._providers.gemini.errors import PROVIDER as GEMINI
from harness.agent.dialect import DialectModelClient

if TYPE_CHECKING:
    from google.genai import Client

__all__ = ["DEFAULT_GEMINI_MODEL", "GeminiModelClient"]

DEFAULT_GEMINI_MODEL: Final = "gemini-2.5-flash"


class GeminiModelClient(DialectModelClient["Client"]):
    """`ModelClient` over `genai.Client().aio.models` (the client created from the
    environment when not given; the Gemini API's or Vertex AI's, as it was built)."""

    PROVIDER = GEMINI
    DEFAULT_MODEL = DEFAULT_GEMINI_MODEL

    def _new_sdk(self) -> Client:
        from google import genai

        return genai.Client()

    async def _open(self, params: dict[str, Any]) -> Any:
        body = dict(params)
        model, contents = body.pop("model"), body.pop("contents")
        config: Any = {**body.pop("generationConfig", {}), **body}
        responses = await self._sdk().aio.models.generate_content_stream(
            model=model, contents=contents, config=config or None
        )
        return _Chunks(responses)


class _Chunks:
    """google-genai's stream of responses as the chunks they were; `close()` closes it."""

    def __init__(self, responses: Any) -> None:
        self._responses = responses
        self._reading = provider(GEMINI).reading

    def __aiter__(self) -> AsyncIterator[Any]:
        return self._read()

    async def _read(self) -> AsyncIterator[Any]:
        try:
            async for response in self._responses:
                yield self._reading.wire_chunk(response)
        except Exception as error:
            line = self._reading.error_line(error)
            if line is None:
                raise
            yield line

    async def close(self) -> None:
        await self._responses.aclose()
