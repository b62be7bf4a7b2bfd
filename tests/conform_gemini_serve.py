"""google-genai behind `harness conform --provider gemini --serve` (docs/conform.md): the
case's header line on standard input, the stream over HTTP, read by the SDK.

    harness conform --provider gemini --serve -- python tests/conform_gemini_serve.py

A `genai.Client()` built as its docs build one, reading `$GOOGLE_GEMINI_BASE_URL` and
`$GEMINI_API_KEY` itself, the header `x-harness-cassette: $HARNESS_CASSETTE` among its
`HttpOptions`, retrying a 429 as `retry_options` ask; each chunk
`models.generate_content_stream` yields goes to the harness's adapter as the dict it was
on the wire, an `{"error": ...}` chunk the SDK raises for handed on as that chunk.
"""

import json
import os
import sys
from typing import Any

import httpx2
import pydantic
from google import genai
from google.genai import errors, types

from harness import StreamProtocolError, event_to_json
from harness._exceptions import APIErrorEvent
from harness._providers import provider

SEPARATOR = {"harness": "case_end"}
try:  # google-genai 2.x sends through httpx, 3.x through httpx2
    import httpx

    HTTP_ERRORS: tuple[type[Exception], ...] = (httpx.HTTPError, httpx2.HTTPError)
except ImportError:
    HTTP_ERRORS = (httpx2.HTTPError,)


def client() -> genai.Client:
    retry = types.HttpRetryOptions(attempts=3, initial_delay=0.01, max_delay=0.1, jitter=0)
    options = types.HttpOptions(
        headers={"x-harness-cassette": os.environ["HARNESS_CASSETTE"]},
        timeout=5000,
        retry_options=retry,
    )
    return genai.Client(http_options=options)


def run_case(header: dict[str, Any]) -> None:
    found = provider(header["provider"])
    reading = found.reading
    options = {**header["request"], **header["policy"]}
    made = client()

    def chunks() -> Any:
        stream = made.models.generate_content_stream(model="gemini-2.5-flash", contents="hi")
        try:
            for response in stream:
                yield reading.wire_chunk(response)
        except errors.APIError as error:
            line = reading.error_line(error)
            if line is None:
                raise
            yield line

    try:
        for event in found.to_model_events(chunks(), **options):
            print(json.dumps(event_to_json(event)), flush=True)
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
    except errors.APIError as error:  # an HTTP error answer
        shown = {"message": error.message, "error_type": error.status}
        print(json.dumps({"type": "error", **shown}))
    except pydantic.ValidationError as error:  # a chunk the SDK cannot parse (args a list)
        print(json.dumps({"type": "error", "message": f"google-genai: {error.title}"}))
    except HTTP_ERRORS as error:
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
