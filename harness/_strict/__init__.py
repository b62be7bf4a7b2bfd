"""The adapter's rules between a client and the wire: `harness.strict` and `StrictTransport`.

`guard` is the sans-IO part (an answer's bytes in, checked bytes out, the one
`StreamAdapter` deciding); `transport` puts it in an HTTP transport for `httpx2` and
`httpx`; `client` makes an SDK client of it; `httpx1` answers `httpx` (v1) clients from
cassettes. May import the core, `_cassette` and `_replay`; the SDK only inside `client`.
"""
