"""`harness diff`: compare what two cassettes replay to."""

from __future__ import annotations

import sys

import click

from harness._exceptions import CassetteError
from harness._terminal import printable
from harness_cli.exit import Exit

EXAMPLES = """\b
Examples:
  harness diff old-recording.jsonl new-recording.jsonl
  harness diff --ignore-ids cassettes/interleaved.jsonl rerecorded.jsonl

Compares the outcomes (events, then the error), not the raw lines: a re-recording
that chunks text differently shows up, a changed ping does not. Exit status: 0 same
outcome; 1 different (a unified diff of the JSON lines is printed); 2 a cassette is
unusable (PATH:LINE: reason on stderr)."""


@click.command(epilog=EXAMPLES)
@click.argument("a", metavar="A")
@click.argument("b", metavar="B")
@click.option(
    "--ignore-ids", is_flag=True, help="Compare tool calls by position, not by their ids."
)
def diff(a: str, b: str, ignore_ids: bool) -> None:
    """Compare two cassettes' outcomes; print a unified diff when they differ."""
    from harness._testing.diff import diff_outcomes

    try:
        result = diff_outcomes(a, b, ignore_ids=ignore_ids)
    except CassetteError as error:
        click.echo(printable(str(error)), err=True)
        sys.exit(Exit.UNUSABLE)
    if result.same:
        click.echo(f"same outcome: {len(result.a)} lines, ending in {result.a_code}")
        sys.exit(Exit.OK)
    a, b = printable(a), printable(b)
    click.echo(f"outcomes differ: {a} ends in {result.a_code}, {b} in {result.b_code}")
    for line in result.diff:
        click.echo(line)
    sys.exit(Exit.FAILED)
