"""Gemini's native stream (`streamGenerateContent`: `GenerateContentResponse` chunks).

`adapter` is the sans-IO adapter state machine (`GeminiAdapter`, chunk dicts in,
internal events out) and its drivers; `errors` is its error table as data (provider
`"gemini"`), registered with `harness._exceptions` when imported; `framing` is the wire
(the Gemini API's and Vertex's paths, SSE under `alt=sse` or the streamed JSON array
without it, the `GenerateContentResponse` a `generateContent` request gets); `client`
the SDK its streams are read with (`google-genai`'s `Client`, built over an HTTP client
of ours) and that a live recording is a plain POST; `reading` the SDK's reader
(`generate_content_stream`), given a client, and what direct replay feeds the adapter;
`tracing` how a trace row names a chunk; `interop` what import and export read and
write of it (its calls, an SSE or JSON-array body, a plain answer); `faults` its fault
catalogue (`harness.faults.catalogue("gemini")`); `conform` what `harness conform`
tells an adapter beside the chunks (its policy) and where its default cases are
(`cassettes/gemini/`); `guard` what `harness.strict` reads of a Gemini answer (which
calls are its, SSE or the streamed array read as google-genai reads them:
`GeminiReader`); `conversation` turns the agent loop's conversation into a request
(`harness.agent.GeminiModelClient`). May import the flat core and the provider-neutral
modules of `harness._providers`; never the SDK.
"""
