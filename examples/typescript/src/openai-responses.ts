// toModelEvents for OpenAI Responses: the `response.*` events of a streamed answer (each
// with its `sequence_number`) in, the three internal events out, each rule of the harness's
// error table (docs/openai-adapters.md) with its message. A resumed stream
// (`starting_after`) starts at sequence N+1, mid-item, without `response.created`. The
// terminal event's `output` (what the SDK's `get_final_response()` returns) must say
// what the stream delivered: `output_mismatch` otherwise; an absent or empty one says nothing.
import type { ModelEvent } from "./types";
import {
  type Json, type Machine, OpenAIStreamProtocolError, apiError, callInput, drive, isIndex, isInt, isObject,
  obj, shown, truthy,
} from "./openai-shared";

export type ResponsesOptions = {
  incompleteReasons?: string[];  // the incomplete_details.reasons that still complete an answer
  refusalIsAnswer?: boolean;     // a refusal's text as text, instead of an error
  startingAfter?: number | null; // the resume's: the stream starts at sequence N+1
};

// Reasoning and the tools the API runs itself: items that yield nothing.
const PASSED_OVER = new Set([
  "reasoning", "web_search_call", "file_search_call", "mcp_call", "mcp_list_tools",
  "code_interpreter_call", "image_generation_call", "tool_search_call", "tool_search_output",
  "compaction",
]);
const LIFECYCLE = new Set([
  "response.created", "response.queued", "response.in_progress", "response.completed",
  "response.incomplete", "response.failed",
]);

// One content part of a message as the stream delivered it.
type Part = {
  type: unknown;
  resumed: boolean;              // opened before the resume point: its first deltas unseen
  pieces: string[];              // the text yielded for it: its starting text, its deltas
  doneText: unknown;             // its output_text.done's (or refusal.done's) text, if one came
};

type Item = {
  type: unknown;
  resumed: boolean;              // added before the resume point: partly unseen
  id: unknown;
  parts: Set<number>;
  doneParts: Set<number>;
  contents: Map<number, Part>;   // every content part seen, open or done
  pieces: string[];
  nonString: boolean;
  doneArguments: unknown;
  final: Json;                   // the item its output_item.done carried
};

function fail(message: string): OpenAIStreamProtocolError {
  return new OpenAIStreamProtocolError(message);
}

function newItem(type: unknown, resumed = false, id: unknown = null): Item {
  return {
    type, resumed, id, parts: new Set(), doneParts: new Set(), contents: new Map(), pieces: [],
    nonString: false, doneArguments: null, final: {},
  };
}

function newPart(type: unknown, resumed = false): Part {
  return { type, resumed, pieces: [], doneText: null };
}

// Python's str() of a value a message names as it is (None for a missing one).
function str(value: unknown): string {
  return value === null || value === undefined ? "None" : String(value);
}

export class ResponsesAdapter implements Machine<unknown> {
  private readonly incompleteReasons: Set<string>;
  private readonly refusalIsAnswer: boolean;
  private readonly resumed: boolean;
  private next: number | null;  // null: a stream whose first event had no number
  private started: boolean;
  private responseId: unknown = null;
  private terminal: string | null = null;
  private readonly items = new Map<number, Item>();
  private readonly done = new Map<number, Item>();  // what the terminal output must say

  constructor(options: ResponsesOptions = {}) {
    this.incompleteReasons = new Set(options.incompleteReasons ?? []);
    this.refusalIsAnswer = options.refusalIsAnswer ?? false;
    const after = options.startingAfter ?? null;
    this.resumed = after !== null;
    this.next = after === null ? 0 : after + 1;
    this.started = this.resumed;
  }

