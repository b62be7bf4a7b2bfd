"""The harness's own adapter behind the `harness conform` stdin protocol (docs/conform.md).

harness conform -- python examples/python/conform_stdin.py
harness conform --persistent -- python examples/python/conform_stdin.py

One case a process (its events, then the end of input), or, with `--persistent`, case
after case, each ended by the separator line on the input and on the output.
"""

import json
import sys

from harness import StreamProtocolError, event_to_json, to_model_events

SEPARATOR = {"harness": "case_end"}


class Fields(dict):
    """A JSON object whose fields read as attributes, as the adapter reads an SDK event."""

    __getattr__ = dict.__getitem__


class APIError(Exception):
    """What an SDK raises for an `error` event: the adapter never sees one."""


def events(lines, ended):
    """One case's events: the lines up to the separator (`ended` told) or the end of input."""
    for line in lines:
        event = json.loads(line, object_hook=Fields)
        if event == SEPARATOR:
            ended.append(True)
            return
        if event.type == "error":
            raise APIError(event.error)
        if event.type != "ping":
            yield event


def run_case(first, lines):
    """Judge one case; True when it ended with the separator (more may follow)."""
    ended = []
    try:
        for model_event in to_model_events(events(_chain(first, lines), ended)):
            print(json.dumps(event_to_json(model_event)), flush=True)
    except StreamProtocolError as error:
        print(json.dumps({"type": "error", "message": str(error)}))
    except APIError as error:
        details = error.args[0]
        line = {"type": "error", "message": details["message"]}
        print(json.dumps({**line, "error_type": details["type"]}))
    for line in lines if not ended else ():  # the lines left unread after an error
        if json.loads(line) == SEPARATOR:
            ended.append(True)
            break
    if ended:
        print(json.dumps(SEPARATOR), flush=True)
    return bool(ended)


def _chain(first, rest):
    yield first
    yield from rest


def main():
    # lines read by readline: an iterator with no close(), so that the adapter closing a
    # case's events when it fails does not close standard input with them
    lines = iter(sys.stdin.readline, "")
    for first in lines:  # a case begins with a line; none left: done
        if not run_case(first, lines):
            return


main()
