"""`harness coverage`: which error codes a set of cassettes reaches."""

from __future__ import annotations

import sys

import click

from harness._cassette.codec import expand_paths
from harness._terminal import printable
from harness_cli.exit import Exit

EXAMPLES = """\b
Examples:
  harness coverage cassettes/
  harness coverage cassettes/errors/ my-recordings/

One row per code of the error table (then done, then any API error types): how many
cassettes reach it, and which; a table per provider present (a header's provider,
anthropic when none), each against its own codes. Exit status: 0 every code is
reached; 1 a code is reached by none; 2 a cassette is unusable (PATH:LINE: reason on
stderr)."""


@click.command(epilog=EXAMPLES)
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
def coverage(paths: tuple[str, ...]) -> None:
    """Table of the error codes against the cassettes that reach them."""
    from harness._testing.coverage import measure_coverages

    files = expand_paths(paths)
    if not files:
        click.echo(f"{', '.join(paths)}: no *.jsonl cassettes found", err=True)
        sys.exit(Exit.UNUSABLE)
    reports = measure_coverages(files)
    for number, report in enumerate(reports):
        if number:
            click.echo("")
        for line in report.render():
            click.echo(printable(line))
    unusable = [error for report in reports for error in report.unusable]
    for error in unusable:
        click.echo(printable(str(error)), err=True)
    missing = any(report.missing for report in reports)
    sys.exit(Exit.UNUSABLE if unusable else Exit.FAILED if missing else Exit.OK)