  feed(item: unknown): ModelEvent[] {
    const event = obj(item);
    const kind = typeof event.type === "string" ? event.type : shown(event.type);
    if (this.terminal !== null) throw fail(`${kind} arrived after ${this.terminal}`);
    if (truthy(event.error)) {  // the SDK raises for any line whose `error` is set
      const details = obj(event.error);
      throw apiError(details, details.code || details.type);
    }
    if (kind === "error") throw apiError(event, event.code);
    const first = !this.started;
    if (first) {
      if (kind !== "response.created") throw fail(`stream began with ${kind} instead of response.created`);
      this.started = true;
    }
    const number = event.sequence_number ?? null;
    if (this.next === null || (first && number === null)) {
      // unnumbered (the API before mid-2025): the first event decides, a number after it is a gap
      if (number !== null) throw fail(`${kind} has sequence_number ${shown(number)}, expected none`);
      this.next = null;
    } else if (isInt(number) && number === this.next) {
      this.next += 1;
    } else {
      throw fail(`${kind} has sequence_number ${shown(number)}, expected ${this.next}`);
    }
    if (kind === "response.output_text.delta") {
      const [, , part] = this.part(event, kind);
      if (truthy(event.delta) && typeof event.delta === "string") part.pieces.push(event.delta);
      return this.text(event.delta);
    }
    if (LIFECYCLE.has(kind)) return this.lifecycle(kind, event);
    if (kind === "response.output_item.added") return this.added(event, kind);
    if (kind === "response.output_item.done") return this.itemDone(event, kind);
    if (kind === "response.function_call_arguments.delta") {
      const open = this.item(event, kind);
      if (typeof event.delta === "string") open.pieces.push(event.delta);
      else open.nonString = true;  // a number or an object where text belongs
    } else if (kind === "response.function_call_arguments.done") {
      this.item(event, kind).doneArguments = event.arguments ?? null;
    } else if (kind === "response.refusal.delta") {
      const [, , part] = this.part(event, kind);
      if (truthy(event.delta)) {
        if (!this.refusalIsAnswer) throw fail(`output item ${str(event.output_index)} is a refusal (response.refusal.delta)`);
        if (typeof event.delta === "string") part.pieces.push(event.delta);
        return this.text(event.delta);
      }
    } else if (kind === "response.content_part.added") {
      const open = this.item(event, kind);
      const part = obj(event.part);
      if (isIndex(event.content_index)) {
        open.parts.add(event.content_index);
        if (!open.contents.has(event.content_index)) open.contents.set(event.content_index, newPart(part.type ?? null));
        const opened = open.contents.get(event.content_index) as Part;
        if (part.type === "output_text" && truthy(part.text) && typeof part.text === "string") opened.pieces.push(part.text);
      }
      if (part.type === "output_text") return this.text(part.text);
    } else if (kind === "response.content_part.done") {
      const [open, index] = this.part(event, kind);
      open.parts.delete(index);
      open.doneParts.add(index);
    } else if (kind === "response.output_text.done") {
      this.part(event, kind)[2].doneText = event.text ?? null;
    } else if (kind === "response.refusal.done") {
      this.part(event, kind)[2].doneText = event.refusal ?? null;
    }
    return [];  // reasoning, annotations, hosted tools' progress, kinds added later
  }

  private text(value: unknown): ModelEvent[] {
    return truthy(value) && typeof value === "string" ? [{ type: "text", text: value }] : [];
  }

  private item(event: Json, kind: string): Item {
    const index = event.output_index;
    let found = isIndex(index) ? this.items.get(index) : undefined;
    if (found === undefined) {
      if (!this.resumed || !isIndex(index) || this.done.has(index)) {
        throw fail(`${kind} arrived without an open output item at output index ${shown(index)}`);
      }
      found = newItem(null, true);
      this.items.set(index, found);
    }
    return found;
  }

  private part(event: Json, kind: string): [Item, number, Part] {
    const open = this.item(event, kind);
    const index = event.content_index;
    if (!isIndex(index) || !open.parts.has(index)) {
      if (!open.resumed || !isIndex(index) || open.doneParts.has(index)) {
        const at = String(event.output_index);
        throw fail(`${kind} arrived without an open content part ${shown(index)} at output index ${at}`);
      }
      open.parts.add(index);
      open.contents.set(index, newPart(null, true));
    }
    return [open, index, open.contents.get(index) as Part];
  }

