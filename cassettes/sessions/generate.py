"""Write the example agent sessions (session.json and turn cassettes) with StreamBuilder.

Run from the repository root: `.venv/bin/python cassettes/sessions/generate.py`.
The files each session's tools read live in `<session>/files/` and are kept by hand.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from harness.builder import StreamBuilder

HERE = Path(__file__).resolve().parent


def write_config(name: str, prompt: str, max_turns: int) -> Path:
    folder = HERE / name
    folder.mkdir(exist_ok=True)
    config = {
        "system": "You are a careful assistant. Use the read tool to look at files.",
        "prompt": prompt,
        "tools": ["read"],
        "max_turns": max_turns,
    }
    temporary = folder / ".session.json.tmp"
    temporary.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    os.replace(temporary, folder / "session.json")
    return folder


def read_notes() -> None:
    folder = write_config("read-notes", "What changed in release 0.2? See notes.md.", 4)
    (
        StreamBuilder(message_id="msg_01ReadNotesTurn1")
        .text(0, "I'll read", " the release notes.")
        .tool(1, "read", {"path": "notes.md"}, pieces=3, id="toolu_01ReadNotesMd")
        .stop("tool_use")
        .write(folder / "turn-01.jsonl", "read-notes turn 1: text, then one read call")
    )
    (
        StreamBuilder(message_id="msg_01ReadNotesTurn2")
        .text(0, "Release 0.2 adds", " session replay and", " fixes the ping handling.")
        .stop("end_turn")
        .write(folder / "turn-02.jsonl", "read-notes turn 2: the final answer")
    )


def compare_configs() -> None:
    folder = write_config(
        "compare-configs", "Compare the dev, prod and staging configs in config/.", 5
    )
    (
        StreamBuilder(message_id="msg_01CompareTurn1")
        .text(0, "Reading both configs at once.")
        .tool(1, "read", {"path": "config/dev.toml"}, pieces=2, id="toolu_01CompareDev")
        .tool(2, "read", {"path": "config/prod.toml"}, pieces=2, id="toolu_01CompareProd")
        .stop("tool_use")
        .write(folder / "turn-01.jsonl", "compare-configs turn 1: two read calls in one turn")
    )
    (
        StreamBuilder(message_id="msg_01CompareTurn2")
        .tool(0, "read", {"path": "config/staging.toml"}, id="toolu_01CompareStaging")
        .stop("tool_use")
        .write(folder / "turn-02.jsonl", "compare-configs turn 2: a read of a missing file")
    )
    (
        StreamBuilder(message_id="msg_01CompareTurn3")
        .text(
            0, "dev uses 2 workers and debug logging; prod uses 16 workers.", " No staging config."
        )
        .stop("end_turn")
        .write(folder / "turn-03.jsonl", "compare-configs turn 3: the answer after a tool error")
    )


def aborted_answer() -> None:
    folder = write_config("aborted-answer", "Summarise notes.md.", 4)
    (
        StreamBuilder(message_id="msg_01AbortedTurn1")
        .tool(0, "read", {"path": "notes.md"}, id="toolu_01AbortedRead")
        .stop("tool_use")
        .write(folder / "turn-01.jsonl", "aborted-answer turn 1: one read call")
    )
    (
        StreamBuilder(message_id="msg_01AbortedTurn2")
        .block_start(0, {"type": "text", "text": ""})
        .text_delta(0, "The notes say")
        .directive("abort")
        .text_delta(0, " that release 0.2")
        .block_stop(0)
        .stop("end_turn")
        .write(folder / "turn-02.jsonl", "aborted-answer turn 2: the user aborts mid-answer")
    )


if __name__ == "__main__":
    read_notes()
    compare_configs()
    aborted_answer()
