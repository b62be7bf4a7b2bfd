// For each cassette name given, ask `harness serve` (at ANTHROPIC_BASE_URL) for it through
// the official TypeScript SDK's `messages.stream(...).finalMessage()`, and print one JSON
// line: the text, the tool calls and the stop reason, or the error the SDK raised.
// Run by tests/test_server_typescript.py with NODE_PATH pointing at .node/node_modules.
"use strict";
const Anthropic = require("@anthropic-ai/sdk").default;

const client = new Anthropic({ apiKey: "any-key-is-accepted", maxRetries: 0 });

async function ask(name) {
  const stream = client.messages.stream(
    {
      model: "claude-harness-test",
      max_tokens: 1024,
      messages: [{ role: "user", content: "replay" }],
    },
    { headers: { "x-harness-cassette": name } },
  );
  const message = await stream.finalMessage();
  return {
    text: message.content
      .filter((block) => block.type === "text")
      .map((block) => block.text)
      .join(""),
    tool_calls: message.content
      .filter((block) => block.type === "tool_use")
      .map((block) => ({ id: block.id, name: block.name, input: block.input })),
    stop_reason: message.stop_reason,
  };
}

async function main() {
  for (const name of process.argv.slice(2)) {
    let line;
    try {
      line = { cassette: name, ...(await ask(name)) };
    } catch (error) {
      line = { cassette: name, error: error.constructor.name, message: String(error.message) };
    }
    process.stdout.write(JSON.stringify(line) + "\n");
  }
}

main();
