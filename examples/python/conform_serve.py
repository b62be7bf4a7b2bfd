"""The harness's own adapter behind `harness conform --serve` (docs/conform.md): the SDK's
client asks the harness's server for the case named by HARNESS_CASSETTE.

    harness conform --serve -- python examples/python/conform_serve.py
"""

import json
import os

import anthropic

from harness import StreamProtocolError, event_to_json, to_model_events

# ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY are read from the environment conform sets.
client = anthropic.Anthropic(
    default_headers={"x-harness-cassette": os.environ["HARNESS_CASSETTE"]},
    timeout=1.0,  # a stalled body must fail well within conform's --timeout
)
try:
    with client.messages.create(
        model="claude-sonnet-4-5",
        max_tokens=1024,
        messages=[{"role": "user", "content": "conform"}],
        stream=True,
    ) as stream:
        for model_event in to_model_events(stream):
            print(json.dumps(event_to_json(model_event)), flush=True)
except StreamProtocolError as error:
    print(json.dumps({"type": "error", "message": str(error)}))
except anthropic.APIStatusError as error:
    body = error.body if isinstance(error.body, dict) else {}
    details = body.get("error", {})
    line = {"type": "error", "message": details.get("message", str(error))}
    print(json.dumps({**line, "error_type": details.get("type", "api_error")}))
except Exception as error:  # the connection dropped or timed out: the SDK's httpx errors
    print(json.dumps({"type": "error", "message": f"{type(error).__name__}: {error}"}))
