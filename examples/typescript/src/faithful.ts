// toModelEvents exactly as the original design specifies it (its rules: ../README.md), kept
// to show what `harness conform` finds in it: docs/conform.md walks through each disagreement.
import type Anthropic from "@anthropic-ai/sdk";
import { type ModelEvent, protocolError, toolInput } from "./types";

type ActiveTool = {
  id: string;
  name: string;
  startInput: unknown;
  json: string;
  receivedInputJsonDelta: boolean;
};

export async function* toModelEvents(
  events: AsyncIterable<Anthropic.RawMessageStreamEvent>,
): AsyncGenerator<ModelEvent> {
  const activeTools = new Map<number, ActiveTool>();
  let stopReason: Anthropic.StopReason | null | undefined;
  let toolCallCount = 0;
  let receivedMessageStop = false;

  for await (const event of events) {
    if (event.type === "content_block_start" && event.content_block.type === "tool_use") {
      if (activeTools.has(event.index)) {
        throw protocolError(`duplicate tool_use start for block ${event.index}`);
      }
      const block = event.content_block;
      activeTools.set(event.index, {
        id: block.id,
        name: block.name,
        startInput: block.input,
        json: "",
        receivedInputJsonDelta: false,
      });
    } else if (event.type === "content_block_delta") {
      if (event.delta.type === "text_delta") {
        yield { type: "text", text: event.delta.text };
      } else if (event.delta.type === "input_json_delta") {
        const activeTool = activeTools.get(event.index);
        if (!activeTool) {
          throw protocolError(
            `input_json_delta arrived without an open tool_use block at index ${event.index}`,
          );
        }
        activeTool.json += event.delta.partial_json;
        activeTool.receivedInputJsonDelta = true;
      }
    } else if (event.type === "content_block_stop") {
      const activeTool = activeTools.get(event.index);
      if (activeTool) {
        let input: unknown = activeTool.startInput;
        if (activeTool.receivedInputJsonDelta) {
          try {
            input = JSON.parse(activeTool.json) as unknown;
          } catch {
            throw protocolError(`tool_use block ${event.index} had invalid input_json_delta JSON`);
          }
        }
        let checked: Record<string, unknown>;
        try {
          checked = toolInput(input);
        } catch (error) {
          if (error instanceof Error && error.message.startsWith("Anthropic")) throw error;
          throw protocolError(`tool_use block ${event.index} returned non-object input`);
        }
        activeTools.delete(event.index);
        toolCallCount += 1;
        yield { type: "tool_call", call: { id: activeTool.id, name: activeTool.name, input: checked } };
      }
    } else if (event.type === "message_delta") {
      stopReason = event.delta.stop_reason;
    } else if (event.type === "message_stop") {
      if (activeTools.size > 0) {
        throw protocolError(
          `stream ended with unclosed tool_use block(s): ${[...activeTools.keys()].join(", ")}`,
        );
      }
      receivedMessageStop = true;
    }
  }

  if (activeTools.size > 0) {
    throw protocolError(
      `stream ended with unclosed tool_use block(s): ${[...activeTools.keys()].join(", ")}`,
    );
  }
  if (!receivedMessageStop) {
    throw protocolError("stream ended before message_stop");
  }
  if (stopReason === null || stopReason === undefined) {
    throw protocolError("message_delta did not provide a stop_reason");
  }
  if (stopReason !== "end_turn" && stopReason !== "tool_use") {
    throw protocolError(`stop_reason ${stopReason} is not supported`);
  }
  if (stopReason === "end_turn" && toolCallCount > 0) {
    throw protocolError(`stop_reason end_turn arrived with ${toolCallCount} tool call(s)`);
  }
  if (stopReason === "tool_use" && toolCallCount === 0) {
    throw protocolError("stop_reason tool_use arrived without a tool call");
  }
  yield { type: "done" };
}
