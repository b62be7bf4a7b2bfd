"""Write the Gemini cassette library (`streamGenerateContent` chunks), reproducibly.

    python cassettes/gemini/generate.py            # rewrite cassettes/gemini/ in place
    python cassettes/gemini/generate.py OUT_DIR    # write it elsewhere (tests compare the two)

Each cassette is one small function below, registered with its path and the header
`description` that says what it shows; `errors/<code>.jsonl` replays to that code of the
Gemini table (`server_error.jsonl` to the API's error mid-stream, `api_error:INTERNAL`),
every other cassette to done. Lines are the chunks of one answer, in order, each a
`GenerateContentResponse` as the API streams it (camelCase), the finish in a trailing
chunk as the API sends it (docs/gemini.md). Add a cassette by adding a function, run this
script, then `pytest --snapshot-update` and review the new snapshot like code.

(There is no builder for Gemini's chunks: `chunk`, `text`, `call` and `finish` below are
all a recipe needs.)
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness import make_header, write_cassette

PROVIDER = "gemini"
MODEL = "gemini-2.5-flash"
RESPONSE_ID = "HarnessSyntheticResponse"

Lines = list[dict[str, Any]]
Recipe = Callable[[], Lines]

#: relative path -> (description, request or None, recipe), in writing order.
LIBRARY: dict[str, tuple[str, dict[str, Any] | None, Recipe]] = {}


def cassette(
    path: str, description: str, request: dict[str, Any] | None = None
) -> Callable[[Recipe], Recipe]:
    """Register a recipe under `path` (relative to the library folder), with the request
    body its header keeps, if any."""

    def register(recipe: Recipe) -> Recipe:
        LIBRARY[path] = (description, request, recipe)
        return recipe

    return register


def usage(prompt: int, answer: int) -> dict[str, int]:
    return {
        "promptTokenCount": prompt,
        "candidatesTokenCount": answer,
        "totalTokenCount": prompt + answer,
    }


def chunk(*parts: dict[str, Any], answer: int = 1, **candidate: Any) -> dict[str, Any]:
    """One chunk carrying candidate 0 with `parts` (none: no `content`), its other fields
    (`finishReason`), the usage so far and the model's version, as the API sends each."""
    first: dict[str, Any] = {}
    if parts:
        first["content"] = {"parts": list(parts), "role": "model"}
    first.update(candidate)
    first["index"] = 0
    return {
        "candidates": [first],
        "usageMetadata": usage(12, answer),
        "modelVersion": MODEL,
        "responseId": RESPONSE_ID,
    }


def text(value: str, **part: Any) -> dict[str, Any]:
    return {"text": value, **part}


def call(name: str, args: Any = None, **fields: Any) -> dict[str, Any]:
    """A whole function call part (`args` left out when None)."""
    found: dict[str, Any] = {"name": name}
    if args is not None:
        found["args"] = args
    return {"functionCall": {**found, **fields}}


def finish(reason: str = "STOP", answer: int = 9) -> dict[str, Any]:
    """The API's trailing chunk: an empty text part, the finish reason, the usage."""
    return chunk(text(""), answer=answer, finishReason=reason)


WEATHER = {"city": "Paris", "unit": "celsius"}


# The answers the default reads ------------------------------------------------------------


@cassette(
    "text.jsonl",
    "A plain answer in three text chunks, then STOP in a trailing chunk with an empty text "
    "part (as the API ends a turn).",
)
def text_only() -> Lines:
    return [
        chunk(text("Paris is "), answer=2),
        chunk(text("the capital "), answer=4),
        chunk(text("of France."), answer=6),
        finish(answer=6),
    ]


@cassette(
    "one_tool.jsonl",
    "One function call without an id (read as call_0), with its thoughtSignature, then "
    "STOP: the call comes out at the finish, then done.",
)
def one_tool() -> Lines:
    return [
        chunk({**call("get_weather", WEATHER), "thoughtSignature": "EtABCs0BAb4+"}, answer=8),
        finish(answer=8),
    ]


@cassette(
    "parallel_tools.jsonl",
    "Two function calls with the API's ids in one chunk, a third without an id (call_2) "
    "in the next, then STOP: three calls in answer order.",
)
def parallel_tools() -> Lines:
    return [
        chunk(text("Checking both cities."), answer=4),
        chunk(
            call("get_weather", WEATHER, id="c9bjmkfz"),
            call("get_weather", {"city": "Rome", "unit": "celsius"}, id="q2wd8s1x"),
            answer=20,
        ),
        chunk(call("get_time", {"timezone": "Europe/Rome"}), answer=28),
        finish(answer=28),
    ]


@cassette(
    "zero_argument_tool.jsonl",
    "A function call without args (the API leaves them out): read as {}, then STOP.",
)
def zero_argument_tool() -> Lines:
    return [chunk(call("get_country"), answer=3), finish(answer=3)]


