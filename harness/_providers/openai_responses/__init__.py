"""OpenAI Responses (`event: response.*` lines, each with its `sequence_number`).

`adapter` is the sans-IO adapter state machine (`ResponsesAdapter`, event dicts in,
internal events out) and its drivers; `errors` is its error table as data (provider
`"openai-responses"`), registered with `harness._exceptions` when imported; `faults` is
its fault catalogue (`harness.faults.catalogue("openai-responses")`); `conversation`
turns the agent loop's conversation into a request
(`harness.agent.OpenAIResponsesModelClient`). May import the flat core,
`harness._providers.openai_shared` and `fault_rows`; never the SDK.
"""
