"""`harness import`: convert vcrpy / pytest-recording cassettes, list what was skipped."""

from __future__ import annotations

import sys

import click

from harness._exceptions import CassetteImportError
from harness._import_vcr import import_vcr, vcr_files
from harness_cli.exit import Exit

EXAMPLES = """\b
Examples:
  harness import tests/cassettes/test_chat.yaml --out cassettes/imported
  harness import tests/cassettes/ --out cassettes/imported --force

Each streamed POST /v1/messages interaction becomes OUT/<name>-<N>.jsonl
(source: imported); other interactions are listed as skipped. Headers are
never copied. Exit status: 0 done; 1 nothing to import; 2 an input is not a
vcrpy cassette, or an output exists without --force."""


@click.command(epilog=EXAMPLES)
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@click.option("--out", "out_dir", required=True, metavar="DIR", help="Folder for the cassettes.")
@click.option("--force", is_flag=True, help="Replace cassettes that already exist in DIR.")
def import_command(paths: tuple[str, ...], out_dir: str, force: bool) -> None:
    """Convert vcrpy cassettes (YAML or JSON) of Anthropic streams into JSONL cassettes."""
    files = vcr_files(paths)
    if not files:
        click.echo(f"{', '.join(paths)}: no vcrpy cassettes found", err=True)
        sys.exit(Exit.UNUSABLE)
    written = 0
    for path in files:
        try:
            report = import_vcr(path, out_dir, force=force)
        except CassetteImportError as error:
            click.echo(str(error), err=True)
            sys.exit(Exit.UNUSABLE)
        for target, count in report.written:
            click.echo(f"wrote {target}: {count} events")
        for reason in report.skipped:
            click.echo(f"skipped {reason}")
        written += len(report.written)
    if not written:
        click.echo("no streamed /v1/messages interaction found", err=True)
        sys.exit(Exit.FAILED)