  private supported(index: number, type: unknown): void {
    if (type !== "message" && type !== "function_call" && !(typeof type === "string" && PASSED_OVER.has(type))) {
      throw fail(`output item ${index} is a ${str(type)}, which is not supported`);
    }
  }

  private added(event: Json, kind: string): ModelEvent[] {
    const index = event.output_index;
    if (!isIndex(index)) throw fail(`${kind} arrived without an open output item at output index ${shown(index)}`);
    if (this.items.has(index) || this.done.has(index)) {
      throw fail(`duplicate response.output_item.added for output index ${index}`);
    }
    const added = obj(event.item);
    this.supported(index, added.type);
    this.items.set(index, newItem(added.type, false, added.id ?? null));
    return [];
  }

  private itemDone(event: Json, kind: string): ModelEvent[] {
    const open = this.item(event, kind);
    const index = event.output_index as number;
    this.items.delete(index);
    this.done.set(index, open);
    const final = open.final = obj(event.item);
    this.supported(index, final.type);
    if (final.type !== "function_call") return [];
    const args = final.arguments;
    const notJson = `function_call item ${index} had arguments that are not JSON`;
    if (open.nonString || typeof args !== "string") throw fail(notJson);
    const streamed = !open.resumed && open.pieces.length > 0;  // none: sent whole (LM Studio)
    if ((streamed && open.pieces.join("") !== args) || (open.doneArguments !== null && open.doneArguments !== args)) {
      throw fail(`function_call item ${index} has final arguments other than its deltas`);
    }
    const callId = final.call_id;
    const name = final.name;
    if (!truthy(callId) || typeof callId !== "string") {
      throw fail(`output item ${index} is a function_call without a call_id, which is not supported`);
    }
    if (!truthy(name) || typeof name !== "string") {
      throw fail(`output item ${index} is a function_call without a name, which is not supported`);
    }
    const input = callInput(args, notJson, `function_call item ${index} had arguments that are not a JSON object`);
    return [{ type: "tool_call", call: { id: callId, name, input } }];
  }

  private lifecycle(kind: string, event: Json): ModelEvent[] {
    const response = obj(event.response);
    const ident = response.id ?? null;
    if (this.responseId === null) this.responseId = ident;
    else if (ident !== this.responseId) {
      throw fail(`${kind} is of response ${str(ident)}, not ${str(this.responseId)}`);
    }
    if (kind === "response.failed") {
      const details = obj(response.error);
      throw fail(`response failed: ${str(details.code)}: ${str(details.message)}`);
    }
    if (kind === "response.incomplete" || (kind === "response.completed" && response.status !== "completed")) {
      const reason = obj(response.incomplete_details).reason ?? null;
      if (kind === "response.completed" || typeof reason !== "string" || !this.incompleteReasons.has(reason)) {
        const why = reason === null ? "no reason given" : String(reason);
        throw fail(`response ended with status ${str(response.status)} (${why})`);
      }
    } else if (kind !== "response.completed") {
      return [];
    }
    if (this.items.size) {
      const indexes = [...this.items.keys()].join(", ");
      throw fail(`${kind} arrived with output item(s) ${indexes} not done`);
    }
    if (truthy(response.output)) {  // absent or empty: nothing said to contradict the stream
      const what = this.contradiction(response.output);
      if (what !== null) throw fail(`${kind}'s output disagrees with the stream: ${what}`);
    }
    this.terminal = kind;
    return [];
  }

