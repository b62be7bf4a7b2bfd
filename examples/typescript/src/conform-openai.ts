// `harness conform --provider openai-chat|openai-responses [--persistent] -- node
// dist/conform-openai.js`: docs/conform.md's stdin protocol for OpenAI. Each case is its
// header line ({"harness": "case", "provider", "request", "policy"}), then its `data`
// objects (Chat's `[DONE]` as {"harness": "done"}), then the end of input or the separator.
import { createInterface } from "node:readline";
import { DONE, toModelEvents as chatEvents } from "./openai-chat";
import { toModelEvents as responsesEvents } from "./openai-responses";
import { OpenAIAPIError } from "./openai-shared";
import type { ModelEvent } from "./types";

const SEPARATOR = JSON.stringify({ harness: "case_end" });

type Header = {
  provider: "openai-chat" | "openai-responses";
  request: { tool_choice?: unknown; starting_after?: number | null };
  policy: { finish_reasons?: string[]; incomplete_reasons?: string[]; refusal_is_answer?: boolean };
};

// The case's header turned into the adapter's options, and the adapter run on its items.
function adapt(header: Header, items: unknown[]): Generator<ModelEvent> {
  const { request, policy } = header;
  if (header.provider === "openai-chat") {
    return chatEvents(items, {
      toolChoice: request.tool_choice,
      finishReasons: policy.finish_reasons,
      refusalIsAnswer: policy.refusal_is_answer,
    });
  }
  return responsesEvents(items, {
    startingAfter: request.starting_after,
    incompleteReasons: policy.incomplete_reasons,
    refusalIsAnswer: policy.refusal_is_answer,
  });
}

function runCase(header: Header, items: unknown[]): void {
  try {
    for (const event of adapt(header, items)) console.log(JSON.stringify(event));
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const apiError = error instanceof OpenAIAPIError ? { error_type: error.errorType } : {};
    console.log(JSON.stringify({ type: "error", message, ...apiError }));
  }
}

async function main(): Promise<void> {
  let header: Header | undefined;
  let items: unknown[] = [];
  for await (const line of createInterface({ input: process.stdin })) {
    const value = JSON.parse(line);
    if (header === undefined) {
      header = value as Header;
    } else if (value.harness === "case_end") {
      runCase(header, items);
      console.log(SEPARATOR);
      [header, items] = [undefined, []];
    } else {
      items.push(value.harness === "done" ? DONE : value);
    }
  }
  if (header !== undefined) runCase(header, items);
}

void main();