@cassette(
    "streamed_arguments.jsonl",
    "A call streamed as Vertex's streamFunctionCallArguments sends it: opened with "
    "willContinue, its args set by partialArgs pieces (a string in two pieces, a number, "
    "a list's element), closed by {}; then STOP.",
)
def streamed_arguments() -> Lines:
    opened = {"name": "plan_trip", "willContinue": True}
    pieces = [
        {"jsonPath": "$.city", "stringValue": "Par", "willContinue": True},
        {"jsonPath": "$.city", "stringValue": "is"},
        {"jsonPath": "$.days", "numberValue": 3},
        {"jsonPath": "$.stops[0].name", "stringValue": "Louvre"},
    ]
    return [
        chunk({"functionCall": opened}, answer=2),
        chunk({"functionCall": {"partialArgs": pieces[:2], "willContinue": True}}, answer=6),
        chunk({"functionCall": {"partialArgs": pieces[2:], "willContinue": True}}, answer=10),
        chunk({"functionCall": {}}, answer=10),
        finish(answer=10),
    ]


@cassette(
    "thinking.jsonl",
    "Thought parts (thought: true, a thoughtSignature) passed over, then the answer's text "
    "and STOP.",
)
def thinking() -> Lines:
    return [
        chunk(text("The user asks for a capital.", thought=True), answer=6),
        chunk(text("Paris.", thoughtSignature="EtABCs0BAb4+"), answer=8),
        finish(answer=8),
    ]


@cassette(
    "code_execution.jsonl",
    "Code the server ran (executableCode, codeExecutionResult) passed over as server tools "
    "are, a chunk with usage alone, then the answer's text and STOP.",
)
def code_execution() -> Lines:
    code = {"language": "PYTHON", "code": "print(2 ** 10)"}
    result = {"outcome": "OUTCOME_OK", "output": "1024\n"}
    return [
        chunk({"executableCode": code}, answer=8),
        chunk({"codeExecutionResult": result}, answer=8),
        {"usageMetadata": usage(12, 8), "modelVersion": MODEL, "responseId": RESPONSE_ID},
        chunk(text("2 to the 10th is 1024."), answer=16),
        finish(answer=16),
    ]


@cassette(
    "finish_without_parts.jsonl",
    "A call, then the finish in a chunk whose content has a role and no parts (as the API "
    "ends a call's turn): the call comes out at the finish, then done.",
)
def finish_without_parts() -> Lines:
    ended = chunk(answer=8, finishReason="STOP")
    ended["candidates"][0]["content"] = {"role": "model"}
    return [chunk(call("get_weather", WEATHER), answer=8), ended]


@cassette(
    "finish_without_content.jsonl",
    "Text, then the finish in a chunk with no content at all (finishReason and usage "
    "alone), as the API may end a turn whose text came before: done.",
)
def finish_without_content() -> Lines:
    return [
        chunk(text("Paris is the capital of France."), answer=6),
        chunk(answer=6, finishReason="STOP"),
    ]


@cassette(
    "grounded_search.jsonl",
    "An answer grounded in Google Search: the groundingMetadata (the queries first, the "
    "sources and supports on the finish) and urlContextMetadata passed over, the text read.",
)
def grounded_search() -> Lines:
    queries = {"webSearchQueries": ["capital of France"]}
    sources = {
        **queries,
        "groundingChunks": [{"web": {"uri": "https://example.org/france", "title": "france"}}],
        "groundingSupports": [
            {
                "segment": {
                    "startIndex": 0,
                    "endIndex": 31,
                    "text": "Paris is the capital of France.",
                },
                "groundingChunkIndices": [0],
            }
        ],
    }
    urls = {
        "urlMetadata": [
            {
                "retrievedUrl": "https://example.org/france",
                "urlRetrievalStatus": "URL_RETRIEVAL_STATUS_SUCCESS",
            }
        ]
    }
    return [
        chunk(text("Paris is "), answer=2, groundingMetadata=queries),
        chunk(text("the capital of France."), answer=8),
        chunk(
            text(""),
            answer=8,
            finishReason="STOP",
            groundingMetadata=sources,
            urlContextMetadata=urls,
        ),
    ]


# One cassette per row of the error table --------------------------------------------------


@cassette(
    "errors/multiple_candidates.jsonl",
    "The first chunk carries candidate 1 beside candidate 0 (as candidateCount 2 sends): "
    "only candidate 0 is read, so multiple_candidates.",
)
def multiple_candidates() -> Lines:
    first = chunk(text("Paris"), answer=2)
    first["candidates"].append({**first["candidates"][0], "index": 1})
    return [first, finish()]


