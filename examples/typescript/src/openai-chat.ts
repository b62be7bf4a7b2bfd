// toModelEvents for OpenAI Chat Completions: the `data` objects of a `stream: true` answer
// (chunk objects, `{"error": ...}` lines and the `[DONE]` sentinel) in, the three internal
// events out, each rule of the harness's error table (docs/openai-adapters.md) with its
// message. The events an item completes come out once the whole item is read.
import type { ModelEvent } from "./types";
import {
  type Json, type Machine, OpenAIStreamProtocolError, apiError, callInput, drive, isIndex, isObject,
  obj, shown, truthy,
} from "./openai-shared";

export const DONE = "[DONE]";

export type ChatOptions = {
  finishReasons?: string[];      // the finish reasons that complete an answer
  refusalIsAnswer?: boolean;     // a refusal's text as text, instead of an error
  toolChoice?: unknown;          // the request's: a forced call finishes with `stop`
};

type Call = { id: string; name: string; pieces: string[]; nonString: boolean };
const UNSET = Symbol("no chunk yet");

function fail(message: string): OpenAIStreamProtocolError {
  return new OpenAIStreamProtocolError(message);
}

// What a `content` that is not text is, as the message names it.
function shape(content: unknown): string {
  if (Array.isArray(content)) return "a list";
  if (typeof content === "object") return "an object";
  return typeof content === "boolean" ? "a boolean" : "a number";
}

export function forcesToolCall(toolChoice: unknown): boolean {
  return toolChoice === "required"
    || (isObject(toolChoice) && (toolChoice.type === "function" || toolChoice.type === "custom"));
}

export class ChatAdapter implements Machine<unknown> {
  private readonly finishReasons: Set<string>;
  private readonly refusalIsAnswer: boolean;
  private readonly forced: boolean;
  private id: unknown = UNSET;
  private done = false;
  private readonly calls = new Map<number, Call>();
  private finishReason: unknown = null;

  constructor(options: ChatOptions = {}) {
    this.finishReasons = new Set(options.finishReasons ?? ["stop", "tool_calls"]);
    this.refusalIsAnswer = options.refusalIsAnswer ?? false;
    this.forced = forcesToolCall(options.toolChoice);
  }

  private unfinished(): OpenAIStreamProtocolError {
    const indexes = [...this.calls.keys()].join(", ");
    return fail(`stream ended with tool call(s) ${indexes} and no finish_reason`);
  }

  feed(item: unknown): ModelEvent[] {
    if (this.done) throw fail("a chunk arrived after data: [DONE]");
    if (item === DONE) {
      if (this.finishReason === null && this.calls.size) throw this.unfinished();
      this.done = true;
      return [];
    }
    const chunk = obj(item);
    const details = chunk.error;
    if (truthy(details)) {  // the SDK raises for any line whose `error` is set
      const name = isObject(details) ? (details.type || details.code) : null;
      throw apiError(obj(details), name);
    }
    const choices = chunk.choices;
    if (!truthy(choices) || chunk.object === "") return [];  // usage, Azure's filter chunks
    const ident = chunk.id ?? null;
    if (ident !== this.id) {
      if (this.id !== UNSET) throw fail(`a chunk of completion ${ident} arrived in completion ${String(this.id)}`);
      this.id = ident;
    }
    const events: ModelEvent[] = [];
    for (const choice of Array.isArray(choices) ? choices : [null]) {
      const c = obj(choice);
      const index = c.index;
      if (index !== 0) throw fail(`a chunk carried choice ${shown(index)}; only choice 0 is read (n=1)`);
      const delta = obj(c.delta);
      const reason = c.finish_reason ?? null;
      if (this.finishReason !== null) {
        this.afterFinish(delta, reason);
        continue;
      }
      const content = delta.content ?? null;
      if (typeof content === "string") {
        if (content) events.push({ type: "text", text: content });
      } else if (content !== null) {  // a list of parts, an object: its text would be lost
        throw fail(`choice 0's delta.content is ${shape(content)}, not text`);
      }
      const refusal = delta.refusal;
      if (truthy(refusal)) {
        if (!this.refusalIsAnswer) throw fail("choice 0 refused to answer (delta.refusal)");
        if (typeof refusal === "string") events.push({ type: "text", text: refusal });
      }
      if (truthy(delta.tool_calls)) this.pieces(delta.tool_calls);
      if (reason !== null) events.push(...this.atFinish(reason));
    }
    return events;
  }

