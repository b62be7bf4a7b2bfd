// toModelEvents, the original design corrected where `harness conform` shows it wrong
// (docs/conform.md, "The original design's toModelEvents, flaw by flaw"). Each change is marked FIX.
import type Anthropic from "@anthropic-ai/sdk";
import { type ModelEvent, protocolError, toolInput } from "./types";

type ActiveTool = {
  id: string;
  name: string;
  startInput: unknown;
  json: string;
  receivedInputJsonDelta: boolean;
  nonStringDelta: boolean;
};

// FIX 3: blocks the API runs itself (server_tool_use, mcp_tool_use, ...) stream their
// input as input_json_delta too; they are never ours to call, and never orphans.
function isServerTool(kind: string | undefined): boolean {
  return kind !== undefined && kind !== "tool_use" && kind.endsWith("_tool_use");
}

export async function* toModelEvents(
  events: AsyncIterable<Anthropic.RawMessageStreamEvent>,
): AsyncGenerator<ModelEvent> {
  const activeTools = new Map<number, ActiveTool>();
  const blockKinds = new Map<number, string>();
  const toolIndexesSeen = new Set<number>();
  let stopReason: unknown;
  let toolCallCount = 0;
  let receivedMessageStart = false;
  let receivedMessageStop = false;

  for await (const event of events) {
    const kind: string = event.type;
    if (kind === "ping") continue;
    // FIX 2: after message_stop the message is over; anything more is a broken stream.
    if (receivedMessageStop) throw protocolError(`${kind} arrived after message_stop`);
    // FIX 1: a stream that does not begin with message_start has lost its beginning.
    if (!receivedMessageStart) {
      if (event.type !== "message_start") {
        throw protocolError(`stream began with ${kind} instead of message_start`);
      }
      receivedMessageStart = true;
      continue;
    }
    if (event.type === "content_block_start") {
      const block = event.content_block;
      if (
        activeTools.has(event.index) ||
        (block.type === "tool_use" && toolIndexesSeen.has(event.index))
      ) {
        throw protocolError(`duplicate tool_use start for block ${event.index}`);
      }
      blockKinds.set(event.index, block.type);
      if (block.type === "tool_use") {
        toolIndexesSeen.add(event.index);
        activeTools.set(event.index, {
          id: block.id,
          name: block.name,
          startInput: block.input,
          json: "",
          receivedInputJsonDelta: false,
          nonStringDelta: false,
        });
      } else if (block.type === "text" && block.text) {
        yield { type: "text", text: block.text };
      }
    } else if (event.type === "content_block_delta") {
      if (event.delta.type === "text_delta") {
        yield { type: "text", text: event.delta.text };
      } else if (event.delta.type === "input_json_delta") {
        const activeTool = activeTools.get(event.index);
        if (activeTool) {
          const piece: unknown = event.delta.partial_json;
          if (typeof piece === "string") activeTool.json += piece;
          else activeTool.nonStringDelta = true;
          activeTool.receivedInputJsonDelta = true;
        } else if (!isServerTool(blockKinds.get(event.index))) {
          throw protocolError(
            `input_json_delta arrived without an open tool_use block at index ${event.index}`,
          );
        }
      }
    } else if (event.type === "content_block_stop") {
      blockKinds.delete(event.index);
      const activeTool = activeTools.get(event.index);
      if (activeTool) {
        activeTools.delete(event.index);
        if (activeTool.nonStringDelta) {
          throw protocolError(`tool_use block ${event.index} had invalid input_json_delta JSON`);
        }
        let input: unknown = activeTool.startInput;
        // FIX 4: the API sends `partial_json: ""` for a tool without arguments; an empty
        // text is no JSON to parse, and the start's input {} stands.
        if (activeTool.receivedInputJsonDelta && activeTool.json !== "") {
          try {
            input = JSON.parse(activeTool.json) as unknown;
          } catch {
            throw protocolError(`tool_use block ${event.index} had invalid input_json_delta JSON`);
          }
        }
        let checked: Record<string, unknown>;
        try {
          checked = toolInput(input);
        } catch {
          throw protocolError(`tool_use block ${event.index} returned non-object input`);
        }
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
    throw protocolError(`stop_reason ${String(stopReason)} is not supported`);
  }
  if (stopReason === "end_turn" && toolCallCount > 0) {
    throw protocolError(`stop_reason end_turn arrived with ${toolCallCount} tool call(s)`);
  }
  if (stopReason === "tool_use" && toolCallCount === 0) {
    throw protocolError("stop_reason tool_use arrived without a tool call");
  }
  yield { type: "done" };
}
