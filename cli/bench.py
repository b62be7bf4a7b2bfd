"""`harness bench`: the performance benchmark (`harness.bench`), from the command line."""

from __future__ import annotations

import sys

import click

from harness.bench import Options, parse_sizes, run

EXAMPLES = """\b
Examples:
  harness bench                    # 10^3 to 10^6 deltas: about 10 minutes
  harness bench --quick            # smoke run: small sizes, one shape, one run each
  harness bench --sizes 1e3,1e5    # chosen sizes (delta counts)

Prints (a) the adapter against the SDK's accumulate_event, (b) harness replay against
the floor (read + parse + the SDK's own construction), (c) peak memory, (d) start-up,
then each target of issue 7 with its measured figure. Nothing is asserted: exit 0."""


def _sizes(ctx: click.Context, param: click.Parameter, value: str | None) -> tuple[int, ...] | None:
    if value is None:
        return None
    try:
        return parse_sizes(value)
    except ValueError as error:
        raise click.BadParameter(str(error)) from None


@click.command(epilog=EXAMPLES)
@click.option("--quick", is_flag=True, help="Small sizes, one shape, one run each.")
@click.option(
    "--sizes",
    callback=_sizes,
    metavar="N,N,...",
    help="Delta counts to measure (default 1e3,1e4,1e5,1e6).",
)
def bench(quick: bool, sizes: tuple[int, ...] | None) -> None:
    """Measure the adapter and replay against the SDK's own code; print figures and ratios."""
    run(Options.make(quick=quick, sizes=sizes), sys.stdout)
