"""`harness conform`: run an adapter in any language on every case and judge what it prints."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from typing import Any

import click

from harness._exceptions import ANTHROPIC, InputError
from harness._terminal import json_text, printable
from harness_cli.exit import Exit

EXAMPLES = """\b
Examples:
  harness conform -- node dist/conform-stdin.js
  harness conform -j 2 --keep broken/ -- ./my-adapter
  harness conform my-cassettes/ -- cargo run -q --bin conform
  harness conform --serve -- node dist/conform-serve.js
  harness conform --persistent -- node dist/conform-stdin.js   # one process, every case
  harness conform --list > cases.json       # every case and its outcome, for other runners
  harness conform --provider openai-chat -- node dist/conform-openai.js

Stdin mode: COMMAND runs once a case, reads the case's raw stream events on standard
input (one JSON object a line, then EOF), and prints the internal events (one JSON object
a line), then, on a failure, {"type": "error", "message": ...} (with "error_type" for an
API error). With --serve, COMMAND asks ANTHROPIC_BASE_URL itself, sending the header
x-harness-cassette: $HARNESS_CASSETTE. With --persistent, one process takes case after
case, each ended by {"harness": "case_end"} on its input and its output. The protocol:
docs/conform.md.
With any other --provider, each case begins with a header line
{"harness": "case", "provider", "request", "policy"}, then the `data` objects (Chat's
[DONE] as {"harness": "done"}); with --serve the command asks its SDK's base URL
variable (OPENAI_BASE_URL, AWS_ENDPOINT_URL_BEDROCK_RUNTIME, ...).
Without PATH, the cases are the cassette library shipped with the harness and every
fault variant of its good cassettes. Exit status: 0 every case agrees; 1 some disagree;
2 unusable (no COMMAND, command not found, a bad PATH)."""


class _CommandAfterDashes(click.Command):
    """Everything after the first `--` is the command to judge, kept out of the parsing."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if "--" in args:
            at = args.index("--")
            args, ctx.meta["conform_command"] = args[:at], args[at + 1 :]
        return super().parse_args(ctx, args)


def _unusable(message: str) -> None:
    click.echo(printable(f"harness conform: {message}"), err=True)
    sys.exit(Exit.UNUSABLE)


def _listing(cases: list[Any], provider: str) -> dict[str, Any]:
    from harness._testing.conform import error_table, protocol_error_prefix
    from harness._testing.dialects import ANTHROPIC

    listing: dict[str, Any] = {} if provider == ANTHROPIC else {"provider": provider}
    listing["protocol_error_prefix"] = protocol_error_prefix(provider)
    listing["error_table"] = error_table(provider)
    listing["cases"] = [case.to_json() for case in cases]
    return listing


def _provider_option(provider: str) -> list[str]:
    from harness._testing.dialects import ANTHROPIC

    return [] if provider == ANTHROPIC else ["--provider", provider]


def _trace_hint(verdict: Any, keep: str | None) -> str:
    """The command that prints the case's trace, from a file the user has or can write
    (for a provider `--trace` does not read yet, the command that replays it)."""
    from harness._testing.dialects import dialect
    from harness._testing.trace import trace_hint as traced

    case = verdict.case

    def trace_hint(path: Any) -> str:
        hint = traced(path)
        if dialect(case.provider).own_cases:
            return hint.replace("harness replay --trace ", "harness replay ", 1)
        return hint

    if keep is not None:
        from harness._testing.conform import write_case

        return trace_hint(write_case(case, keep))
    relative = os.path.relpath(case.source)
    source = case.source if relative.startswith("..") else relative
    if case.fault is None:
        return trace_hint(source)
    return f"--keep DIR writes it, then {trace_hint(f'DIR/{case.name}.jsonl')}"


@click.command(cls=_CommandAfterDashes, epilog=EXAMPLES)
@click.argument("paths", nargs=-1, metavar="[PATH...] -- COMMAND [ARG...]")
@click.option(
    "--provider",
    default=ANTHROPIC,
    show_default=True,
    metavar="NAME",
    help="The dialect of the adapter judged, a provider's name "
    "(its library, its error table, its stdin protocol).",
)
@click.option(
    "--serve",
    is_flag=True,
    help="Serve each case over HTTP (the wire-level cases too) to a COMMAND that calls the "
    "API with its own SDK client.",
)
@click.option(
    "--persistent",
    is_flag=True,
    help="Start COMMAND once (once per job) and hand it case after case, each ended by the "
    'line {"harness": "case_end"} both ways: start-up paid once.',
)
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Cases run at the same time.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=10.0,
    show_default=True,
    help="Seconds a case may run before COMMAND is killed (and the case disagrees).",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json", "markdown", "html"]),
    default="text",
    show_default=True,
    help="text: a line per disagreeing case, a table by class and fault, the count; json: an "
    "object a case, then a summary object; markdown: the disagreements and the summary as "
    "tables to paste into an issue; html: one self-contained page of every case, the "
    "disagreeing ones first (> conform.html).",
)
@click.option(
    "--keep",
    metavar="DIR",
    help="Write each disagreeing case's cassette into DIR, to trace it with harness replay.",
)
@click.option(
    "--list",
    "list_only",
    is_flag=True,
    help="Print every case, its input and its expected outcome, and the error table, as one "
    "JSON document; run nothing.",
)
def conform(
    paths: tuple[str, ...],
    provider: str,
    serve: bool,
    persistent: bool,
    jobs: int,
    timeout: float,
    output_format: str,
    keep: str | None,
    list_only: bool,
) -> None:
    """Judge an adapter in any language against the library and the fault catalogue."""
    from harness._exceptions import CassetteError
    from harness._testing.conform import collect_cases, run_cases
    from harness._testing.dialects import dialect
    from harness._testing.findings import Report

    command: list[str] = click.get_current_context().meta.get("conform_command", [])
    try:
        dialect(provider)
    except InputError as error:
        _unusable(str(error))
    for path in paths:
        if not os.path.exists(path):
            _unusable(f"{path}: no such file or folder")
    try:
        cases = collect_cases(paths, provider)
    except (CassetteError, InputError) as error:
        _unusable(str(error))
    if list_only:
        click.echo(json_text(_listing(cases, provider)))
        return
    if not command:
        _unusable("give the command to judge after --: harness conform -- COMMAND [ARG...]")
    if shutil.which(command[0]) is None:
        _unusable(f"{command[0]}: command not found (or not executable)")
    if keep is not None:
        try:
            os.makedirs(keep, exist_ok=True)
        except OSError as error:
            _unusable(f"--keep {keep}: cannot create folder: {error.strerror or error}")
    run = run_cases(cases, command, jobs=jobs, timeout=timeout, serve=serve, persistent=persistent)
    skipped = 0 if serve else sum(case.wire for case in cases)
    report = Report(
        # a page is printed whole: its texts are escaped inside it, its new lines kept
        click.echo if output_format == "html" else lambda line: click.echo(printable(line)),
        output_format,
        trace_hint=lambda verdict: _trace_hint(verdict, keep),
        heading="harness conform " + shlex.join([*_provider_option(provider), "--", *command]),
    )
    for verdict in run:
        report.add(verdict)
    report.finish(skipped)
    agreeing = sum(finding.kind is None for finding in report.findings)
    total = len(report.findings)
    sys.exit(Exit.OK if agreeing == total else Exit.FAILED)
