"""`harness diff`: compare what two cassettes replay to."""

from __future__ import annotations

import shlex
import sys
from typing import NoReturn

import click

from harness._cassette.codec import Cassette
from harness._exceptions import CassetteError
from harness._terminal import printable
from harness_cli.exit import Exit

EXAMPLES = """\b
Examples:
  harness diff old-recording.jsonl new-recording.jsonl
  harness diff --ignore-ids cassettes/interleaved.jsonl rerecorded.jsonl
  harness diff --trace cassettes/interleaved.jsonl broken.jsonl   # where they part

Compares the outcomes (events, then the error), not the raw lines: a re-recording
that chunks text differently shows up, a changed ping does not. Both cassettes are
of one provider, whichever it is. Exit status: 0 same outcome;
1 different (a unified diff of the JSON lines is printed); 2 a cassette is unusable,
or the two are of different providers (PATH:LINE: reason on stderr). With --trace,
both traces (as harness replay --trace prints them) side by
side instead, up to the first row where they differ (!)."""


def _hint(a: str, b: str, ignore_ids: bool) -> str:
    """The command that shows where the two streams part."""
    option = " --ignore-ids" if ignore_ids else ""
    return f"trace: harness diff --trace{option} {shlex.quote(a)} {shlex.quote(b)}"


@click.command(epilog=EXAMPLES)
@click.argument("a", metavar="A")
@click.argument("b", metavar="B")
@click.option(
    "--ignore-ids", is_flag=True, help="Compare tool calls by position, not by their ids."
)
@click.option(
    "--trace",
    "show_trace",
    is_flag=True,
    help="Print both traces side by side, up to the first row where they differ.",
)
def diff(a: str, b: str, ignore_ids: bool, show_trace: bool) -> None:
    """Compare two cassettes' outcomes; print a unified diff when they differ."""
    try:
        if show_trace:
            _diff_traces(a, b, ignore_ids)
        from harness._testing.diff import diff_outcomes

        result = diff_outcomes(a, b, ignore_ids=ignore_ids)
    except CassetteError as error:
        sys.stdout.flush()
        click.echo(printable(str(error)), err=True)
        sys.exit(Exit.UNUSABLE)
    _verdict(a, b, result.same, result.a_code, result.b_code, len(result.a))
    if not result.same:
        for line in result.diff:
            click.echo(line)
        click.echo(printable(_hint(a, b, ignore_ids)))
    sys.exit(Exit.OK if result.same else Exit.FAILED)


def _diff_traces(a: str, b: str, ignore_ids: bool) -> NoReturn:
    """`--trace`: the verdict, then both traces side by side, a row printed as soon as it
    is read: neither stream is held, however long (each is read twice, a pipe spooled)."""
    from harness._testing.diff import match_outcomes, one_provider, trace_sides

    sources = Cassette(a), Cassette(b)
    one_provider(*sources)
    match = match_outcomes(*sources, ignore_ids=ignore_ids)
    _verdict(a, b, match.same, match.a_code, match.b_code, match.a_count)
    sides = trace_sides(*sources, (a, b), ignore_ids=ignore_ids)
    for line in sides:
        click.echo(line)
    if sides.agree:
        click.echo("the traces agree row for row")
    sys.exit(Exit.OK if match.same else Exit.FAILED)


def _verdict(a: str, b: str, same: bool, a_code: str, b_code: str, lines: int) -> None:
    if same:
        click.echo(f"same outcome: {lines} lines, ending in {a_code}")
    else:
        click.echo(f"outcomes differ: {printable(a)} ends in {a_code}, {printable(b)} in {b_code}")
