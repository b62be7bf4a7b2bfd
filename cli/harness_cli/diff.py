"""`harness diff`: compare what two cassettes replay to."""

from __future__ import annotations

import shlex
import sys

import click

from harness._exceptions import CassetteError
from harness._terminal import printable
from harness_cli.exit import Exit

EXAMPLES = """\b
Examples:
  harness diff old-recording.jsonl new-recording.jsonl
  harness diff --ignore-ids cassettes/interleaved.jsonl rerecorded.jsonl
  harness diff --trace cassettes/interleaved.jsonl broken.jsonl   # where they part

Compares the outcomes (events, then the error), not the raw lines: a re-recording
that chunks text differently shows up, a changed ping does not. Exit status: 0 same
outcome; 1 different (a unified diff of the JSON lines is printed); 2 a cassette is
unusable (PATH:LINE: reason on stderr). With --trace, both traces (as harness replay
--trace prints them) side by side instead, up to the first row where they differ (!)."""


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
    from harness._testing.diff import diff_outcomes, trace_sides

    try:
        result = diff_outcomes(a, b, ignore_ids=ignore_ids)
        sides = trace_sides(a, b, ignore_ids=ignore_ids) if show_trace else None
    except CassetteError as error:
        click.echo(printable(str(error)), err=True)
        sys.exit(Exit.UNUSABLE)
    shown_a, shown_b = printable(a), printable(b)
    if result.same:
        click.echo(f"same outcome: {len(result.a)} lines, ending in {result.a_code}")
    else:
        click.echo(
            f"outcomes differ: {shown_a} ends in {result.a_code}, {shown_b} in {result.b_code}"
        )
    if sides is not None:
        lines, agree = sides
        for line in lines:
            click.echo(line)
        if agree:
            click.echo("the traces agree row for row")
    elif not result.same:
        for line in result.diff:
            click.echo(line)
        click.echo(printable(_hint(a, b, ignore_ids)))
    sys.exit(Exit.OK if result.same else Exit.FAILED)
