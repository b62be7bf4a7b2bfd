"""Anthropic Messages streams (`message_*` and `content_block_*` events, named by `event:`).

`errors` is its error table as data (pure data: the core reads it as the default
provider's); `adapter` is the strict adapter (`StreamAdapter`) and its drivers;
`message` folds events into the non-streaming `Message` and back; `construct` builds the
SDK's own event objects from a cassette's dicts for the direct replay path; `framing` is
how an event goes over the wire; `guard` what `harness.strict` reads of an answer
(`AnthropicReader`); `interop` what import and export read and write of it; `faults` is
its fault catalogue (the rows `harness.faults.CATALOGUE` holds); `tracing` how a trace
names its rows (`harness replay --trace`, `harness diff --trace`); `client` is the SDK
its streams are read with (`anthropic`: its clients, base URL and variables, and that a
live recording goes through it); `reading` how that SDK reads a stream over a client
(`messages.create(stream=True)`), and what direct replay feeds the adapter in its place.
May import the flat core and the provider-neutral modules of `harness._providers`; the
SDK only inside `construct` and `reading`, when an SDK object is asked for.
"""
