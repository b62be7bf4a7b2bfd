"""Providers: one wire dialect each, and everything that dialect decides.

A provider supplies the sans-IO adapter state machine that turns its stream's `data`
objects into the three internal events (`harness._events`), and its error table as data,
registered with `harness._exceptions` so that the one `StreamProtocolError` carries the
provider's own codes and message prefix. Each provider lives in a private subpackage of
its own: `openai_chat` (Chat Completions chunks, ended by `data: [DONE]`) and
`openai_responses` (Responses `response.*` events); `openai_shared` holds the little both
OpenAI dialects have in common (their message prefix, a call's arguments read as a JSON
object, an `error` line as `APIErrorEvent`, an SDK object read as its line's dict).
Each OpenAI subpackage also holds its wire framing (`framing`), the SDK's readers given a
client (`reading`) and how a trace names its lines (`tracing`), which replay looks up by
provider (`harness._replay.framings`, `harness._replay.openai`).
Anthropic's adapter is still `harness._adapter`. The subpackages may import the flat core
only; nothing here imports an SDK.
"""
