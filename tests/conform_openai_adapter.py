"""The harness's OpenAI adapters behind the `harness conform --provider openai-*` stdin
protocol (docs/conform.md): the reference the tests judge, and a lenient one. Any
provider's adapter, as the header line names it (`--provider gemini` too).

    harness conform --provider openai-chat -- python tests/conform_openai_adapter.py
    harness conform --provider openai-responses --persistent -- python \
        tests/conform_openai_adapter.py
    ... -- python tests/conform_openai_adapter.py lenient

Each case: its header line (provider, request, policy), then its `data` objects (Chat's
`[DONE]` as `{"harness": "done"}`), then the end of input or, with `--persistent`, the
separator. `lenient` takes any finish reason or incomplete reason, ignores the request's
`tool_choice` and `starting_after`, and reads a body that ends without `[DONE]` or
`response.completed` as complete: what a reader that trusts the stream does.
"""

import json
import sys
from collections.abc import Iterator
from typing import Any

from harness import StreamProtocolError, event_to_json
from harness._exceptions import APIErrorEvent
from harness._providers import provider

SEPARATOR = {"harness": "case_end"}
DONE = {"harness": "done"}
LENIENT_ENDS = {"missing_done", "missing_response_completed", "missing_finish_reason"}


def items(lines: Iterator[str], ended: list[bool], done: object) -> Iterator[Any]:
    """One case's `data` objects, up to the separator (`ended` told) or the end of input."""
    for line in lines:
        item = json.loads(line)
        if item == SEPARATOR:
            ended.append(True)
            return
        yield done if item == DONE else item


def options(header: dict[str, Any], lenient: bool) -> dict[str, Any]:
    chosen = {**header["request"], **header["policy"]}
    if lenient:
        chosen.pop("tool_choice", None)
        chosen.pop("starting_after", None)
        if "finish_reasons" in chosen:
            chosen["finish_reasons"] = _Anything()
        if "incomplete_reasons" in chosen:
            chosen["incomplete_reasons"] = _Anything()
    return chosen


class _Anything:
    def __contains__(self, value: object) -> bool:
        return True


def run_case(header_line: str, lines: Iterator[str], lenient: bool) -> bool:
    """Judge one case; True when it ended with the separator (more may follow)."""
    header = json.loads(header_line)
    found = provider(header["provider"])
    done = getattr(found.module("adapter"), "DONE", None)
    ended: list[bool] = []
    try:
        for event in found.to_model_events(items(lines, ended, done), **options(header, lenient)):
            print(json.dumps(event_to_json(event)), flush=True)
    except StreamProtocolError as error:
        if lenient and error.code in LENIENT_ENDS:
            print(json.dumps({"type": "done"}))
        else:
            print(json.dumps({"type": "error", "message": str(error)}))
    except APIErrorEvent as error:
        body: Any = error.body
        details = body["error"]
        print(
            json.dumps(
                {"type": "error", "message": details["message"], "error_type": details["type"]}
            )
        )
    for line in lines if not ended else ():  # the lines left unread after an error
        if json.loads(line) == SEPARATOR:
            ended.append(True)
            break
    if ended:
        print(json.dumps(SEPARATOR), flush=True)
    return bool(ended)


def main() -> None:
    lenient = sys.argv[1:] == ["lenient"]
    lines = iter(sys.stdin.readline, "")
    for header_line in lines:
        if not run_case(header_line, lines, lenient):
            return


main()
