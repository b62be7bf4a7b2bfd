"""OpenAI Chat Completions (`chat.completion.chunk` lines, ended by `data: [DONE]`).

`adapter` is the sans-IO adapter state machine (`ChatAdapter`, chunk dicts in, internal
events out) and its drivers; `errors` is its error table as data (provider
`"openai-chat"`), registered with `harness._exceptions` when imported; `faults` is its
fault catalogue (`harness.faults.catalogue("openai-chat")`); `conversation` turns the
agent loop's conversation into a request (`harness.agent.OpenAIChatModelClient`). May
import the flat core, `harness._providers.openai_shared` and `fault_rows`; never the SDK.
"""
