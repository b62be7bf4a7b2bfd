"""OpenAI Chat Completions (`chat.completion.chunk` lines, ended by `data: [DONE]`).

`adapter` is the sans-IO adapter state machine (`ChatAdapter`, chunk dicts in, internal
events out) and its drivers; `errors` is its error table as data (provider
`"openai-chat"`), registered with `harness._exceptions` when imported; `interop` is what
import and export read and write of it (its calls, an SSE body and a plain answer as
lines, the export's framing). May import the flat core, `harness._providers.openai_shared` and
`harness._providers.openai_framing`; never the SDK.
"""
