// `harness conform --provider openai-chat|openai-responses --serve [--persistent] -- node
// dist/conform-openai-serve.js`: each case's header line on standard input, its stream
// asked of $OPENAI_BASE_URL with fetch (the SSE body read raw: `data: [DONE]` is seen), each
// `data` object fed to the dialect's adapter as it arrives. A 429 is retried after its
// retry-after-ms, as the SDK does; a body idle for 2 s is aborted (idle-timeout.ts).
import { stdinLines } from "./stdin-lines";
import { setTimeout as sleep } from "node:timers/promises";
import { withIdleTimeout } from "./idle-timeout";
import { ChatAdapter, DONE } from "./openai-chat";
import { ResponsesAdapter } from "./openai-responses";
import { type Machine, OpenAIAPIError } from "./openai-shared";

const SEPARATOR = JSON.stringify({ harness: "case_end" });
const IDLE_MS = 2000;
const RETRIES = 2;

type Header = {
  provider: "openai-chat" | "openai-responses";
  request: { tool_choice?: unknown; starting_after?: number | null };
  policy: { finish_reasons?: string[]; incomplete_reasons?: string[]; refusal_is_answer?: boolean };
};

function adapter({ provider, request, policy }: Header): Machine<unknown> {
  return provider === "openai-chat"
    ? new ChatAdapter({ toolChoice: request.tool_choice, finishReasons: policy.finish_reasons, refusalIsAnswer: policy.refusal_is_answer })
    : new ResponsesAdapter({ startingAfter: request.starting_after, incompleteReasons: policy.incomplete_reasons, refusalIsAnswer: policy.refusal_is_answer });
}

// What to ask: the endpoint of the case's dialect, or the Responses resume.
function asked({ provider, request }: Header): [string, RequestInit] {
  const base = process.env.OPENAI_BASE_URL;
  const headers = {
    authorization: `Bearer ${process.env.OPENAI_API_KEY}`,
    "content-type": "application/json",
    "x-harness-cassette": process.env.HARNESS_CASSETTE ?? "",
  };
  const after = request.starting_after ?? null;
  if (provider === "openai-chat") {
    const body = JSON.stringify({ model: "gpt-4.1-mini", messages: [], stream: true });
    return [`${base}/chat/completions`, { method: "POST", headers, body }];
  }
  if (after !== null) return [`${base}/responses/resp_resumed?stream=true&starting_after=${after}`, { headers }];
  const body = JSON.stringify({ model: "gpt-4.1-mini", input: "", stream: true });
  return [`${base}/responses`, { method: "POST", headers, body }];
}

// The `data:` fields of an SSE body, one a line.
async function* sseData(body: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    for (let at = buffer.indexOf("\n"); at >= 0; at = buffer.indexOf("\n")) {
      const line = buffer.slice(0, at).replace(/\r$/, "");
      buffer = buffer.slice(at + 1);
      if (line.startsWith("data: ")) yield line.slice("data: ".length);
    }
  }
}

function print(line: unknown): void {
  console.log(JSON.stringify(line));
}

async function runCase(header: Header): Promise<void> {
  const machine = adapter(header);
  const [url, init] = asked(header);
  const controller = new AbortController();
  try {
    for (let attempt = 0; ; attempt++) {
      const response = await fetch(url, { ...init, signal: controller.signal });
      if (response.status === 429 && attempt < RETRIES) {
        await response.arrayBuffer();
        await sleep(Number(response.headers.get("retry-after-ms") ?? "1"));
        continue;
      }
      if (response.status >= 400 || response.body === null) {
        const { error } = (await response.json()) as { error: { type: string; message: string } };
        print({ type: "error", message: error.message, error_type: error.type });
        return;
      }
      const body = response.body as unknown as AsyncIterable<Uint8Array>;
      for await (const data of withIdleTimeout(sseData(body), IDLE_MS, () => controller.abort())) {
        for (const event of machine.feed(data === "[DONE]" ? DONE : JSON.parse(data))) print(event);
      }
      for (const event of machine.finish()) print(event);
      return;
    }
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const apiError = error instanceof OpenAIAPIError ? { error_type: error.errorType } : {};
    print({ type: "error", message, ...apiError });
  }
}

async function main(): Promise<void> {
  const lines = stdinLines();
  for (let next = await lines.next(); !next.done; next = await lines.next()) {
    await runCase(JSON.parse(next.value) as Header);
    if ((await lines.next()).done) return;  // the separator (--persistent), or the end
    console.log(SEPARATOR);
  }
}

void main();
