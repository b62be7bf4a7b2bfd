"""A thin wire dialect, registered from outside the harness (`thin = thin_dialect`).

`errors` is its error table (registered with `harness._exceptions` when imported);
`adapter` the state machine and its two drivers; `framing` its wire (`data:` lines, the
folded answer, its endpoint); `client` the SDK its streams are read with (`thin_sdk`);
`reading` that SDK's one reader and what direct replay feeds the adapter; `faults` its
catalogue (two rows of its own and the wire rows); `conform` what `harness conform`
tells an adapter beside the lines; `tracing` how a trace (and `harness validate`) reads
it. It has no `guard`, `interop` or `profiles`: those parts are optional.
"""
