// `harness conform --serve [--persistent] -- node dist/conform-serve.js [faithful]`: the
// official SDK asks the harness's server (ANTHROPIC_BASE_URL) for the case named by
// HARNESS_CASSETTE; with --persistent, once for each separator line on standard input.
import { createInterface } from "node:readline";
import Anthropic from "@anthropic-ai/sdk";
import { toModelEvents as faithful } from "./faithful";
import { toModelEvents as corrected } from "./model-events";
import { withIdleTimeout } from "./idle-timeout";

const IDLE_MS = Number(process.env.IDLE_TIMEOUT_MS ?? 1000);
const SEPARATOR = JSON.stringify({ harness: "case_end" });

async function runCase(client: Anthropic, useFaithful: boolean): Promise<void> {
  try {
    const stream = await client.messages.create({
      model: "claude-sonnet-4-5",
      max_tokens: 1024,
      messages: [{ role: "user", content: "conform" }],
      stream: true,
    });
    // FIX 5: the SDK's timeout covers the wait for the response, not a body that stalls.
    const events = useFaithful
      ? faithful(stream)
      : corrected(withIdleTimeout(stream, IDLE_MS, () => stream.controller.abort()));
    for await (const event of events) console.log(JSON.stringify(event));
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const apiError = error instanceof Anthropic.APIError && error.type ? { error_type: error.type } : {};
    console.log(JSON.stringify({ type: "error", message, ...apiError }));
  }
}

async function main(useFaithful: boolean): Promise<void> {
  const client = new Anthropic({
    defaultHeaders: { "x-harness-cassette": process.env.HARNESS_CASSETTE ?? "" },
  });
  let asked = false;
  for await (const line of createInterface({ input: process.stdin })) {
    if (JSON.parse(line).harness !== "case_end") continue;
    asked = true;  // --persistent: the server hands out the next case
    await runCase(client, useFaithful);
    console.log(SEPARATOR);
  }
  if (!asked) await runCase(client, useFaithful);  // one case a process: the input is empty
}

void main(process.argv[2] === "faithful");
