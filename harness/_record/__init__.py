"""Recording: a live answer (Messages, Chat, Responses) as a cassette, opt-in, never a key.

`live` records (the `harness record` command, the recording client's transport);
`over_http` records OpenAI's two APIs for `harness record --provider` (plain HTTP, no
SDK); `through_sdk` records a provider through its own SDK, which signs the call with the
user's own credentials (Bedrock's ConverseStream, boto3); `answer` turns one HTTP answer,
whole or as it arrives, into a cassette's lines (for them and the proxy).

It may import the flat core, `harness._cassette`, `harness._providers` (a provider's
answer fold) and `harness._hosts` (a host's framing: Bedrock's frames), nothing else:
the recording clients that build on it live with the cassette clients, in
`harness._replay.clients`.
"""
