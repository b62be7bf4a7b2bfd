// `harness conform [--persistent] -- node dist/conform-stdin.js [faithful]`: docs/conform.md's
// stdin protocol, one case a process or, with --persistent, case after case.
import { stdinLines } from "./stdin-lines";
import type Anthropic from "@anthropic-ai/sdk";
import { toModelEvents as faithful } from "./faithful";
import { toModelEvents as corrected } from "./model-events";

// Ends each case on the input and on the output (--persistent).
const SEPARATOR = JSON.stringify({ harness: "case_end" });

class StreamAPIError extends Error {
  constructor(readonly errorType: string, message: string) { super(message); }
}

// Standard input's lines, read one at a time across the cases.
const lines = stdinLines();
type Case = { separated: boolean; ended: boolean };

async function nextLine(state: Case): Promise<string | undefined> {
  const next = await lines.next();
  if (next.done) state.ended = true;
  return next.done ? undefined : next.value;
}

// One case's raw events as the SDK's stream yields them: `ping` dropped, an `error` event
// thrown; the case ends at the separator line or at the end of input.
async function* sdkEvents(first: string, state: Case): AsyncGenerator<Anthropic.RawMessageStreamEvent> {
  for (let line: string | undefined = first; line !== undefined; line = await nextLine(state)) {
    const event = JSON.parse(line);
    if (event.harness === "case_end") { state.separated = true; return; }
    if (event.type === "error") throw new StreamAPIError(event.error.type, event.error.message);
    if (event.type !== "ping") yield event;
  }
}

// Judge one case; true when it ended with the separator (another may follow).
async function runCase(first: string, toModelEvents: typeof corrected): Promise<boolean> {
  const state: Case = { separated: false, ended: false };
  try {
    for await (const event of toModelEvents(sdkEvents(first, state))) console.log(JSON.stringify(event));
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const apiError = error instanceof StreamAPIError ? { error_type: error.errorType } : {};
    console.log(JSON.stringify({ type: "error", message, ...apiError }));
  }
  while (!state.separated && !state.ended) {  // the lines left unread after an error
    const line = await nextLine(state);
    if (line !== undefined && JSON.parse(line).harness === "case_end") state.separated = true;
  }
  if (state.separated) console.log(SEPARATOR);
  return state.separated;
}

async function main(toModelEvents: typeof corrected): Promise<void> {
  for (let next = await lines.next(); !next.done; next = await lines.next()) {
    if (!(await runCase(next.value, toModelEvents))) return;
  }
}

void main(process.argv[2] === "faithful" ? faithful : corrected);
