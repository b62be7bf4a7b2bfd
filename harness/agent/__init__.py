"""The agent loop the adapter serves: a model client, the turn loop, tools and session replay.

`run_agent` consumes only internal `ModelEvent`s from a `ModelClient`; cancellation is
cooperative and observed at six checkpoints (see `harness.agent.loop`). Importing this
package never imports the Anthropic SDK. It may import the flat core, `harness._cassette`,
`harness._providers` (the adapters), `harness._replay` (session replay's step) and
`harness.builder`.
"""

from harness.agent.client import AnthropicModelClient, ModelClient, ModelRequest
from harness.agent.loop import AgentFailed, AgentResult, Checkpoint, EmptyTurnError, run_agent
from harness.agent.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from harness.agent.signal import AbortController, AbortSignal
from harness.agent.tools import ReadTool, Tool, ToolError, string_field

__all__ = [
    "AbortController",
    "AbortSignal",
    "AgentFailed",
    "AgentResult",
    "AnthropicModelClient",
    "Checkpoint",
    "EmptyTurnError",
    "Message",
    "ModelClient",
    "ModelRequest",
    "ReadTool",
    "TextBlock",
    "Tool",
    "ToolError",
    "ToolResultBlock",
    "ToolUseBlock",
    "run_agent",
    "string_field",
]
