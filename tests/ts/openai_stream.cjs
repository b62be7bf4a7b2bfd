// For each `API/NAME.jsonl` given (api: chat or responses), ask `harness serve` (at
// OPENAI_BASE_URL) for that cassette through the official TypeScript `openai` SDK, with
// each of its two readers: `create({stream: true})` iterated (the text and the tool calls
// joined as the chunks or events carry them, as code reading the raw stream does) and the `.stream()` helper's final answer.
// Prints one JSON line a cassette and reader: the text and the tool calls, or the error
// the SDK raised. Run by tests/test_server_typescript_openai.py, NODE_PATH at .node/.
"use strict";
const OpenAI = require("openai").default;

const client = new OpenAI({ apiKey: "any-key-is-accepted", maxRetries: 0 });
const CHAT = { model: "gpt-4.1-mini", messages: [{ role: "user", content: "replay" }] };
const RESPONSES = { model: "gpt-4.1-mini", input: "replay" };

function input(text) {
  return text === "" ? {} : JSON.parse(text);
}

async function chatCreate(options) {
  const stream = await client.chat.completions.create({ ...CHAT, stream: true }, options);
  let text = "";
  const calls = new Map();
  for await (const chunk of stream) {
    for (const choice of chunk.choices ?? []) {
      text += choice.delta?.content ?? "";
      for (const piece of choice.delta?.tool_calls ?? []) {
        const call = calls.get(piece.index) ?? { id: "", name: "", arguments: "" };
        call.id += piece.id ?? "";
        call.name += piece.function?.name ?? "";
        call.arguments += piece.function?.arguments ?? "";
        calls.set(piece.index, call);
      }
    }
  }
  const tool_calls = [...calls.values()].map((c) => ({ id: c.id, name: c.name, input: input(c.arguments) }));
  return { text, tool_calls };
}

async function chatStream(options) {
  const completion = await client.chat.completions.stream(CHAT, options).finalChatCompletion();
  const message = completion.choices[0].message;
  const tool_calls = (message.tool_calls ?? []).map((c) => ({
    id: c.id,
    name: c.function.name,
    input: input(c.function.arguments),
  }));
  return { text: message.content ?? "", tool_calls };
}

function fromOutput(output) {
  let text = "";
  const tool_calls = [];
  for (const item of output) {
    if (item.type === "message") {
      for (const part of item.content) text += part.type === "output_text" ? part.text : "";
    } else if (item.type === "function_call") {
      tool_calls.push({ id: item.call_id, name: item.name, input: input(item.arguments) });
    }
  }
  return { text, tool_calls };
}

async function responsesCreate(options) {
  const stream = await client.responses.create({ ...RESPONSES, stream: true }, options);
  let text = "";
  const tool_calls = [];
  for await (const event of stream) {
    if (event.type === "response.output_text.delta") text += event.delta;
    if (event.type === "response.output_item.done" && event.item.type === "function_call") {
      const item = event.item;
      tool_calls.push({ id: item.call_id, name: item.name, input: input(item.arguments) });
    }
    if (event.type === "response.failed" || event.type === "error") throw new Error(event.type);
  }
  return { text, tool_calls };
}

async function responsesStream(options) {
  const response = await client.responses.stream(RESPONSES, options).finalResponse();
  return fromOutput(response.output);
}

const READERS = {
  chat: { create: chatCreate, stream: chatStream },
  responses: { create: responsesCreate, stream: responsesStream },
};

async function main() {
  for (const name of process.argv.slice(2)) {
    const api = name.split("/")[0];
    for (const [reader, read] of Object.entries(READERS[api])) {
      let line;
      try {
        line = { cassette: name, reader, ...(await read({ headers: { "x-harness-cassette": name } })) };
      } catch (error) {
        line = { cassette: name, reader, error: error.constructor.name, message: String(error.message) };
      }
      process.stdout.write(JSON.stringify(line) + "\n");
    }
  }
}

main();
