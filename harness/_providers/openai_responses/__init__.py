"""OpenAI Responses (`event: response.*` lines, each with its `sequence_number`).

`adapter` is the sans-IO adapter state machine (`ResponsesAdapter`, event dicts in,
internal events out) and its drivers; `errors` is its error table as data (provider
`"openai-responses"`), registered with `harness._exceptions` when imported; `framing` is
the wire (SSE bytes, the `response` a non-streaming request gets, the lines a resumed
stream answers with); `client` the SDK its streams are read with (`openai`, shared with
the other OpenAI dialect, and that a live recording is a plain POST); `reading` the
SDK's two readers, given a client, and what direct replay feeds the adapter; `tracing`
how a trace row names an event; `interop` what import and export read and write of it
(its calls, the resume `GET`, an SSE body and a plain answer as lines); `faults` is its
fault catalogue (`harness.faults.catalogue("openai-responses")`); `conversation` turns
the agent loop's conversation into a request
(`harness.agent.OpenAIResponsesModelClient`); `guard` is what `harness.strict` reads of
a Responses answer (`ResponsesReader`: the terminal event completes it; a resumed
stream; a non-streaming `response`); `conform` what `harness conform` tells an adapter
beside the events (the resume's `starting_after`, the policy). May import the flat core
and the provider-neutral modules of `harness._providers`; never the SDK.
"""
