"""`harness faults`: derive broken variants of a good cassette, or list the catalogue."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import NoReturn

import click

from harness import faults as faults_module
from harness._cassette.codec import Cassette, make_header, write_cassette
from harness._cassette.sessions import (
    TURN_PATTERN,
    turn_files,
    write_session_variant,
    write_turns,
)
from harness._exceptions import ANTHROPIC, CassetteError
from harness._hosts import HOSTS
from harness._terminal import printable
from harness.faults import (
    CATALOGUE,
    Fault,
    catalogue,
    derive_variants,
    stream_lines,
)
from harness_cli.choices import ProviderChoice
from harness_cli.exit import Exit

EXAMPLES = """\b
Examples:
  harness faults --list
  harness faults --list --provider openai-chat
  harness faults cassettes/interleaved.jsonl --out /tmp/broken
  harness replay /tmp/broken/          # each ends in the code its header expects
  harness faults cassettes/sessions/read-notes --turn 1 --out /tmp/broken-sessions
  harness faults vllm-answer.jsonl --profile vllm --out /tmp/broken-vllm

Each variant is written as DIR/<good stem>.<fault>.jsonl; its header names the fault
("fault") and the outcome it must replay to ("expect"); a session row (http_429_then_ok)
is a folder DIR/<good stem>.<fault>/ of turn-NN.jsonl, one response a turn. The
HTTP-level and wire-level rows (http_529, OpenAI's http_500, http_429_then_ok,
cut_mid_event, stall) hold directive lines that only a client acts on: serve them with
harness.cassette_client.
Directive lines of the good cassette are not carried over (but for an OpenAI Chat
cassette's {"harness": "done"}, its data: [DONE], which is part of its stream).

A cassette recorded on Bedrock ("host": "bedrock" in its header: its stream travels in
event-stream frames) gets the binary rows too (a flipped CRC bit, a frame cut in its
prelude or payload, an exception frame, an unknown :message-type), and its variants'
headers name the host; --list --host bedrock prints them. --host takes a host the
provider's streams are served on: on one serving them as SSE (vertex) there is no
binary row, and a host the provider is not served on is refused (exit 2).

An OpenAI cassette gets its provider's catalogue (the provider its header names; --list
--provider NAME prints it), and its variants' headers name the same provider.

--profile NAME reads a Chat Completions cassette recorded from a compatible server
(vllm, ollama, ...: docs/profiles.md) under that server's profile: GOOD must replay to
done under it, each row's expected outcome is judged under it (replay the variants with
--profile NAME; their headers name it), and a row whose variant the profile reads as a
good stream is not written (stop_despite_tool_calls under vllm: what vLLM sends).

