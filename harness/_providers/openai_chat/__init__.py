"""OpenAI Chat Completions (`chat.completion.chunk` lines, ended by `data: [DONE]`).

`adapter` is the sans-IO adapter state machine (`ChatAdapter`, chunk dicts in, internal
events out) and its drivers; `errors` is its error table as data (provider
`"openai-chat"`), registered with `harness._exceptions` when imported; `framing` is the
wire (SSE bytes, `data: [DONE]`, the `chat.completion` a non-streaming request gets);
`client` the SDK its streams are read with (`openai`, shared with the other OpenAI
dialect, and that a live recording is a plain POST); `reading` the SDK's two readers,
given a client, and what direct replay feeds the adapter; `tracing` how a trace row
names a chunk; `interop` what import and export read and write of it (its calls, an SSE
body and a plain answer as lines); `faults` is its fault catalogue
(`harness.faults.catalogue("openai-chat")`); `conversation` turns the agent loop's
conversation into a request (`harness.agent.OpenAIChatModelClient`); `guard` is what
`harness.strict` reads of a Chat answer (`ChatReader`: the chunk carrying
`finish_reason` completes it; a repeated call id or name handed on once; a non-streaming
`chat.completion`); `conform` what `harness conform` tells an adapter beside the chunks
(the request's `tool_choice`, the policy); `profiles` the compatible servers' named sets
of tolerated deviations, as data (docs/profiles.md). May import the flat core and the
provider-neutral modules of `harness._providers`; never the SDK.
"""
