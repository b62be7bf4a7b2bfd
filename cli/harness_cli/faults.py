"""`harness faults`: derive broken variants of a good cassette, or list the catalogue."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import NoReturn

import click

from harness._cassette.codec import Cassette, make_header, write_cassette
from harness._cassette.sessions import write_turns
from harness._exceptions import CassetteError
from harness._terminal import printable
from harness.faults import CATALOGUE, derive_variants
from harness_cli.exit import Exit

EXAMPLES = """\b
Examples:
  harness faults --list
  harness faults cassettes/interleaved.jsonl --out /tmp/broken
  harness replay /tmp/broken/          # each ends in the code its header expects

Each variant is written as DIR/<good stem>.<fault>.jsonl; its header names the fault
("fault") and the outcome it must replay to ("expect"); a session row (http_429_then_ok)
is a folder DIR/<good stem>.<fault>/ of turn-NN.jsonl, one response a turn. The
HTTP-level and wire-level rows (http_529, http_429_then_ok, cut_mid_event, stall) hold
directive lines that only a client acts on: serve them with harness.cassette_client.
Directive lines of the good cassette are not carried over. Exit status: 0 written or
listed; 2 the cassette is unusable or does not replay to done."""


EXPECT_WIDTH = max(len(fault.expect) for fault in CATALOGUE)


def _list_catalogue() -> None:
    width = max(len(fault.name) for fault in CATALOGUE)
    for fault in CATALOGUE:
        click.echo(f"{fault.name:<{width}}  {fault.expect:<{EXPECT_WIDTH}}  {fault.description}")


def _fail(message: str) -> NoReturn:
    click.echo(printable(message), err=True)
    sys.exit(Exit.UNUSABLE)


@click.command(epilog=EXAMPLES)
@click.argument("good", required=False, metavar="GOOD.jsonl")
@click.option(
    "--out", "out_dir", metavar="DIR", help="Folder for the variants (created if missing)."
)
@click.option("--list", "list_only", is_flag=True, help="Print the fault catalogue and exit.")
def faults(good: str | None, out_dir: str | None, list_only: bool) -> None:
    """Write one broken variant of a good cassette per applicable fault."""
    if list_only:
        _list_catalogue()
        return
    if good is None or out_dir is None:
        _fail("harness faults: give GOOD.jsonl and --out DIR, or --list")
    from harness._replay.direct import replay_outcome
    from harness._testing.coverage import DONE, outcome_code

    try:
        cassette = Cassette(good)
        code = outcome_code(replay_outcome(cassette, sdk_objects=False))
        events = list(cassette.events())
    except CassetteError as error:
        _fail(str(error))
    if code != DONE:
        _fail(f"{good}: does not complete (it ends in {code}); faults need a good stream")
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as error:
        _fail(f"--out {out_dir}: cannot create folder: {error.strerror or error}")
    stem = "stdin" if good == "-" else Path(good).stem
    model = (cassette.header or {}).get("model")
    for variant in derive_variants(events):
        fault = variant.fault
        header = make_header(
            f"{fault.description} (fault {fault.name}, derived from {cassette.path})",
            "synthetic",
            fault=fault.name,
            expect=variant.expected_code,
            derived_from=cassette.path,
            **({"model": model} if isinstance(model, str) else {}),
        )
        path = os.path.join(out_dir, f"{stem}.{fault.name}.jsonl")
        responses = variant.responses
        if len(responses) > 1:
            path = os.path.join(out_dir, f"{stem}.{fault.name}")
        try:
            if len(responses) == 1:
                write_cassette(path, variant.events, header=header)
            else:
                write_turns(path, responses, header=header)
        except OSError as error:
            _fail(f"{path}: cannot write: {error.strerror or error}")
        click.echo(f"{variant.expected_code:<{EXPECT_WIDTH}}  {printable(path)}")
