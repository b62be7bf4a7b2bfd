"""OpenAI Responses (`event: response.*` lines, each with its `sequence_number`).

`adapter` is the sans-IO adapter state machine (`ResponsesAdapter`, event dicts in,
internal events out) and its drivers; `errors` is its error table as data (provider
`"openai-responses"`), registered with `harness._exceptions` when imported. `framing` is
its endpoints and SSE framing (`event:` names), `conform` what `harness conform` tells
an adapter beside the events (the resume's `starting_after`, the policy). May import the
flat core and `harness._providers.openai_shared`; never the SDK.
"""
