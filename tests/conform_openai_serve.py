"""The harness's OpenAI adapters behind `harness conform --provider openai-* --serve`
(docs/conform.md): the case's header line on standard input, the stream over HTTP.

    harness conform --provider openai-chat --serve -- python tests/conform_openai_serve.py

It asks `$OPENAI_BASE_URL` with the header `x-harness-cassette: $HARNESS_CASSETTE` (a
resumed Responses case: the resume GET), reads the SSE body raw with httpx2 (the SDK's
iterator hides Chat's `[DONE]`) and hands each `data` object to the harness's adapter; a
429 is retried after its `retry-after-ms`, as the SDK does.
"""

import json
import os
import sys
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager
from typing import Any

import httpx2

from harness import StreamProtocolError, event_to_json
from harness._exceptions import APIErrorEvent
from harness._providers import provider

SEPARATOR = {"harness": "case_end"}
RETRIES = 2


def request(
    client: httpx2.Client, header: dict[str, Any]
) -> AbstractContextManager[httpx2.Response]:
    base = os.environ["OPENAI_BASE_URL"]
    headers = {
        "authorization": f"Bearer {os.environ['OPENAI_API_KEY']}",
        "x-harness-cassette": os.environ["HARNESS_CASSETTE"],
    }
    after = header["request"].get("starting_after")
    if header["provider"] == "openai-chat":
        body = {"model": "gpt-4.1-mini", "messages": [], "stream": True}
        return client.stream("POST", f"{base}/chat/completions", json=body, headers=headers)
    if after is not None:
        url = f"{base}/responses/resp_resumed?stream=true&starting_after={after}"
        return client.stream("GET", url, headers=headers)
    body = {"model": "gpt-4.1-mini", "input": "", "stream": True}
    return client.stream("POST", f"{base}/responses", json=body, headers=headers)


def items(response: httpx2.Response, done: object) -> Iterator[Any]:
    for line in response.iter_lines():
        if line.startswith("data: "):
            data = line.removeprefix("data: ")
            yield done if data == "[DONE]" else json.loads(data)


def run_case(header: dict[str, Any]) -> None:
    found = provider(header["provider"])
    done = getattr(found.module("adapter"), "DONE", None)
    options = {**header["request"], **header["policy"]}
    try:
        with httpx2.Client(timeout=httpx2.Timeout(5.0)) as client:
            for attempt in range(RETRIES + 1):
                with request(client, header) as response:
                    if response.status_code == 429 and attempt < RETRIES:
                        time.sleep(int(response.headers.get("retry-after-ms", "1")) / 1000)
                        continue  # as the SDK retries a 429
                    if response.status_code >= 400:
                        answer = json.loads(response.read())["error"]
                        shown = {"message": answer["message"], "error_type": answer["type"]}
                        print(json.dumps({"type": "error", **shown}))
                        return
                    for event in found.to_model_events(items(response, done), **options):
                        print(json.dumps(event_to_json(event)), flush=True)
                    return
    except StreamProtocolError as error:
        print(json.dumps({"type": "error", "message": str(error)}))
    except APIErrorEvent as error:
        body: Any = error.body
        details = body["error"]
        print(
            json.dumps(
                {"type": "error", "message": details["message"], "error_type": details["type"]}
            )
        )
    except httpx2.HTTPError as error:
        print(json.dumps({"type": "error", "message": f"{type(error).__name__}: {error}"}))


def main() -> None:
    lines = iter(sys.stdin.readline, "")
    for line in lines:
        run_case(json.loads(line))
        separator = next(lines, None)
        if separator is None:
            return
        print(json.dumps(SEPARATOR), flush=True)


main()