  private pieces(pieces: unknown): void {
    for (const each of Array.isArray(pieces) ? pieces : [null]) {
      const piece = obj(each);
      const index = piece.index;
      const fn = obj(piece.function);
      const ident = piece.id ?? null;
      const name = fn.name ?? null;
      let call = isIndex(index) ? this.calls.get(index) : undefined;
      if (call === undefined) {
        if (!isIndex(index)) throw fail(`first piece of a tool call (index ${shown(index)}) has no non-negative integer index`);
        if (ident === null && name === null) {
          throw fail(`tool call piece for index ${index}, which no piece opened with an id and a name`);
        }
        if (!truthy(ident) || typeof ident !== "string") throw fail(`first piece of a tool call (index ${index}) has no id`);
        if (!truthy(name) || typeof name !== "string") {
          throw fail(`first piece of a tool call (index ${index}) has no function name`);
        }
        call = { id: ident, name, pieces: [], nonString: false };
        this.calls.set(index, call);
      } else {
        // an empty id or name on a later piece is none (LM Studio sends "")
        if (truthy(ident) && ident !== call.id) throw fail(`tool call ${index} was opened again with another id`);
        if (truthy(name) && name !== call.name) {
          throw fail(`tool call ${index} was opened again with another function name`);
        }
      }
      const args = fn.arguments ?? null;
      if (typeof args === "string") call.pieces.push(args);
      else if (args !== null) call.nonString = true;  // a number or an object: not parsable
    }
  }

  private atFinish(reason: unknown): ModelEvent[] {
    this.finishReason = reason;
    if (typeof reason !== "string" || !this.finishReasons.has(reason)) {
      const named = typeof reason === "string" && reason ? reason : shown(reason);
      throw fail(`finish_reason ${named} is not supported`);
    }
    const count = this.calls.size;
    if (reason === "stop" && count && !this.forced) throw fail(`finish_reason stop arrived with ${count} tool call(s)`);
    if (reason === "tool_calls" && !count) throw fail("finish_reason tool_calls arrived without a tool call");
    const events: ModelEvent[] = [];
    for (const [index, call] of this.calls) {
      const notJson = `tool call ${index} had arguments that are not JSON`;
      if (call.nonString) throw fail(notJson);
      const input = callInput(call.pieces.join(""), notJson, `tool call ${index} had arguments that are not a JSON object`);
      events.push({ type: "tool_call", call: { id: call.id, name: call.name, input } });
    }
    return events;
  }

  private afterFinish(delta: Json, reason: unknown): void {
    let what: string;
    if (truthy(delta.content)) what = "content";
    else if (truthy(delta.refusal)) what = "a refusal";
    else if (truthy(delta.tool_calls)) what = "a tool call piece";
    else if (truthy(delta.function_call)) what = "a function_call";
    else if (reason !== null && reason !== this.finishReason) what = `finish_reason ${String(reason)}`;
    else return;
    throw fail(`${what} arrived for choice 0 after its finish_reason`);
  }

  finish(): ModelEvent[] {
    if (this.finishReason === null && this.calls.size) throw this.unfinished();
    if (!this.done) throw fail("stream ended before data: [DONE]");
    if (this.finishReason === null) throw fail("choice 0 did not provide a finish_reason");
    return [{ type: "done" }];
  }
}

export function toModelEvents(items: Iterable<unknown>, options: ChatOptions = {}): Generator<ModelEvent> {
  return drive(new ChatAdapter(options), items);
}
