"""The harness's own adapter behind the `harness conform` stdin protocol (docs/conform.md).

harness conform -- python examples/python/conform_stdin.py
"""

import json
import sys

from harness import StreamProtocolError, event_to_json, to_model_events


class Fields(dict):
    """A JSON object whose fields read as attributes, as the adapter reads an SDK event."""

    __getattr__ = dict.__getitem__


class APIError(Exception):
    """What an SDK raises for an `error` event: the adapter never sees one."""


def events():
    for line in sys.stdin:
        event = json.loads(line, object_hook=Fields)
        if event.type == "error":
            raise APIError(event.error)
        if event.type != "ping":
            yield event


try:
    for model_event in to_model_events(events()):
        print(json.dumps(event_to_json(model_event)), flush=True)
except StreamProtocolError as error:
    print(json.dumps({"type": "error", "message": str(error)}))
except APIError as error:
    details = error.args[0]
    line = {"type": "error", "message": details["message"]}
    print(json.dumps({**line, "error_type": details["type"]}))
