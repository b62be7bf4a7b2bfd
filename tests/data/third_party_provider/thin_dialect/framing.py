"""The thin wire: each line is `data: <json>`; not streamed, the lines fold into one answer."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from harness._exceptions import APIErrorEvent
from harness._json import dump_line
from harness._providers.wire import Framing

ENDPOINT: Final = "/v1/thin"


def encode(line: dict[str, Any]) -> bytes:
    return b"data: " + dump_line(line) + b"\n\n"


def answer(lines: Iterable[dict[str, Any]]) -> dict[str, Any]:
    text, calls, reason = [], [], None
    for line in lines:
        if line.get("kind") == "error":
            raise APIErrorEvent({"error": line.get("error")}, 500)
        if line.get("kind") == "text":
            text.append(str(line.get("text", "")))
        elif line.get("kind") == "call":
            calls.append({key: line.get(key) for key in ("id", "name", "arguments")})
        elif line.get("kind") == "end":
            reason = line.get("reason")
    if reason is None:
        raise ValueError("the lines hold no end line")
    return {"text": "".join(text), "calls": calls, "reason": reason}


def error_answer(status: int, message: str) -> dict[str, Any]:
    return {"error": {"type": "thin_error", "message": message}}


FRAMING: Final = Framing(
    encode, answer, ("model", "input"), endpoints=(ENDPOINT,), error_answer=error_answer
)