  // How the terminal output contradicts the items done (a resumed stream's unseen ones aside).
  private contradiction(output: unknown): string | null {
    if (!Array.isArray(output)) return `it is a ${pythonType(output)}, not a list`;
    for (const index of indexes(output.length, this.done.keys())) {
      const item = this.done.get(index);
      if (item === undefined) {
        if (!this.resumed) return `item ${index} was never streamed`;
      } else if (index < 0 || index >= output.length) {
        return `item ${index} of the stream is missing`;
      } else {
        const what = itemContradiction(item, output[index]);
        if (what !== null) return `item ${index} ${what}`;
      }
    }
    return null;
  }

  finish(): ModelEvent[] {
    if (this.terminal === null) throw fail("stream ended before response.completed");
    return [{ type: "done" }];
  }
}

// The indexes of a list of `length` and the indexes the stream delivered, in order.
function indexes(length: number, delivered: Iterable<number>): number[] {
  const all = new Set(delivered);
  for (let index = 0; index < length; index++) all.add(index);
  return [...all].sort((a, b) => a - b);
}

// Python's name of a JSON value's type, as the harness's message gives it.
function pythonType(value: unknown): string {
  if (value === null || value === undefined) return "NoneType";
  if (typeof value === "string") return "str";
  if (typeof value === "boolean") return "bool";
  if (typeof value === "number") return Number.isInteger(value) ? "int" : "float";
  return Array.isArray(value) ? "list" : "dict";
}

// Python's == on JSON values (1 == 1.0, key order aside), as the harness compares them.
function same(a: unknown, b: unknown): boolean {
  if (a === undefined) a = null;
  if (b === undefined) b = null;
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return a === b;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => same(x, b[i]));
  }
  const [x, y] = [a as Json, b as Json];
  const keys = Object.keys(x);
  return keys.length === Object.keys(y).length && keys.every((key) => key in y && same(x[key], y[key]));
}

// How an output item contradicts the item added and done at its index.
function itemContradiction(item: Item, given: unknown): string | null {
  if (!isObject(given)) return `is ${shown(given)}, not an item`;
  const final = item.final;
  const kind = final.type ?? null;
  for (const streamed of item.resumed ? [kind] : [item.type, kind]) {
    if (!same(given.type, streamed)) return `is of type ${shown(given.type)}, streamed as ${shown(streamed)}`;
  }
  for (const streamed of item.resumed ? [final.id ?? null] : [item.id, final.id ?? null]) {
    if (streamed !== null && !same(given.id, streamed)) return `has id ${shown(given.id)}, streamed as ${shown(streamed)}`;
  }
  if (kind === "function_call") {
    for (const key of ["call_id", "name"]) {
      if (!same(given[key], final[key])) return `has ${key} ${shown(given[key])}, streamed as ${shown(final[key])}`;
    }
    if (!same(given.arguments, final.arguments)) return "has other arguments than were streamed";
  } else if (kind === "message") {
    return contentContradiction(item, given.content ?? []);
  }
  return null;
}

// How an output message's content contradicts the parts the stream delivered.
function contentContradiction(item: Item, content: unknown): string | null {
  if (!Array.isArray(content)) return "has content that is not a list";
  for (const number of indexes(content.length, item.contents.keys())) {
    const part = item.contents.get(number);
    if (part === undefined) {
      if (!item.resumed) return `has content part ${number}, which was never streamed`;
      continue;
    }
    if (number < 0 || number >= content.length) return `lacks content part ${number} of the stream`;
    const given = obj(content[number]);
    const kind = given.type ?? null;
    if (part.type !== null && !same(kind, part.type)) {
      return `has content part ${number} of type ${shown(kind)}, streamed as ${shown(part.type)}`;
    }
    if (kind === "output_text" || kind === "refusal") {
      const text = kind === "refusal" ? given.refusal : given.text;
      if ((!part.resumed && !same(text, part.pieces.join(""))) || (part.doneText !== null && !same(text, part.doneText))) {
        return `has content part ${number} with other text than was streamed`;
      }
    }
  }
  return null;
}

export function toModelEvents(items: Iterable<unknown>, options: ResponsesOptions = {}): Generator<ModelEvent> {
  return drive(new ResponsesAdapter(options), items);
}
