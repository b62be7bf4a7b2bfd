"""The adapter's rules between a client and the wire: `harness.strict` and `StrictTransport`.

`guard` is the sans-IO part (an answer's bytes in, checked bytes out, the provider's
adapter deciding through its `AnswerReader`, `harness._providers.answers`); `dialects`
says which answers are checked and by which provider's reader (from the request's path);
`transport` puts it in an HTTP transport for `httpx2` and `httpx` alike; `client` makes
an SDK client of it (an Anthropic middleware), `http_client` for an SDK without
middleware (openai: the guard in its HTTP client), `hooks` for an SDK with no HTTP
client of ours but hooks of its own (the provider's `guard.strict_client` puts them
in); `sdk_errors` makes what the guard raises into an SDK's reading the SDK's own
`APIError` too, so that no SDK release wraps or retries it; `report` words what it
would have raised, for the fault reports; `policy` reads the stop reasons a command
line allows (`max_tokens,stop_sequence`). May import the core, `_cassette`, `_providers`, `_hosts`
(a call at Bedrock's or Vertex's path, Bedrock's frames) and `_replay`; the SDK only
inside `client`, `http_client` and `report` (`sdk_errors` reads the SDKs already loaded).
`httpx` (v1) clients are answered from cassettes by `harness._replay.httpx1`.
"""
