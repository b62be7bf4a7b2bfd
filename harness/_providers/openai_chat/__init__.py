"""OpenAI Chat Completions (`chat.completion.chunk` lines, ended by `data: [DONE]`).

`adapter` is the sans-IO adapter state machine (`ChatAdapter`, chunk dicts in, internal
events out) and its drivers; `errors` is its error table as data (provider
`"openai-chat"`), registered with `harness._exceptions` when imported; `conversation`
turns the agent loop's conversation into a request (`harness.agent.OpenAIChatModelClient`).
May import the flat core and `harness._providers.openai_shared`; never the SDK.
"""
