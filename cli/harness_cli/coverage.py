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
cassettes reach it, and which. Exit status: 0 every code is reached; 1 a code is
reached by none; 2 a cassette is unusable (PATH:LINE: reason on stderr)."""


@click.command(epilog=EXAMPLES)
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
def coverage(paths: tuple[str, ...]) -> None:
    """Table of the error codes against the cassettes that reach them."""
    from harness._testing.coverage import measure_coverage

    files = expand_paths(paths)
    if not files:
        click.echo(f"{', '.join(paths)}: no *.jsonl cassettes found", err=True)
        sys.exit(Exit.UNUSABLE)
    report = measure_coverage(files)
    for line in report.render():
        click.echo(printable(line))
    for error in report.unusable:
        click.echo(printable(str(error)), err=True)
    sys.exit(Exit.UNUSABLE if report.unusable else Exit.FAILED if report.missing else Exit.OK)
