"""`harness replay` and `harness validate`: parse arguments, call the library, print."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from typing import IO, Any

import click

from harness._cassette.codec import (
    Cassette,
    CassetteLine,
    expand_paths,
    live_api_warnings,
    pass_over,
    schema,
)
from harness._exceptions import CassetteError, InputError
from harness._hosts import HOSTS
from harness._replay.calls import Call, call_events, played
from harness._terminal import json_text, printable
from harness._testing.rules import RuleCheck
from harness_cli.exit import Exit

#: `--timeout`: the replayed client's read timeout, seconds. Far shorter than the SDK's
#: own 600 s, so that the `stall` fault (a 601 s silence) ends within seconds either way.
DEFAULT_TIMEOUT = 10.0


def readable(line: dict[str, Any]) -> str:
    """One readable line for an event or failure in its JSON form; nothing from the
    cassette reaches the terminal unescaped (`harness._terminal`)."""
    kind = line["type"]
    if kind == "text":
        return f"text        {json_text(line['text'])}"
    if kind == "tool_call":
        call = line["call"]
        name, ident = printable(str(call["name"])), printable(str(call["id"]))
        return f"tool_call   {name} {ident} {json_text(call['input'])}"
    if kind == "done":
        return "done"
    if kind == "protocol_error":
        return f"error       {line['code']}: {printable(str(line['message']))}"
    error_type, message = printable(str(line["error_type"])), printable(str(line["message"]))
    return f"{kind:<11} {error_type}: {message}"


def _outcome_lines(cassette: Cassette | Call, wire: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """JSON lines of a replay, streamed: events as they come, then the failure if any.
    Direct replay hands nothing of the SDK on, so it never imports it (`sdk_objects`).
    A `Call` is a session's turns the SDK retries through, played as one (`call_events`)."""
    from harness._events import event_to_json
    from harness._replay.direct import failure_to_json, is_stream_failure, replay

    try:
        if isinstance(cassette, Call):
            events = call_events(cassette, via=wire["via"], read_timeout=wire["read_timeout"])
        elif wire["via"] == "sdk":
            from harness._replay.sdk import replay_events

            sdk_wire = {key: value for key, value in wire.items() if key != "profile"}
            events = replay_events(cassette, **sdk_wire)
        else:
            events = replay(
                cassette,
                realtime=wire["realtime"],
                sdk_objects=False,
                read_timeout=wire["read_timeout"],
                profile=wire["profile"],
            )
        for event in events:
            yield event_to_json(event)
    except Exception as error:
        if not is_stream_failure(error):
            raise
        yield failure_to_json(error)


def _write_outcome(
    out: IO[str],
    cassette: Cassette | Call,
    output_format: str,
    label: str | None,
    wire: dict[str, Any],
) -> bool:
    """Print a replay's lines (JSON ones naming `label`, if given); whether the stream failed."""
    failed = False
    for line in _outcome_lines(cassette, wire):
        failed = line["type"] in ("protocol_error", "api_error", "connection_error")
        if output_format == "json":
            if label is not None:
                line = {**line, "cassette": label}
            out.write(json_text(line) + "\n")
        else:
            out.write(readable(line) + "\n")
    return failed


def _write_trace(
    out: IO[str], cassette: Cassette, output_format: str, label: str | None, wire: dict[str, Any]
) -> bool:
    """Print a replay's trace, a row as it is reached (JSON rows naming `label`, if given);
    whether the stream failed. Paced and timed out as direct replay is (`wire`)."""
    from harness._replay.plan import RealtimePacer
    from harness._testing.trace import HEADER, format_row, trace

    pacer = RealtimePacer() if wire["realtime"] else pass_over
    rows = trace(cassette, pacer, sdk_objects=False, read_timeout=wire["read_timeout"])
    if output_format == "text":
        out.write(HEADER + "\n")
    failed = False
    for row in rows:
        failed = row.error is not None
        if output_format == "json":
            shown = row.to_json()
            if label is not None:
                shown["cassette"] = label
            out.write(json_text(shown) + "\n")
        else:
            out.write("".join(line + "\n" for line in format_row(row)))
    return failed


def _write_call_trace(out: IO[str], call: Call, output_format: str, wire: dict[str, Any]) -> bool:
    """Print the trace of each turn of a call: the answers the SDK retries through, each
    marked so, then the turn it plays, whose trace says whether the stream failed (as the
    call's replay does). JSON rows name their turn's file."""
    failed = False
    for path in call.turns:
        if output_format == "text":
            retried = "  (an answer the SDK retries)" if path != call.played else ""
            out.write(f"-- {printable(os.path.basename(path))}{retried}\n")
        failed = _write_trace(out, Cassette(path), output_format, path, wire)
    return failed


