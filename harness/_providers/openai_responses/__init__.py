"""OpenAI Responses (`event: response.*` lines, each with its `sequence_number`).

`adapter` is the sans-IO adapter state machine (`ResponsesAdapter`, event dicts in,
internal events out) and its drivers; `errors` is its error table as data (provider
`"openai-responses"`), registered with `harness._exceptions` when imported; `guard` is
what `harness.strict` reads of a Responses answer (`ResponsesReader`: the terminal
event completes it; a resumed stream; a non-streaming `response`). May import the flat
core, `harness._cassette` and the other modules of `harness._providers`; never the SDK.
"""
