// The three internal events of the original design (../README.md): the loop consumes only these.
export type ToolCall = { id: string; name: string; input: Record<string, unknown> };

export type ModelEvent =
  | { type: "text"; text: string }
  | { type: "tool_call"; call: ToolCall }
  | { type: "done" };

export const PROTOCOL_ERROR_PREFIX = "Anthropic stream protocol error: ";

export function protocolError(message: string): Error {
  return new Error(PROTOCOL_ERROR_PREFIX + message);
}

// Structure only: is it a JSON object? Field checks belong to the tool that reads them.
export function toolInput(input: unknown): Record<string, unknown> {
  if (input === null || typeof input !== "object" || Array.isArray(input)) {
    throw new Error("tool input must be an object");
  }
  return input as Record<string, unknown>;
}
