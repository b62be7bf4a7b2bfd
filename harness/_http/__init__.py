"""The harness over a real socket: `serve` (cassettes answered) and `proxy` (answers recorded).

`hosting` binds, announces and stops an aiohttp app and answers in the API's error shape,
`bounds` keeps its log and descriptors bounded under any peer;
`server` and `proxy` are the two apps; `dialects` says which provider a path `server`
answers is for, and the error JSON that provider's clients read. It may import the flat
core, `harness._cassette`, `harness._providers`, `harness._hosts` (Bedrock's and Vertex's
paths routed), `harness._replay`, `harness._record`
and `harness._strict` (`harness proxy --strict`).
"""
