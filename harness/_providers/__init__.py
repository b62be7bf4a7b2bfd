"""Providers: one wire dialect each, and everything that dialect decides.

A provider supplies the sans-IO adapter state machine that turns its stream's `data`
objects into the three internal events (`harness._events`), and its error table as data,
registered with `harness._exceptions` so that the one `StreamProtocolError` carries the
provider's own codes and message prefix. Each provider lives in a private subpackage of
its own: `openai_chat` (Chat Completions chunks, ended by `data: [DONE]`) and
`openai_responses` (Responses `response.*` events); `openai_shared` holds the little both
OpenAI dialects have in common (their message prefix, a call's arguments read as a JSON
object, an `error` line as `APIErrorEvent`, an SDK object read as its line's dict).
Anthropic's adapter is still `harness._adapter`.

What the guard (`harness.strict`) asks of a provider is `reading`'s `AnswerReader`: each
dialect's reader lives with it (`openai_chat.guard`, `openai_responses.guard`),
Anthropic's in `anthropic_guard` until its adapter moves here; `openai_sse` reads SSE as
the openai SDK does, for both OpenAI dialects. The modules here may import the flat core
and `harness._cassette` (the SSE decoder and line limit) only; nothing here imports an SDK.
"""
