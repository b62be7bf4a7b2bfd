"""`harness bench`: the benchmark kept in the checkout's `bench/` folder, from the command line.

The benchmark is not shipped in the package (its measuring code is no API), so this
command runs it from the checkout it is started in, or one of its parents.
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path
from types import ModuleType

import click

from harness_cli.exit import Exit

EXAMPLES = """\b
Examples:
  harness bench                    # 10^3 to 10^6 deltas: about 10 minutes
  harness bench --quick            # smoke run: small sizes, one shape, one run each
  harness bench --sizes 1e3,1e5    # chosen sizes (delta counts)

Prints (a) the adapter against the SDK's accumulate_event, (b) harness replay against
the floor (read + parse + the SDK's own construction), (c) peak memory, (d) start-up,
(e, f) the cassette client and harness.strict, (g) harness conform, (h) each dialect's
adapter (Anthropic, OpenAI Chat and Responses, Converse, Gemini) against orjson.loads
of the same lines, (i) harness view's page of 10^3 to 10^5 events (size, rows, build
and paint seconds), then each target with its measured figure. Nothing is asserted:
exit 0. Runs from a checkout of stream-harness (its bench/ folder); `make bench` does
the same."""


def _bench_module() -> ModuleType:
    """`bench.run` from the checkout around the current folder; its children find it too."""
    for folder in (Path.cwd(), *Path.cwd().parents):
        if (folder / "bench" / "run.py").is_file() and (folder / "pyproject.toml").is_file():
            root = str(folder)
            sys.path.insert(0, root)
            paths = [root, *filter(None, [os.environ.get("PYTHONPATH")])]
            os.environ["PYTHONPATH"] = os.pathsep.join(paths)
            return importlib.import_module("bench.run")
    click.echo(
        "harness bench: run it inside a checkout of stream-harness (no bench/ folder here)",
        err=True,
    )
    sys.exit(Exit.UNUSABLE)


@click.command(epilog=EXAMPLES)
@click.option("--quick", is_flag=True, help="Small sizes, one shape, one run each.")
@click.option(
    "--sizes", metavar="N,N,...", help="Delta counts to measure (default 1e3,1e4,1e5,1e6)."
)
def bench(quick: bool, sizes: str | None) -> None:
    """Measure the adapter and replay against the SDK's own code; print figures and ratios."""
    module = _bench_module()
    try:
        parsed = None if sizes is None else module.parse_sizes(sizes)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="'--sizes'") from None
    module.run(module.Options.make(quick=quick, sizes=parsed), sys.stdout)
