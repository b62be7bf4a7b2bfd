"""The `harness` command group. Subcommands are imported only when run, so that
`harness --help` stays fast and never imports the Anthropic SDK."""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import textwrap
from typing import Any

import click

from harness._exceptions import InputError
from harness._terminal import printable
from harness_cli.exit import Exit

#: name -> (module inside this package, attribute, one-line help shown by `harness --help`)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "replay": ("replay", "replay", "Replay cassettes through the adapter and print the events."),
    "validate": ("replay", "validate", "Check cassettes against the schema, without replaying."),
    "record": (
        "record",
        "record_command",
        "Record a live stream (opt-in: your API key or cloud credentials).",
    ),
    "import": ("import_", "import_command", "Convert vcrpy cassettes and HAR files to cassettes."),
    "export": ("export", "export", "Write cassettes as vcrpy or HAR files (fault variants too)."),
    "faults": ("faults", "faults", "Derive broken variants of a good cassette, one per fault."),
    "conform": (
        "conform",
        "conform",
        "Judge an adapter in any language on every case.",
    ),
    "coverage": ("coverage", "coverage", "Table of error codes and the cassettes that reach them."),
    "doctor": ("doctor", "doctor", "Check the installed SDK releases against the documented ones."),
    "diff": ("diff", "diff", "Compare two cassettes' outcomes; exit 1 when they differ."),
    "view": ("view", "view", "Draw a stream, a session, a run or two cassettes as one HTML page."),
    "agent": ("agent", "agent", "Replay a recorded session through the agent loop, tools run."),
    "bench": ("bench", "bench", "Benchmark the adapter and replay against the SDK's own code."),
    "serve": (
        "serve",
        "serve",
        "Answer every provider's calls from cassettes over HTTP.",
    ),
    "proxy": (
        "serve",
        "proxy",
        "Forward to the API, recording each answer to a provider's call.",
    ),
}


class LazyGroup(click.Group):
    """A group whose commands are listed from `COMMANDS` and imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        module, attribute, _ = entry
        command = getattr(importlib.import_module(f"{__package__}.{module}"), attribute)
        assert isinstance(command, click.Command)
        return command

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command; whatever escapes it ends in one line, never a traceback.

        Commands report the failures they expect themselves; an `InputError` none reported
        (the `openai` extra missing) is its line, exit 2. Anything else is a bug of the
        harness, reported as `harness COMMAND: internal error: ...` with exit 2; Ctrl-C
        is `interrupted`, exit 130.
        """
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            sys.exit(Exit.INTERRUPTED)
        except BrokenPipeError:
            # Nothing more can be written, not even at exit's flush: point stdout nowhere.
            with contextlib.suppress(OSError, ValueError):
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(Exit.BROKEN_PIPE)
        except InputError as error:  # input no command reports itself: a missing extra
            name = ctx.invoked_subcommand or "harness"
            click.echo(f"harness {name}: {printable(str(error))}", err=True)
            sys.exit(Exit.UNUSABLE)
        except Exception as error:
            name = ctx.invoked_subcommand or "harness"
            reason = printable(f"{type(error).__name__}: {error}")
            click.echo(f"harness {name}: internal error: {reason}", err=True)
            sys.exit(Exit.UNUSABLE)

    def format_help_text(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The tool's line, naming the streams it reads as the registry lists them (a
        provider another distribution registers too; no SDK is imported)."""
        from harness._providers import providers

        names = [found.name for found in providers()]
        line = " ".join((self.help or "").split())
        about = f"{line} Its providers: {', '.join(names[:-1])} and {names[-1]}."
        formatter.write_paragraph()
        with formatter.indentation():  # wrapped between words alone: a name keeps its hyphen
            indent = " " * formatter.current_indent
            width = max((formatter.width or 80) - formatter.current_indent, 40)
            for line in textwrap.wrap(about, width, break_on_hyphens=False):
                formatter.write(f"{indent}{line}\n")

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][2]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


EPILOG = """\b
Examples:
  harness replay cassettes/interleaved.jsonl
  harness replay --format json cassettes/
  harness validate cassettes/

Run `harness COMMAND --help` for a command's options and examples."""


@click.group(cls=LazyGroup, epilog=EPILOG, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="stream-harness", prog_name="harness")
def cli() -> None:
    """Record/replay testing harness for LLM streaming code, one wire dialect a provider
    (docs/providers.md)."""


def main(argv: list[str] | None = None) -> Any:
    """Console-script entry point."""
    return cli.main(args=argv, prog_name="harness")
