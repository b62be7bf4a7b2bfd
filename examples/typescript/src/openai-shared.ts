// What the two OpenAI dialects' adapters share (harness/_providers/openai_shared.py): the
// message prefix of their errors, the API error a stream can carry, a call's arguments read
// as its input, and Python's truthiness, which the rules are written in.
import type { ModelEvent } from "./types";

export const OPENAI_PROTOCOL_ERROR_PREFIX = "OpenAI stream protocol error: ";

export type Json = Record<string, unknown>;

export class OpenAIStreamProtocolError extends Error {
  constructor(message: string) { super(OPENAI_PROTOCOL_ERROR_PREFIX + message); }
}

// An error line in the stream: what the SDK raises as its APIError.
export class OpenAIAPIError extends Error {
  constructor(readonly errorType: string, message: string) { super(message); }
}

export function apiError(details: Json, name: unknown): OpenAIAPIError {
  const type = typeof name === "string" && name ? name : "error";
  const message = typeof details.message === "string" ? details.message : "An error occurred during streaming";
  return new OpenAIAPIError(type, message);
}

export function isObject(value: unknown): value is Json {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

export function obj(value: unknown): Json {
  return isObject(value) ? value : {};
}

export function isInt(value: unknown): value is number {
  return typeof value === "number" && Number.isInteger(value);
}

/** An index the SDK reads as a position: a non-negative integer (it reads -1 as the last). */
export function isIndex(value: unknown): value is number {
  return isInt(value) && value >= 0;
}

// Python's truth: null, false, 0, "", [] and {} are false.
export function truthy(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0;
  if (isObject(value)) return Object.keys(value).length > 0;
  return Boolean(value);
}

// A value the stream sent, where a message names it.
export function shown(value: unknown): string {
  if (value === null || value === undefined) return "null";
  return typeof value === "string" ? `'${value}'` : JSON.stringify(value);
}

function finite(value: unknown): boolean {
  if (typeof value === "number") return Number.isFinite(value);
  if (Array.isArray(value)) return value.every(finite);
  if (isObject(value)) return Object.values(value).every(finite);
  return true;
}

// A call's joined arguments as its input: {} when empty, else JSON that must be an object.
export function callInput(
  args: string, notJson: string, notObject: string,
): Record<string, unknown> {
  if (!args) return {};
  let value: unknown;
  try {
    value = JSON.parse(args);
  } catch {
    throw new OpenAIStreamProtocolError(notJson);
  }
  if (!finite(value)) throw new OpenAIStreamProtocolError(notJson);
  if (!isObject(value)) throw new OpenAIStreamProtocolError(notObject);
  return value;
}

// One adapter as a sans-IO machine: each item's events, then the end's.
export interface Machine<Item> {
  feed(item: Item): ModelEvent[];
  finish(): ModelEvent[];
}

export function* drive<Item>(machine: Machine<Item>, items: Iterable<Item>): Generator<ModelEvent> {
  for (const item of items) yield* machine.feed(item);
  yield* machine.finish();
}
