"""Providers: one wire dialect each, and everything that dialect decides.

A provider supplies the sans-IO adapter state machine that turns its stream's `data`
objects into the three internal events (`harness._events`), and its error table as data,
registered with `harness._exceptions` so that the one `StreamProtocolError` carries the
provider's own codes and message prefix. Each provider lives in a private subpackage of
its own: `openai_chat` (Chat Completions chunks, ended by `data: [DONE]`) and
`openai_responses` (Responses `response.*` events); `openai_shared` holds the little both
OpenAI dialects have in common (their message prefix, a call's arguments read as a JSON
object, an `error` line as `APIErrorEvent`, an SDK object read as its line's dict, the
API's error answers). A provider's `faults` module (`anthropic.faults`,
`openai_chat.faults`, `openai_responses.faults`) renders the fault catalogue in its
dialect, built of `fault_rows` (the row types and the provider-neutral wire rows);
`harness.faults` is their public face. Anthropic's adapter is still `harness._adapter`.
The subpackages may import the flat core and, for the directive names the fault rows
write, `harness._cassette`; nothing here imports an SDK.
"""
