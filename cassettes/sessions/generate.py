"""Write the example agent sessions (session.json and turn cassettes) with StreamBuilder.

Run from the repository root: `.venv/bin/python cassettes/sessions/generate.py`.
The files each session's tools read live in `<session>/files/` and are kept by hand.
"""

from __future__ import annotations

from pathlib import Path

from harness.agent.session import write_session
from harness.builder import StreamBuilder

HERE = Path(__file__).resolve().parent
SYSTEM = "You are a careful assistant. Use the read tool to look at files."


def read_notes() -> None:
    turn_1 = (
        StreamBuilder(message_id="msg_01ReadNotesTurn1")
        .text(0, "I'll read", " the release notes.")
        .tool(1, "read", {"path": "notes.md"}, pieces=3, id="toolu_01ReadNotesMd")
        .stop("tool_use")
    )
    turn_2 = (
        StreamBuilder(message_id="msg_01ReadNotesTurn2")
        .text(0, "Release 0.2 adds", " session replay and", " fixes the ping handling.")
        .stop("end_turn")
    )
    write_session(
        HERE / "read-notes",
        [
            ("read-notes turn 1: text, then one read call", turn_1),
            ("read-notes turn 2: the final answer", turn_2),
        ],
        prompt="What changed in release 0.2? See notes.md.",
        system=SYSTEM,
        max_turns=4,
    )


def compare_configs() -> None:
    turn_1 = (
        StreamBuilder(message_id="msg_01CompareTurn1")
        .text(0, "Reading both configs at once.")
        .tool(1, "read", {"path": "config/dev.toml"}, pieces=2, id="toolu_01CompareDev")
        .tool(2, "read", {"path": "config/prod.toml"}, pieces=2, id="toolu_01CompareProd")
        .stop("tool_use")
    )
    turn_2 = (
        StreamBuilder(message_id="msg_01CompareTurn2")
        .tool(0, "read", {"path": "config/staging.toml"}, id="toolu_01CompareStaging")
        .stop("tool_use")
    )
    turn_3 = (
        StreamBuilder(message_id="msg_01CompareTurn3")
        .text(0, "dev uses 2 workers and debug logging; prod uses 16 workers.")
        .text(1, " No staging config.")
        .stop("end_turn")
    )
    write_session(
        HERE / "compare-configs",
        [
            ("compare-configs turn 1: two read calls in one turn", turn_1),
            ("compare-configs turn 2: a read of a missing file", turn_2),
            ("compare-configs turn 3: the answer after a tool error", turn_3),
        ],
        prompt="Compare the dev, prod and staging configs in config/.",
        system=SYSTEM,
        max_turns=5,
    )


def aborted_answer() -> None:
    turn_1 = (
        StreamBuilder(message_id="msg_01AbortedTurn1")
        .tool(0, "read", {"path": "notes.md"}, id="toolu_01AbortedRead")
        .stop("tool_use")
    )
    turn_2 = (
        StreamBuilder(message_id="msg_01AbortedTurn2")
        .block_start(0, {"type": "text", "text": ""})
        .text_delta(0, "The notes say")
        .directive("abort")
        .text_delta(0, " that release 0.2")
        .block_stop(0)
        .stop("end_turn")
    )
    write_session(
        HERE / "aborted-answer",
        [
            ("aborted-answer turn 1: one read call", turn_1),
            ("aborted-answer turn 2: the user aborts mid-answer (abort directive)", turn_2),
        ],
        prompt="Summarise notes.md.",
        system=SYSTEM,
        max_turns=4,
    )


if __name__ == "__main__":
    read_notes()
    compare_configs()
    aborted_answer()
