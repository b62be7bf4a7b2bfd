"""Amazon Bedrock's ConverseStream (`messageStart`, `contentBlockDelta`, ... keyed by
`contentBlockIndex`, in AWS event-stream frames).

`adapter` is the sans-IO adapter state machine (`ConverseAdapter`: the event dicts
boto3's `converse_stream()["stream"]` yields in, internal events out) and its drivers;
`errors` is its error table as data (provider `"bedrock-converse"`), registered with
`harness._exceptions` when imported; `framing` is the wire (each event an event-stream
frame, the two paths naming the model, the `Converse` answer a non-streaming request
gets); `client` the SDK its streams are read with (boto3's `bedrock-runtime` client,
built with dummy credentials, answered through botocore's `before-send` event);
`reading` boto3's reader of a stream, given a client, and what direct replay feeds the
adapter; `tracing` how a trace row names an event; `interop` what import and export read
and write of it (its calls, an event-stream body and a plain answer as lines); `faults`
is its fault catalogue (`harness.faults.catalogue("bedrock-converse")`); `guard` the
guard's reading of its answers (`ConverseReader` over the frames, a `Converse` answer
checked whole, the proxy's refusal as an exception frame), and `hooks` how
`harness.strict` puts it into a boto3 client (botocore's `before-parse` event); `conform`
what `harness conform` tells an adapter beside the events (the policy) and where its
cases are; `conversation` turns the agent loop's conversation into a request
(`harness.agent.BedrockConverseModelClient`). May import the flat core and the
provider-neutral modules of `harness._providers`; never boto3 at import time.
"""
