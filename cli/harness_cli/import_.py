"""`harness import`: convert vcrpy cassettes and HAR files, list what was skipped."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import NoReturn

import click

from harness._exceptions import CassetteImportError, OutputError
from harness._files import AtomicBatch
from harness._interop.dialects import calls
from harness._interop.importer import (
    ImportReport,
    import_recording,
    output_names,
    prepare_folder,
    recording_files,
)
from harness_cli.exit import Exit

EXAMPLES = """\b
Examples:
  harness import tests/cassettes/test_chat.yaml --out cassettes/imported
  harness import tests/cassettes/ --out cassettes/imported --force
  harness import session.har --out cassettes/imported

Each Messages call (POST .../v1/messages) answered 200 (a stream, or a Message,
whose events are synthesised), and each OpenAI call on any host (POST
.../chat/completions or .../responses, the resume GET; streamed, plain or an HTTP
error), and each other provider's call at its own paths (docs/import.md), becomes
OUT/<name>-<N>.jsonl (source: imported); other exchanges are listed
as skipped. Headers are never copied. A file that cannot be read is
reported and the rest go on; an existing output is left as it was, unless --force.
Exit status: 0 done; 1 some file or output was not imported, or nothing was found
to import; 2 no input could be read, or the arguments are unusable."""


#: Cassettes written between two commits (one sync each): a killed run keeps what was
#: committed before it, and the next run picks up from there.
BATCH_FILES = 256


def _fail(message: str) -> NoReturn:
    click.echo(message, err=True)
    sys.exit(Exit.UNUSABLE)


@dataclass(slots=True)
class _Tally:
    files: int = 0
    written: int = 0
    skipped: int = 0
    kept: int = 0
    failed: int = 0

    def summary(self) -> str:
        def count(n: int, what: str) -> str:
            return f"{n} {what}{'' if n == 1 else 's'}"

        parts = [count(self.written, "cassette") + " written", f"{self.skipped} skipped"]
        if self.kept:
            parts.append(f"{self.kept} kept (already there)")
        if self.failed:
            parts.append(count(self.failed, "file") + " unreadable")
        return f"{count(self.files, 'file')}: {', '.join(parts)}"


@contextlib.contextmanager
def _progress(files: Sequence[str]) -> Iterator[Iterator[str]]:
    """The files, behind a progress bar on stderr when it is a terminal (and worth it)."""
    if len(files) > 1 and sys.stderr.isatty():
        with click.progressbar(files, label="importing", file=sys.stderr) as bar:
            yield iter(bar)
    else:
        yield iter(files)


@click.command(epilog=EXAMPLES)
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@click.option("--out", "out_dir", required=True, metavar="DIR", help="Folder for the cassettes.")
@click.option("--force", is_flag=True, help="Replace cassettes that already exist in DIR.")
def import_command(paths: tuple[str, ...], out_dir: str, force: bool) -> None:
    """Convert recordings of any provider's calls (vcrpy YAML/JSON, HAR) into cassettes."""
    try:
        files = recording_files(paths)
        names = output_names(files)
        if files:
            prepare_folder(out_dir)
    except CassetteImportError as error:
        _fail(str(error))
    if not files:
        _fail(f"{', '.join(paths)}: no recordings found (*.yaml, *.yml, *.json, *.har)")
    tally = _Tally(files=len(files))
    report_lines: list[tuple[str, bool]] = []  # held while a progress bar is drawn
    show_bar = len(files) > 1 and sys.stderr.isatty()

    def say(line: str, err: bool = False) -> None:
        if show_bar:
            report_lines.append((line, err))
        else:
            click.echo(line, err=err)

    # What each file came to, said once its cassettes are on disk (at the batch's commit).
    held: list[ImportReport | CassetteImportError] = []

    def commit(batch: AtomicBatch) -> None:
        try:
            late = set(batch.commit())
        except OSError as error:
            _fail(f"{out_dir}: cannot write: {error.strerror or error}")
        for item in held:
            if isinstance(item, CassetteImportError):
                tally.failed += 1
                say(str(item), err=True)
                continue
            item.kept += [target for target, _ in item.written if target in late]
            item.written = [(target, n) for target, n in item.written if target not in late]
            for target, count in item.written:
                say(f"wrote {target}: {count} events")
            for reason in item.skipped:
                say(f"skipped {reason}")
            for target in item.kept:
                say(f"{target}: already exists, left as it was (use --force to replace it)", True)
            tally.written += len(item.written)
            tally.skipped += len(item.skipped)
            tally.kept += len(item.kept)
        held.clear()

    with _progress(files) as progress, AtomicBatch() as batch:
        for path in progress:
            try:
                held.append(
                    import_recording(path, out_dir, name=names[path], force=force, batch=batch)
                )
            except CassetteImportError as error:
                held.append(error)
            except OutputError as error:  # a full disk: nothing more can be written
                _fail(str(error))
            if len(batch) >= BATCH_FILES:
                commit(batch)
        commit(batch)
    for line, err in report_lines:
        click.echo(line, err=err)
    click.echo(tally.summary())
    if tally.failed == tally.files:
        sys.exit(Exit.UNUSABLE)
    if tally.failed or tally.kept:
        sys.exit(Exit.FAILED)
    if not tally.written:
        click.echo(f"no {calls().removeprefix('a ')} found to import", err=True)
        sys.exit(Exit.FAILED)
