"""OpenAI Chat Completions (`chat.completion.chunk` lines, ended by `data: [DONE]`).

`adapter` is the sans-IO adapter state machine (`ChatAdapter`, chunk dicts in, internal
events out) and its drivers; `errors` is its error table as data (provider
`"openai-chat"`), registered with `harness._exceptions` when imported; `guard` is what
`harness.strict` reads of a Chat answer (`ChatReader`: the chunk carrying
`finish_reason` completes it; a repeated call id or name handed on once; a
non-streaming `chat.completion`). May import the flat core, `harness._cassette` and the
other modules of `harness._providers`; never the SDK.
"""