GOOD may be a session folder (turn-NN.jsonl, and session.json): every variant is then
a session folder DIR/<folder name>.<fault>/, the session with turn N (--turn, default
the last) broken and the other turns as recorded. Exit status: 0 written or listed;
2 the cassette (the turn) is unusable or does not replay to done, or an option is."""


def _expect_width(rows: tuple[Fault, ...]) -> int:
    return max(len(fault.expect) for fault in rows)


EXPECT_WIDTH = _expect_width(CATALOGUE)


def _list_catalogue(provider: str, host: str | None) -> None:
    from harness._providers import provider as registered

    unserved = None if host is None else registered(provider).not_served_on(host)
    if unserved is not None:
        _fail(f"--host {host}: {unserved}")
    rows = catalogue(provider, host=host)
    width, expect_width = max(len(fault.name) for fault in rows), _expect_width(rows)
    for fault in rows:
        click.echo(f"{fault.name:<{width}}  {fault.expect:<{expect_width}}  {fault.description}")


def _profile_hint(profiles: list[str]) -> str:
    """The clause naming the profiles GOOD replays to done under, if any."""
    if not profiles:
        return ""
    return f" (it does under --profile {', '.join(profiles)}: docs/profiles.md)"


def _fail(message: str) -> NoReturn:
    click.echo(printable(message), err=True)
    sys.exit(Exit.UNUSABLE)


def _broken_turn(good: str, turn: int | None) -> tuple[str, int | None]:
    """The cassette the faults break (GOOD, or turn N of a session folder GOOD) and, for a
    folder, N."""
    if not os.path.isdir(good):
        if turn is not None:
            _fail(f"--turn {turn}: {good} is not a session folder ({TURN_PATTERN} files)")
        return good, None
    try:
        turns = turn_files(good)
    except OSError as error:
        _fail(f"{good}: cannot read the folder: {error.strerror or error}")
    if not turns:
        _fail(f"{good}: a folder, but no session: no {TURN_PATTERN} in it")
    number = len(turns) if turn is None else turn
    if number > len(turns):
        held = f"{len(turns)} turn{'s' if len(turns) != 1 else ''}"
        _fail(f"{good}: --turn {number}, but the session folder holds {held}")
    return str(turns[number - 1]), number


@click.command(epilog=EXAMPLES)
@click.argument("good", required=False, metavar="GOOD")
@click.option(
    "--out", "out_dir", metavar="DIR", help="Folder for the variants (created if missing)."
)
@click.option(
    "--turn",
    type=click.IntRange(min=1),
    metavar="N",
    help="With a session folder: the turn to break, 1 the first (default: the last).",
)
@click.option("--list", "list_only", is_flag=True, help="Print the fault catalogue and exit.")
@click.option(
    "--provider",
    type=ProviderChoice(lambda: faults_module.PROVIDERS),
    help="With --list: the provider whose catalogue to print (default: anthropic).",
)
@click.option(
    "--host",
    type=click.Choice(sorted(HOSTS)),
    help="With --list: a host the provider's streams are served on (bedrock adds the binary "
    "rows of its event-stream frames; a host serving them as SSE, none). Another host is "
    "unusable (exit 2).",
)
@click.option(
    "--profile",
    metavar="NAME",
    help="Read GOOD (a Chat Completions cassette) and judge each row under a compatible "
    "server's profile (vllm, ollama, ...: docs/profiles.md). Default: openai.",
)
def faults(
    good: str | None,
    out_dir: str | None,
    turn: int | None,
    list_only: bool,
    provider: str | None,
    host: str | None,
    profile: str | None,
) -> None:
    """Write one broken variant of a good cassette (or session turn) per applicable fault."""
    if list_only:
        if profile is not None:
            _fail("--profile reads GOOD's stream: it does not combine with --list")
        _list_catalogue(provider or ANTHROPIC, host)
        return
    if host is not None:
        _fail("--host is for --list: GOOD's header names the host its stream was recorded on")
    if good is None or out_dir is None:
        _fail("harness faults: give GOOD.jsonl (or a session folder) and --out DIR, or --list")
    from harness._providers import provider as registered
    from harness._replay.direct import replay_outcome
    from harness._testing.coverage import DONE, outcome_code
    from harness._testing.fault_runs import profiles_reading_good

    broken_turn, number = _broken_turn(good, turn)
    try:
        cassette = Cassette(broken_turn)
        registered(cassette.provider).adapter_options(profile)
        code = outcome_code(replay_outcome(cassette, sdk_objects=False, profile=profile))
        events = stream_lines(cassette)
    except CassetteError as error:
        _fail(str(error))
    except ValueError as error:  # the profile: unknown, or for another provider's streams
        _fail(f"--profile: {error}")
    if provider is not None and provider != cassette.provider:
        _fail(
            f"--provider {provider}: {broken_turn} is a cassette of {cassette.provider} "
            "(its header names the provider; --provider is for --list)"
        )
    if code != DONE:
        under = "" if profile is None else f" under profile {profile}"
        hint = "" if profile is not None else _profile_hint(profiles_reading_good(cassette))
        _fail(
            f"{broken_turn}: does not complete{under} (it ends in {code}); faults need a "
            f"good stream{hint}"
        )
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as error:
        _fail(f"--out {out_dir}: cannot create folder: {error.strerror or error}")
    stem = "stdin" if good == "-" else Path(good).stem if number is None else Path(good).name
    model = (cassette.header or {}).get("model")
    named = {} if cassette.provider == ANTHROPIC else {"provider": cassette.provider}
    if cassette.host is not None:
        named["host"] = cassette.host
    judged = {} if profile is None else {"profile": profile}
    expect_width = _expect_width(catalogue(cassette.provider, host=cassette.host))
    variants = derive_variants(
        events, provider=cassette.provider, profile=profile, header=cassette.header
    )
    for variant in variants:
        fault = variant.fault
        header = make_header(
            f"{fault.description} (fault {fault.name}, derived from {cassette.path})",
            "synthetic",
            **named,
            fault=fault.name,
            expect=variant.expected_code,
            **judged,
            derived_from=cassette.path,
            **({"model": model} if isinstance(model, str) else {}),
        )
        path = os.path.join(out_dir, f"{stem}.{fault.name}.jsonl")
        responses = variant.responses
        if len(responses) > 1 or number is not None:
            path = os.path.join(out_dir, f"{stem}.{fault.name}")
        try:
            if number is not None:
                write_session_variant(path, good, number, responses, header=header)
            elif len(responses) == 1:
                write_cassette(path, variant.events, header=header)
            else:
                write_turns(path, responses, header=header)
        except OSError as error:
            _fail(f"{path}: cannot write: {error.strerror or error}")
        click.echo(f"{variant.expected_code:<{expect_width}}  {printable(path)}")
