"""`harness agent`: replay a recorded session through the agent loop and print the transcript."""

from __future__ import annotations

import asyncio
import sys
from typing import Any, NoReturn

import click

from harness._exceptions import CassetteError
from harness._terminal import json_text, printable
from harness_cli.exit import Exit

EXAMPLES = """\b
Examples:
  harness agent cassettes/sessions/read-notes --root cassettes/sessions/read-notes/files
  harness agent cassettes/sessions/read-notes --root cassettes/sessions/read-notes/files \\
      --format json
  harness agent tests/data/agent_sessions/openai-chat/read-notes \\
      --root cassettes/sessions/read-notes/files

Exit status: 0 the conversation completed; 1 a turn failed (protocol or API error,
an empty turn), it was aborted, or max_turns was reached; 2 the session is unusable
(bad session.json or cassette, or the loop and the recording disagree)."""


@click.command(epilog=EXAMPLES)
@click.argument("session_dir", metavar="SESSION_DIR")
@click.option(
    "--root",
    required=True,
    type=click.Path(exists=True, file_okay=False),
    help="Folder the tools work in (the read tool refuses paths outside it).",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help='text: a readable transcript; json: {"stop_reason", "messages"} (Messages API shape).',
)
@click.option(
    "--realtime",
    is_flag=True,
    help='Pace each turn at its recorded arrival offsets ({"harness": "at"} lines).',
)
def agent(session_dir: str, root: str, output_format: str, realtime: bool) -> None:
    """Replay a session folder offline, running its tools for real under --root.

    Each turn is read through its cassette's provider, as its header names it (any
    provider's: docs/providers.md); the transcript is the loop's, whichever it is."""
    from harness.agent.loop import AgentFailed
    from harness.agent.messages import messages_to_api, render_transcript
    from harness.agent.session import ReplayError, SessionError, load_session, replay_session

    try:
        session = load_session(session_dir)
        result, _ = asyncio.run(replay_session(session, root, realtime=realtime))
    except (SessionError, CassetteError, ReplayError) as error:
        _unusable(error)
    except KeyboardInterrupt:  # e.g. a session whose stream hangs (the hang directive)
        click.echo("interrupted", err=True)
        sys.exit(Exit.INTERRUPTED)
    except AgentFailed as failed:
        if isinstance(failed.error, ReplayError | CassetteError):
            _unusable(failed.error)
        failure = _failure(failed.error)
        if output_format == "json":
            header = {"stop_reason": "error", "error": failure, "turn": failed.turn}
            _print_json({**header, "messages": messages_to_api(failed.messages)})
        else:
            click.echo("\n".join(render_transcript(failed.messages)))
            click.echo(f"error       turn {failed.turn}: {printable(str(failure['message']))}")
        sys.exit(Exit.FAILED)
    if output_format == "json":
        report: dict[str, Any] = {"stop_reason": result.stop_reason}
        if result.checkpoint is not None:
            report["checkpoint"] = str(result.checkpoint)
        _print_json({**report, "turns": result.turns, "messages": messages_to_api(result.messages)})
    else:
        click.echo("\n".join(render_transcript(result.messages)))
        where = f" at checkpoint {result.checkpoint}" if result.checkpoint else ""
        click.echo(f"stop_reason {result.stop_reason}{where} (turn {result.turns})")
    sys.exit(Exit.OK if result.stop_reason == "complete" else Exit.FAILED)


def _unusable(error: Exception) -> NoReturn:
    click.echo(printable(str(error)), err=True)
    sys.exit(Exit.UNUSABLE)


def _failure(error: Exception) -> dict[str, Any]:
    """The replay failure line for a protocol or API error; a `turn_error` for anything else.

    An OpenAI session's API error is an `APIErrorEvent` (its turns are read as dicts):
    the Anthropic SDK is imported only to know its own error type."""
    from harness._exceptions import APIErrorEvent, StreamProtocolError
    from harness._replay.direct import failure_to_json

    if isinstance(error, StreamProtocolError | APIErrorEvent):
        return failure_to_json(error)
    from anthropic import APIStatusError

    if isinstance(error, APIStatusError):
        return failure_to_json(error)
    return {"type": "turn_error", "message": f"{type(error).__name__}: {error}"}


def _print_json(data: dict[str, Any]) -> None:
    click.echo(json_text(data, indent=2))
