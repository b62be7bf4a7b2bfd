"""Providers: one wire dialect each, and everything that dialect decides.

A provider supplies the sans-IO adapter state machine that turns its stream's `data`
objects into the three internal events (`harness._events`), and its error table as data,
registered with `harness._exceptions` so that the one `StreamProtocolError` carries the
provider's own codes and message prefix. Each provider lives in a private subpackage of
its own: `openai_chat` (Chat Completions chunks, ended by `data: [DONE]`) and
`openai_responses` (Responses `response.*` events); `openai_shared` holds the little both
OpenAI dialects have in common (their message prefix, a call's arguments read as a JSON
object, an `error` line as `APIErrorEvent`, an SDK object read as its line's dict), and
`openai_framing` their SSE framing (an event's `data` read as the `openai` SDK reads it,
and written as the API frames it). Each OpenAI dialect's `interop` module is what import
and export read and write of it (which calls are its, a plain answer as a stream).
Anthropic's adapter is still `harness._adapter`. The subpackages may import the flat core
only; nothing here imports an SDK.
"""
