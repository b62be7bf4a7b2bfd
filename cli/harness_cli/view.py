"""`harness view`: a stream, a session folder, a run's folder or two cassettes as one page."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from harness._cassette.codec import STDIN
from harness._exceptions import InputError, OutputError
from harness._terminal import printable
from harness_cli.exit import Exit

EXAMPLES = """\b
Examples:
  harness view cassettes/interleaved.jsonl            # writes interleaved.html
  harness view broken/interleaved.drop_tool_stop.jsonl --out broken.html
  harness view cassettes/openai/chat/sessions/weather/     # a session, turn by turn
  harness view .pytest_cache/d/stream-harness-variants/   # a fault run's variants
  harness view cassettes/interleaved.jsonl broken.jsonl  # side by side (diff --trace)
  harness view cassettes/text_only.jsonl --out - | less   # the page on stdout

One PATH: a cassette is drawn as a stream (its text as assembled, a lane for each
tool block or call, the timeline, the row where a rule fired); a session folder
(turn-NN.jsonl) as its turns one after another, each with the request sent for it;
any other folder as a run: a table of every cassette below it (a fault run's
variants, harness faults --out's), each one's outcome, its stream under it.
Two PATHs: both traces side by side, up to the first row where they differ.
The page is one HTML file that fetches nothing: it opens from disk. --out defaults
to the cassette's or folder's name with .html, in the current folder (A.vs.B.html
for two); - writes it to standard output. Exit status: 0 the page is written;
2 a cassette is unusable or the page cannot be written (one line on stderr)."""


def _default_out(paths: tuple[str, ...]) -> Path:
    """`NAME.html` in the current folder: the cassette's stem, the folder's name."""

    def name(path: str) -> str:
        if path == STDIN:
            return "stdin"
        found = Path(path)
        return (found.resolve().name or "page") if found.is_dir() else found.stem

    stem = name(paths[0]) if len(paths) == 1 else f"{name(paths[0])}.vs.{name(paths[1])}"
    return Path(f"{stem}.html")


def _same_file(out: Path, paths: tuple[str, ...]) -> str | None:
    """The input `out` would replace, if any: a page never overwrites its cassette."""
    for path in paths:
        if path != STDIN and os.path.exists(path) and out.exists() and os.path.samefile(path, out):
            return path
    return None


def _page(paths: tuple[str, ...], ignore_ids: bool, title: str | None) -> tuple[str, str]:
    """The page of `paths` and the line that says what it shows."""
    if len(paths) == 2:
        from harness._view.diff import diff_page

        for path in paths:
            if os.path.isdir(path):
                raise InputError(f"{path}: a folder; harness view A B compares two cassettes")
        diff = diff_page(paths[0], paths[1], ignore_ids=ignore_ids, title=title)
        return diff.html, diff.verdict
    (path,) = paths
    if ignore_ids:
        raise click.UsageError("--ignore-ids compares two cassettes: give A and B")
    if path != STDIN and os.path.isdir(path):
        from harness._cassette.sessions import is_session_folder

        if is_session_folder(path):
            from harness._view.session import session_page

            session = session_page(path, title=title)
            return session.html, f"a session: {session.summary}"
        from harness._view.run import run_page

        run = run_page(path, title=title)
        return run.html, f"a run: {run.summary}"
    from harness._view.stream import stream_document

    html, section = stream_document(path, title=title)
    return html, f"a stream: {section.summary}"


@click.command(epilog=EXAMPLES)
@click.argument("paths", nargs=-1, required=True, metavar="PATH [B]")
@click.option(
    "--out",
    metavar="FILE",
    help="Where to write the page (default: NAME.html here; - for standard output).",
)
@click.option("--title", help="The page's title (default: the file or folder's name).")
@click.option(
    "--ignore-ids", is_flag=True, help="With two cassettes: compare tool calls by position."
)
def view(paths: tuple[str, ...], out: str | None, title: str | None, ignore_ids: bool) -> None:
    """Draw a stream, a session folder, a run's folder or two cassettes as one HTML page."""
    if len(paths) > 2:
        raise click.UsageError(f"got {len(paths)} paths: give one PATH, or two to compare")
    target = Path(out) if out is not None and out != "-" else None
    if out is None:
        target = _default_out(paths)
    if target is not None and (replaced := _same_file(target, paths)) is not None:
        shown = printable(str(target))
        click.echo(
            f"harness view: --out {shown} is the input {printable(replaced)}; "
            "a page never replaces its cassette",
            err=True,
        )
        sys.exit(Exit.UNUSABLE)
    try:
        html, summary = _page(paths, ignore_ids, title)
        if target is None:
            sys.stdout.write(html)
            sys.stdout.flush()
            return
        from harness._view.page import write_page

        write_page(html, target)
    except (InputError, OutputError) as error:
        sys.stdout.flush()
        click.echo(printable(str(error)), err=True)
        sys.exit(Exit.UNUSABLE)
    click.echo(f"wrote {printable(str(target))}: {printable(summary)}")
