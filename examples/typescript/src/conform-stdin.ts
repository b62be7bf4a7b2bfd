// `harness conform -- node dist/conform-stdin.js [faithful]`: docs/conform.md's stdin protocol.
import { createInterface } from "node:readline";
import type Anthropic from "@anthropic-ai/sdk";
import { toModelEvents as faithful } from "./faithful";
import { toModelEvents as corrected } from "./model-events";

class StreamAPIError extends Error {
  constructor(readonly errorType: string, message: string) { super(message); }
}

// The raw events as the SDK's stream yields them: `ping` dropped, an `error` event thrown.
async function* sdkEvents(): AsyncGenerator<Anthropic.RawMessageStreamEvent> {
  for await (const line of createInterface({ input: process.stdin })) {
    const event = JSON.parse(line);
    if (event.type === "error") throw new StreamAPIError(event.error.type, event.error.message);
    if (event.type !== "ping") yield event;
  }
}

async function main(toModelEvents: typeof corrected): Promise<void> {
  try {
    for await (const event of toModelEvents(sdkEvents())) console.log(JSON.stringify(event));
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const apiError = error instanceof StreamAPIError ? { error_type: error.errorType } : {};
    console.log(JSON.stringify({ type: "error", message, ...apiError }));
  }
}

void main(process.argv[2] === "faithful" ? faithful : corrected);