def _report_unusable(error: CassetteError) -> None:
    click.echo(printable(str(error)), err=True)


EXAMPLES = """\b
Examples:
  harness replay cassettes/interleaved.jsonl
  harness replay --format json cassettes/errors/orphan_json_delta.jsonl
  harness replay cassettes/            # every *.jsonl below, sorted
  harness replay --via sdk --chunk-size 7 cassettes/   # through a real SDK client
  harness replay --via sdk --host bedrock cassettes/two_tools.jsonl   # AnthropicBedrock
  harness replay --realtime recorded.jsonl            # at the recorded pace
  curl -s https://example.org/rec.jsonl | harness replay -   # - is standard input
  harness replay --trace broken/interleaved.drop_tool_stop.jsonl   # where it broke

--trace prints one row a line of the cassette: its line number, the tool blocks open
after it, the event (start(i), delta(i), stop(i) for block events) and what it emitted;
the row where a rule fires carries the error, and the trace stops there.

A path is read once, so pipes, FIFOs and /dev/stdin work; a line longer than 8 MiB
is refused (PATH:LINE). Printed text escapes control characters (as \\u001b).
Exit status: 0 every stream ended in done; 1 a stream ended in a protocol or API
error; 2 a cassette is unusable (PATH:LINE: reason on stderr)."""


@click.command(epilog=EXAMPLES)
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="text: one readable line an event; json: one JSON object a line.",
)
@click.option(
    "--via",
    type=click.Choice(["direct", "sdk"]),
    default="direct",
    show_default=True,
    help="direct: build the SDK's event objects from the lines; sdk: send the lines as SSE "
    "bytes through a real client of the SDK the cassette's provider is read with "
    "(in-process, no socket).",
)
@click.option(
    "--host",
    type=click.Choice(["direct", *HOSTS]),
    help="With --via sdk: the client of the cassette's dialect on this host reads it "
    "(bedrock: AnthropicBedrock, Bedrock's event-stream frames; vertex: AnthropicVertex). "
    "Default: the host the cassette's header names, else direct.",
)
@click.option(
    "--chunk-size",
    type=click.IntRange(min=1),
    help="With --via sdk: cut the byte stream into chunks of N bytes (with --chunk-seed: "
    "random lengths 1..N).",
)
@click.option(
    "--chunk-seed",
    type=int,
    help="With --via sdk: random chunk lengths (1..--chunk-size, default 16) from this seed.",
)
@click.option(
    "--realtime",
    is_flag=True,
    help='Sleep until each recorded arrival offset ({"harness": "at"} lines).',
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=DEFAULT_TIMEOUT,
    show_default=True,
    metavar="SECONDS",
    help="The client's read timeout: a stall longer than it ends in "
    "connection_error ReadTimeout (at once directly; after SECONDS with --via sdk).",
)
@click.option(
    "--trace",
    "show_trace",
    is_flag=True,
    help="Print the adapter's timeline: a row a line, the open tool blocks after it, what "
    "it emitted, the error where a rule fired (direct replay only).",
)
@click.option(
    "--profile",
    metavar="NAME",
    help="Read Chat Completions cassettes under a compatible server's profile (vllm, "
    "ollama, gemini, ...: docs/profiles.md): the deviations it tolerates read into "
    "OpenAI's form. Default: openai, OpenAI's own API. Direct replay only.",
)
def replay(
    paths: tuple[str, ...],
    output_format: str,
    via: str,
    host: str | None,
    chunk_size: int | None,
    chunk_seed: int | None,
    realtime: bool,
    timeout: float,
    show_trace: bool,
    profile: str | None,
) -> None:
    """Replay cassettes (files, or folders of *.jsonl) through the adapter."""
    if via != "sdk" and (chunk_size is not None or chunk_seed is not None):
        option = "--chunk-size" if chunk_size is not None else "--chunk-seed"
        raise click.UsageError(f"{option} needs --via sdk (only the SDK path reads bytes)")
    if via != "sdk" and host is not None:
        raise click.UsageError("--host needs --via sdk (a host's client reads the bytes)")
    if show_trace and via != "direct":
        raise click.UsageError("--trace replays directly: it does not combine with --via sdk")
    if profile is not None:
        if via != "direct" or show_trace:
            raise click.UsageError("--profile replays directly: not with --via sdk or --trace")
        from harness._providers import check_profile

        try:
            check_profile(profile)
        except ValueError as error:
            raise click.UsageError(str(error)) from None
    from harness._replay.plan import Chunking

    wire = {
        "profile": profile,
        "via": via,
        "host": host,
        "chunking": Chunking(chunk_size, chunk_seed),
        "realtime": realtime,
        "read_timeout": timeout,
    }
    files = played(expand_paths(paths))
    several = len(files) > 1
    out: IO[str] = sys.stdout
    status = Exit.OK
    for path in files:
        label = path.played if isinstance(path, Call) else path
        shown_label = label if several else None
        if several and output_format == "text":
            out.write(f"== {printable(label)}{_retried_note(path)}\n")
        try:
            if isinstance(path, Call) and profile is not None:
                raise ValueError("--profile replays single answers: not a retried call")
            if isinstance(path, Call):  # a session's turns the SDK retries through: one call
                if show_trace:
                    failed = _write_call_trace(out, path, output_format, wire)
                else:
                    failed = _write_outcome(out, path, output_format, shown_label, wire)
                status = max(status, Exit.FAILED) if failed else status
                continue
            cassette = Cassette(path)
            if show_trace:
                failed = _write_trace(out, cassette, output_format, shown_label, wire)
            else:
                failed = _write_outcome(out, cassette, output_format, shown_label, wire)
            if failed:
                status = max(status, Exit.FAILED)
        except CassetteError as error:
            out.flush()
            _report_unusable(error)
            status = Exit.UNUSABLE
        except ValueError as error:  # a profile for a provider that has none
            if profile is None or isinstance(error, InputError):
                raise
            out.flush()
            click.echo(f"{printable(label)}: {error}", err=True)
            status = Exit.UNUSABLE
    if not files:
        click.echo(f"{', '.join(paths)}: no *.jsonl cassettes found", err=True)
        status = Exit.UNUSABLE
    sys.exit(status)