@cassette(
    "errors/missing_finish_reason.jsonl",
    "Two text chunks and no finishReason: the stream ends unfinished, missing_finish_reason.",
)
def missing_finish_reason() -> Lines:
    return [chunk(text("Paris is "), answer=2), chunk(text("the capital"), answer=4)]


@cassette(
    "errors/unsupported_finish_reason.jsonl",
    "The answer cut at maxOutputTokens (finishReason MAX_TOKENS): not accepted by "
    "default, unsupported_finish_reason.",
)
def unsupported_finish_reason() -> Lines:
    return [chunk(text("Paris is the"), answer=3), finish("MAX_TOKENS", answer=3)]


@cassette(
    "errors/unsupported_finish_reason_malformed_call.jsonl",
    "A call the model wrote that did not parse: the API sends MALFORMED_FUNCTION_CALL "
    "without content; unsupported_finish_reason.",
)
def unsupported_finish_reason_malformed_call() -> Lines:
    ended = chunk(answer=5, finishReason="MALFORMED_FUNCTION_CALL")
    return [ended]


@cassette(
    "errors/chunk_after_finish.jsonl",
    "Text after the finish chunk: chunk_after_finish.",
)
def chunk_after_finish() -> Lines:
    return [chunk(text("Paris."), answer=2), finish(answer=2), chunk(text(" And more."))]


@cassette(
    "errors/prompt_blocked.jsonl",
    "The prompt blocked: promptFeedback.blockReason SAFETY and no candidates, prompt_blocked.",
)
def prompt_blocked() -> Lines:
    feedback = {"blockReason": "SAFETY"}
    return [{"promptFeedback": feedback, "usageMetadata": usage(12, 0), "modelVersion": MODEL}]


@cassette(
    "errors/unnamed_function_call.jsonl",
    "A whole function call without a name: unnamed_function_call.",
)
def unnamed_function_call() -> Lines:
    return [chunk({"functionCall": {"args": WEATHER}}, answer=8), finish(answer=8)]


@cassette(
    "errors/non_object_tool_input.jsonl",
    "A function call whose args are a list, not an object: non_object_tool_input.",
)
def non_object_tool_input() -> Lines:
    return [chunk(call("get_weather", ["Paris"]), answer=8), finish(answer=8)]


@cassette(
    "errors/orphan_partial_args.jsonl",
    "partialArgs with no streamed call open: orphan_partial_args.",
)
def orphan_partial_args() -> Lines:
    piece = {"jsonPath": "$.city", "stringValue": "Paris"}
    return [chunk({"functionCall": {"partialArgs": [piece]}}, answer=4), finish(answer=4)]


@cassette(
    "errors/overlapping_function_call.jsonl",
    "A second named call while a streamed one is still open: overlapping_function_call.",
)
def overlapping_function_call() -> Lines:
    return [
        chunk({"functionCall": {"name": "plan_trip", "willContinue": True}}, answer=2),
        chunk(call("get_weather", WEATHER), answer=8),
        finish(answer=8),
    ]


@cassette(
    "errors/unfinished_function_call.jsonl",
    "A streamed call still open at the finish (no closing functionCall): unfinished_function_call.",
)
def unfinished_function_call() -> Lines:
    piece = {"jsonPath": "$.city", "stringValue": "Paris"}
    return [
        chunk({"functionCall": {"name": "plan_trip", "willContinue": True}}, answer=2),
        chunk({"functionCall": {"partialArgs": [piece], "willContinue": True}}, answer=4),
        finish(answer=4),
    ]


@cassette(
    "errors/bad_json_path.jsonl",
    "A partialArgs piece whose jsonPath indexes past the end of a list: bad_json_path.",
)
def bad_json_path() -> Lines:
    piece = {"jsonPath": "$.stops[1].name", "stringValue": "Louvre"}
    return [
        chunk({"functionCall": {"name": "plan_trip", "willContinue": True}}, answer=2),
        chunk({"functionCall": {"partialArgs": [piece]}}, answer=4),
        finish(answer=4),
    ]


@cassette(
    "errors/server_error.jsonl",
    'The API\'s error mid-stream, an {"error": ...} chunk (INTERNAL) after the first text '
    "chunk: google-genai raises it, replay reports api_error:INTERNAL.",
)
def server_error() -> Lines:
    error = {"code": 500, "message": "Internal error encountered.", "status": "INTERNAL"}
    return [chunk(text("Paris is "), answer=2), {"error": error}]


def generate(folder: Path) -> list[Path]:
    """Write every cassette under `folder`; return their paths, in order."""
    written = []
    for name, (description, request, recipe) in LIBRARY.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        header = make_header(
            description, "synthetic", request=request, provider=PROVIDER, model=MODEL
        )
        write_cassette(path, recipe(), header=header)
        written.append(path)
    return written


def main(argv: list[str]) -> int:
    folder = Path(argv[0]) if argv else Path(__file__).resolve().parent
    for path in generate(folder):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
