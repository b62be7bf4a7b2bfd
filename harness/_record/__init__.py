"""Recording: a live Messages answer written as a cassette, opt-in, never with a credential.

`live` records (the `harness record` command, the recording client's transport);
`answer` turns one whole HTTP answer into a cassette's lines (for them and the proxy).

It may import the flat core, `harness._cassette` and `harness._providers` (a
provider's answer fold), nothing else: the recording clients
that build on it live with the cassette clients, in `harness._replay.clients`.
"""
