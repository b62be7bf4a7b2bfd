"""Replay: a cassette answered to the code under test, directly or through the SDK.

`direct` feeds a cassette's lines to its provider's adapter (`harness._providers`), in
the form the provider's SDK would hand them (for Messages the SDK's event objects,
`construct` builds them fast; for OpenAI's the lines' dicts); `plan` turns a cassette
into the HTTP answer any transport or server carries out, in the framing of the
cassette's provider (its `framing`, the one lookup of each dialect's wire: SSE bytes,
the non-streaming answer, endpoints, resumes); `replayer` answers one request after
another from a test's cassettes; `cache` keeps each cassette read, checked and encoded
once a session; `sdk` is the in-process transport under real SDK clients, `httpx1` the
same for `httpx` (v1) clients; `readers` replays a cassette through its provider's
SDK's own readers; `clients` builds those clients (each from its provider's `Sdk`),
the recording clients too; `frameworks` hands one to a framework that takes none;
`calls` groups a session's turns into the calls the SDK makes of them (an answer it
retries goes with the turn after it). It may import the flat core, the adapter,
`harness._cassette`, `harness._providers` (the OpenAI adapters), `harness._hosts` (a
request to Bedrock's or Vertex's path answered in that host's framing) and
`harness._record` (the recording clients' transport).
"""
