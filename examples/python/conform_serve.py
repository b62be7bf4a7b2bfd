"""The harness's own adapter behind `harness conform --serve` (docs/conform.md): the SDK's
client asks the harness's server for the case named by HARNESS_CASSETTE.

    harness conform --serve -- python examples/python/conform_serve.py
    harness conform --serve --persistent -- python examples/python/conform_serve.py

With `--persistent`, each separator line on standard input asks for one case (the
server hands them out in turn under this process's HARNESS_CASSETTE), and the output of
each ends with the same line.
"""

import json
import os
import sys

import anthropic

from harness import StreamProtocolError, event_to_json, to_model_events

SEPARATOR = {"harness": "case_end"}

# ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY are read from the environment conform sets.
client = anthropic.Anthropic(
    default_headers={"x-harness-cassette": os.environ["HARNESS_CASSETTE"]},
    timeout=1.0,  # a stalled body must fail well within conform's --timeout
)


def run_case():
    try:
        with client.messages.create(
            model="claude-sonnet-5",
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


asked = False
for line in sys.stdin:  # --persistent: a separator line a case
    if json.loads(line) == SEPARATOR:
        asked = True
        run_case()
        print(json.dumps(SEPARATOR), flush=True)
if not asked:  # one case a process: the input is empty
    run_case()
