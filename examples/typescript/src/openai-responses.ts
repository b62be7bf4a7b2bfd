// toModelEvents for OpenAI Responses: the `response.*` events of a streamed answer (each
// with its `sequence_number`) in, the three internal events out, each rule of the harness's
// error table (docs/openai-adapters.md) with its message. A resumed stream
// (`starting_after`) starts at sequence N+1, mid-item, without `response.created`.
import type { ModelEvent } from "./types";
import {
  type Json, type Machine, OpenAIStreamProtocolError, apiError, callInput, drive, isIndex, isInt, obj, shown,
  truthy,
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

type Item = {
  type: unknown;
  resumed: boolean;              // added before the resume point: partly unseen
  parts: Set<number>;
  doneParts: Set<number>;
  pieces: string[];
  nonString: boolean;
  doneArguments: unknown;
};

function fail(message: string): OpenAIStreamProtocolError {
  return new OpenAIStreamProtocolError(message);
}

function newItem(type: unknown, resumed = false): Item {
  return { type, resumed, parts: new Set(), doneParts: new Set(), pieces: [], nonString: false, doneArguments: null };
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
  private readonly done = new Set<number>();

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
      this.part(event, kind);
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
      this.part(event, kind);
      if (truthy(event.delta)) {
        if (!this.refusalIsAnswer) throw fail(`output item ${str(event.output_index)} is a refusal (response.refusal.delta)`);
        return this.text(event.delta);
      }
    } else if (kind === "response.content_part.added") {
      const open = this.item(event, kind);
      if (isIndex(event.content_index)) open.parts.add(event.content_index);
      const part = obj(event.part);
      if (part.type === "output_text") return this.text(part.text);
    } else if (kind === "response.content_part.done") {
      const [open, index] = this.part(event, kind);
      open.parts.delete(index);
      open.doneParts.add(index);
    } else if (kind === "response.output_text.done" || kind === "response.refusal.done") {
      this.part(event, kind);
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

  private part(event: Json, kind: string): [Item, number] {
    const open = this.item(event, kind);
    const index = event.content_index;
    if (!isIndex(index) || !open.parts.has(index)) {
      if (!open.resumed || !isIndex(index) || open.doneParts.has(index)) {
        const at = String(event.output_index);
        throw fail(`${kind} arrived without an open content part ${shown(index)} at output index ${at}`);
      }
      open.parts.add(index);
    }
    return [open, index];
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
    const type = obj(event.item).type;
    this.supported(index, type);
    this.items.set(index, newItem(type));
    return [];
  }

  private itemDone(event: Json, kind: string): ModelEvent[] {
    const open = this.item(event, kind);
    const index = event.output_index as number;
    this.items.delete(index);
    this.done.add(index);
    const final = obj(event.item);
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
    this.terminal = kind;
    return [];
  }

  finish(): ModelEvent[] {
    if (this.terminal === null) throw fail("stream ended before response.completed");
    return [{ type: "done" }];
  }
}

export function toModelEvents(items: Iterable<unknown>, options: ResponsesOptions = {}): Generator<ModelEvent> {
  return drive(new ResponsesAdapter(options), items);
}
