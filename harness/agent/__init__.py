"""The agent loop the adapter serves: a model client, the turn loop, tools and session replay.

`run_agent` consumes only internal `ModelEvent`s from a `ModelClient`; cancellation is
cooperative and observed at six checkpoints (see `harness.agent.loop`). The model
clients: `AnthropicModelClient` (`client`), and over another provider's dialect
(`dialect`'s `DialectModelClient`, its request from the provider's `conversation`
module) `OpenAIChatModelClient` and `OpenAIResponsesModelClient` (`openai_client`),
`BedrockConverseModelClient` (`converse_client`) and `GeminiModelClient`
(`gemini_client`). Importing this package never imports an SDK. It may import the flat
core, `harness._cassette`, `harness._providers` (the adapters, the dialects'
`conversation` and `reading`), `harness._replay` (session replay's step) and
`harness.builder`.
"""

from harness.agent.client import AnthropicModelClient, ModelClient, ModelRequest
from harness.agent.converse_client import BedrockConverseModelClient
from harness.agent.gemini_client import GeminiModelClient
from harness.agent.loop import AgentFailed, AgentResult, Checkpoint, EmptyTurnError, run_agent
from harness.agent.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from harness.agent.openai_client import OpenAIChatModelClient, OpenAIResponsesModelClient
from harness.agent.signal import AbortController, AbortSignal
from harness.agent.tools import ReadTool, Tool, ToolError, string_field

__all__ = [
    "AbortController",
    "AbortSignal",
    "AgentFailed",
    "AgentResult",
    "AnthropicModelClient",
    "BedrockConverseModelClient",
    "Checkpoint",
    "EmptyTurnError",
    "GeminiModelClient",
    "Message",
    "ModelClient",
    "ModelRequest",
    "OpenAIChatModelClient",
    "OpenAIResponsesModelClient",
    "ReadTool",
    "TextBlock",
    "Tool",
    "ToolError",
    "ToolResultBlock",
    "ToolUseBlock",
    "run_agent",
    "string_field",
]
