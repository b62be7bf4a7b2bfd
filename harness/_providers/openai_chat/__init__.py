"""OpenAI Chat Completions (`chat.completion.chunk` lines, ended by `data: [DONE]`).

`adapter` is the sans-IO adapter state machine (`ChatAdapter`, chunk dicts in, internal
events out) and its drivers; `errors` is its error table as data (provider `"openai-
chat"`), registered with `harness._exceptions` when imported. `framing` is its endpoint
and SSE framing (`data: [DONE]`), `conform` what `harness conform` tells an adapter
beside the chunks (the request's `tool_choice`, the policy). May import the flat core
and `harness._providers.openai_shared`; never the SDK.
"""