def _retried_note(entry: str | Call) -> str:
    """What a heading says of the answers a call retries through."""
    if isinstance(entry, str) or not entry.retried:
        return ""
    names = ", ".join(printable(os.path.basename(path)) for path in entry.retried)
    return f"  (after {names}, which the SDK retries)"


VALIDATE_EXAMPLES = """\b
Examples:
  harness validate cassettes/
  harness validate my-recording.jsonl
  generate-cassette | harness validate -     # - is standard input

Exit status: 0 every cassette matches the schema (a line the live API would not send,
such as a block index gap, is a warning: PATH:LINE: warning: reason); 2 otherwise
(PATH:LINE: reason)."""


class _Counted:
    """Cassette lines passed through, their events counted."""

    def __init__(self, lines: Iterator[CassetteLine]) -> None:
        self._lines = lines
        self.events = 0

    def __iter__(self) -> Iterator[CassetteLine]:
        for line in self._lines:
            self.events += line.kind == "event"
            yield line


@click.command(epilog=VALIDATE_EXAMPLES)
@click.argument("paths", nargs=-1, metavar="PATH...")
@click.option(
    "--schema",
    "print_schema",
    is_flag=True,
    help="Print the whole cassette schema (every provider's event lines) and exit.",
)
def validate(paths: tuple[str, ...], print_schema: bool) -> None:
    """Check cassettes against the cassette schema (no replay, no SDK import)."""
    if print_schema:
        click.echo(json.dumps(schema(), indent=2))
        return
    if not paths:
        raise click.UsageError("give a cassette PATH to check, or --schema")
    files = expand_paths(paths)
    status = Exit.OK
    for path in files:
        try:
            cassette = Cassette(path)
            # one pass: standard input reads once; the rules see every line the count does
            check = RuleCheck(cassette, cassette.lines())
            counted = _Counted(iter(check))
            warnings = list(live_api_warnings(counted, cassette.provider))
            refused = check.warning()
            if refused is not None:
                warnings = sorted([*warnings, refused], key=lambda warning: warning[0])
        except CassetteError as error:
            _report_unusable(error)
            status = Exit.UNUSABLE
        else:
            shown = printable(cassette.path)
            for number, reason in warnings:
                click.echo(f"{shown}:{number}: warning: {reason}", err=True)
            click.echo(f"{shown}: ok, {counted.events} events")
    if not files:
        click.echo(f"{', '.join(paths)}: no *.jsonl cassettes found", err=True)
        status = Exit.UNUSABLE
    sys.exit(status)
