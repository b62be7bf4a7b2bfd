"""`harness export`: cassettes (fault variants included) as vcrpy cassettes or HAR files."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import NoReturn

import click

from harness._cassette.codec import expand_paths
from harness._exceptions import CassetteError, CassetteImportError
from harness._interop.export import FORMATS, export_har, export_name, export_vcr
from harness._interop.importer import output_names, prepare_folder
from harness_cli.exit import Exit

EXAMPLES = """\b
Examples:
  harness export cassettes/interleaved.jsonl --to vcr --out tests/cassettes
  harness faults cassettes/interleaved.jsonl --out /tmp/broken
  harness export /tmp/broken/ --to vcr --out tests/cassettes/broken
  harness export cassettes/bedrock/converse/ --to har --out /tmp/har

Each cassette becomes OUT/<name>.yaml, a vcrpy cassette of one call of its
provider's API (its streamed path: POST /v1/messages, /v1/chat/completions,
/model/ID/converse-stream, ...; on Bedrock or Vertex the host's path the header names)
answered with the cassette's events as the
API sends them (SSE, or event-stream frames), which vcrpy replays as it is;
with --to har, OUT/<name>.har, a HAR 1.2 file of the same call.
Directive lines are not carried over. An existing output is left as it was,
unless --force. Exit status: 0 done; 1 some cassette or output was not exported;
2 no cassette could be read, or the arguments are unusable."""


def _fail(message: str) -> NoReturn:
    click.echo(message, err=True)
    sys.exit(Exit.UNUSABLE)


@click.command(epilog=EXAMPLES)
@click.argument("cassettes", nargs=-1, required=True, metavar="CASSETTE...")
@click.option(
    "--to", "to", type=click.Choice(sorted(FORMATS)), required=True, help="The format to write."
)
@click.option("--out", "out_dir", required=True, metavar="DIR", help="Folder for the files.")
@click.option("--force", is_flag=True, help="Replace files that already exist in DIR.")
def export(cassettes: tuple[str, ...], to: str, out_dir: str, force: bool) -> None:
    """Write cassettes as vcrpy cassettes (or HAR files), so a vcrpy suite can replay them."""
    files = expand_paths(cassettes)
    if not files:
        _fail(f"{', '.join(cassettes)}: no cassettes found (*.jsonl)")
    try:
        names = output_names(files, lambda path: Path(path).stem)
        prepare_folder(out_dir)
    except CassetteImportError as error:
        _fail(str(error))
    failed = kept = unwritten = 0
    for path in files:
        target = export_name(out_dir, names[path], to)
        try:
            count = (export_har if to == "har" else export_vcr)(path, target, force=force)
        except CassetteError as error:
            failed += 1
            click.echo(str(error), err=True)
            continue
        except FileExistsError:
            kept += 1
            click.echo(f"{target}: already exists, left as it was (use --force)", err=True)
            continue
        except OSError as error:
            unwritten += 1  # a failed write is unusable output, as in every command
            click.echo(f"{target}: cannot write: {error.strerror or error}", err=True)
            continue
        click.echo(f"wrote {target}: {count} events")
    if unwritten or failed == len(files):
        sys.exit(Exit.UNUSABLE)
    if failed or kept:
        sys.exit(Exit.FAILED)
