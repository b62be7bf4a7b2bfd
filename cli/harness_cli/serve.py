"""`harness serve` and `harness proxy`: parse options, run the server, report in one line."""

from __future__ import annotations

import asyncio
import os
import sys
from typing import TYPE_CHECKING

import click

from harness._exceptions import HarnessError, InputError
from harness._terminal import printable
from harness_cli.exit import Exit

if TYPE_CHECKING:
    from collections.abc import Collection

    from aiohttp import web

    from harness._http.bounds import LineLog

LOCALHOST = "127.0.0.1"


def _run(
    name: str,
    app: web.Application,
    host: str,
    port: int,
    log: LineLog,
    providers: Collection[str],
) -> None:
    """Serve until SIGINT/SIGTERM, the base URL of each SDK whose clients it answers
    (`providers`') first, in one line; exit 2 in one line if it cannot bind."""
    from harness._http.hosting import base_url_line, run_until_signal

    def ready(url: str) -> None:
        log(base_url_line(url, providers))
        if host != LOCALHOST:
            click.echo(
                f"harness {name}: listening on {host}, not 127.0.0.1: "
                "other machines can reach it (--host)",
                err=True,
            )

    try:
        stopped_by = asyncio.run(run_until_signal(app, host, port, ready))
    except InputError as error:
        click.echo(f"harness {name}: {error}", err=True)
        sys.exit(Exit.UNUSABLE)
    finally:
        log.close()
    click.echo(f"harness {name}: stopped ({stopped_by})", err=True)
    sys.exit(Exit.INTERRUPTED if stopped_by == "SIGINT" else Exit.OK)


host_option = click.option(
    "--host",
    default=LOCALHOST,
    show_default=True,
    help="Address to listen on; anything but 127.0.0.1 is reachable from elsewhere.",
)
port_option = click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    show_default=True,
    help="Port to listen on; 0 picks a free one (read it from the first line).",
)

SERVE_EXAMPLES = """\b
Examples:
  harness serve cassettes/                   # the library, in order, or by header
  harness serve cassettes/sessions/read-notes --port 8080     # a session, turn by turn
  harness serve --chunk-size 7 --realtime recorded.jsonl


  then, in another terminal (any API key is accepted, never logged):
  ANTHROPIC_BASE_URL=http://127.0.0.1:8080 python my_app.py
  curl -N http://127.0.0.1:8080/v1/messages -H 'x-harness-cassette: text_only' \\
      -H 'content-type: application/json' \\
      -d '{"model": "m", "max_tokens": 9, "messages": [], "stream": true}'
  harness serve cassettes/openai/ --port 8080       # OpenAI's Chat and Responses
  OPENAI_BASE_URL=http://127.0.0.1:8080/v1 python my_openai_app.py

The first stdout line holds the base URL of each SDK client whose cassettes are
served, as the variable that client reads (ANTHROPIC_BASE_URL=http://HOST:PORT,
OPENAI_BASE_URL=http://HOST:PORT/v1, AWS_ENDPOINT_URL_BEDROCK_RUNTIME,
GOOGLE_GEMINI_BASE_URL, and the Bedrock and Vertex clients' own: export $(head -n 1
LOG) sets them all), then one line a request.
Each provider's paths are answered from its own cassettes (POST /v1/messages from
the Anthropic ones, /v1/chat/completions and /v1/responses from OpenAI's, Bedrock's
/model/ID/converse-stream and /model/ID/invoke-with-response-stream, Vertex's and
Gemini's :streamRawPredict and :streamGenerateContent: docs/providers.md), an error
in each API's own shape.
Which cassette answers: the one named by an x-harness-cassette header (its path
relative to the served folder, .jsonl optional); else the one whose recorded request
matches; else the next of the request's provider in order. GET /_harness/requests
lists the requests received, POST /_harness/reset starts over (both answer this
machine only: a loopback Host and Origin, or --host). A stall waits for the client's
own timeout; --stall-ms MS cuts longer ones short with a dropped connection. Stop
with Ctrl-C or SIGTERM.

Exit status: 0 stopped by SIGTERM; 130 by Ctrl-C; 2 a cassette is unusable or the
port cannot be bound."""


@click.command(epilog=SERVE_EXAMPLES)
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@host_option
@port_option
@click.option(
    "--chunk-size",
    type=click.IntRange(min=1),
    help="Cut each stream into chunks of N bytes (with --chunk-seed: random lengths 1..N).",
)
@click.option("--chunk-seed", type=int, help="Random chunk lengths (1..--chunk-size, default 16).")
@click.option(
    "--realtime", is_flag=True, help='Pace streams at their recorded {"harness": "at"} offsets.'
)
@click.option(
    "--stall-ms",
    type=click.IntRange(min=0),
    metavar="MS",
    help='Cut each {"harness": "stall"} longer than MS short: after MS ms the connection '
    "closes, so a client whose read timeout you cannot set sees a connection error then.",
)
def serve(
    paths: tuple[str, ...],
    host: str,
    port: int,
    chunk_size: int | None,
    chunk_seed: int | None,
    realtime: bool,
    stall_ms: int | None,
) -> None:
    """Answer every provider's calls from cassettes, over HTTP."""
    from harness._http.bounds import LineLog
    from harness._http.server import CassetteServer
    from harness._replay.plan import Chunking

    log = LineLog()  # stdout: the base URL, then one line a request, never blocking a request
    try:
        server = CassetteServer(
            paths,
            chunking=Chunking(chunk_size, chunk_seed),
            realtime=realtime,
            log=log,
            host=host,
            stall_ms=stall_ms,
        )
    except HarnessError as error:  # an unusable cassette, a folder without any
        click.echo(f"harness serve: {error}", err=True)
        sys.exit(Exit.UNUSABLE)
    for reason in server.left_out:
        click.echo(f"harness serve: {printable(reason)}", err=True)
    _run("serve", server.app(), host, port, log, server.providers)


PROXY_EXAMPLES = """\b
Examples:
  harness proxy --upstream https://api.anthropic.com --out recordings/ --port 8080
  ANTHROPIC_BASE_URL=http://127.0.0.1:8080 python my_app.py   # your own key, as usual
  harness serve recordings/                  # the recorded session, turn by turn
  harness proxy --upstream https://api.openai.com --out recordings/ --port 8080
  OPENAI_BASE_URL=http://127.0.0.1:8080/v1 python my_app.py
  harness proxy --upstream http://127.0.0.1:8000/v1 --out vllm/  # base URL .../v1 ends
  OPENAI_BASE_URL=http://127.0.0.1:8080 python my_app.py         # here, then, no /v1

Each answer to a provider's call (streamed, not streamed, or an HTTP error) becomes
OUT/turn-NN.jsonl, in arrival order, written once it has ended: POST /v1/messages,
an OpenAI POST whose path ends in /chat/completions or /responses, Bedrock's
/model/ID/converse-stream and /invoke-with-response-stream, Vertex's and Gemini's
streamed calls (docs/providers.md). The request is kept without credentials (keys,
SigV4 signatures, session and bearer tokens, cookies), which are never written. The
client's path is added to --upstream as sent. Other endpoints, and the Responses
resume GET /v1/responses/{id}, pass through unrecorded. The first stdout line is
each SDK client's base URL, as the variable it reads (ANTHROPIC_BASE_URL=http://HOST:PORT,
OPENAI_BASE_URL=http://HOST:PORT/v1, AWS_ENDPOINT_URL_BEDROCK_RUNTIME,
GOOGLE_GEMINI_BASE_URL, and the Bedrock and Vertex clients' own).
With --strict, a streamed answer that breaks the protocol ends, at the event
that breaks it, in the API's own error event naming the code; a broken non-streaming
answer, or one that cannot be checked (a compressed stream, an answer over
64 MiB), becomes a 502 with x-should-retry: false, so SDKs raise without retrying
(docs/strict.md); only end_turn and tool_use complete a message (Chat: stop and
tool_calls), unless --allow-stop-reasons names more (--strict --allow-stop-reasons
max_tokens,length for a cut answer, either API's).
Otherwise an answer over 64 MiB decompressed, or holding a line over 8 MiB,
still reaches the client whole, but is not recorded (one line says why).

Exit status: 0 stopped by SIGTERM; 130 by Ctrl-C; 2 a bad option value, or the port
cannot be bound."""


@click.command(epilog=PROXY_EXAMPLES)
@click.option("--upstream", required=True, metavar="URL", help="The API to forward to.")
@click.option("--out", required=True, metavar="DIR", help="Folder for the cassettes.")
@click.option(
    "--strict",
    is_flag=True,
    help="Check each answer with its provider's strict adapter on its way; end a broken "
    "stream in the API's own error event naming the code, answer a broken non-streamed "
    "answer with a 502 that is not retried.",
)
@click.option(
    "--allow-stop-reasons",
    metavar="REASON,...",
    help="With --strict: stop reasons (OpenAI: finish reasons) that complete an answer "
    "besides end_turn and tool_use (Chat: stop and tool_calls), comma-separated "
    "(max_tokens,length for a cut answer), for clients that handle them.",
)
@click.option(
    "--profile",
    metavar="NAME",
    help="With --strict: read Chat Completions answers under a compatible server's "
    "profile (vllm, ollama, gemini, ...: docs/profiles.md), each deviation it tolerates "
    "handed on in OpenAI's form. Default: openai, OpenAI's own API.",
)
@host_option
@port_option
@click.option(
    "--upstream-timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=600,
    show_default=True,
    metavar="SECONDS",
    help="How long upstream may take to connect, and then stay silent: "
    "then a 504 (or, mid-answer, a cut), nothing recorded.",
)
def proxy(
    upstream: str,
    out: str,
    strict: bool,
    allow_stop_reasons: str | None,
    profile: str | None,
    host: str,
    port: int,
    upstream_timeout: float,
) -> None:
    """Forward requests to the API; record each answer to a provider's call as a cassette."""
    from harness._http.bounds import LineLog
    from harness._http.proxy import RecordingProxy
    from harness._record.live import check_base_url
    from harness._strict.policy import stop_reasons_from

    try:
        check_base_url(upstream, "--upstream")
    except InputError as error:
        click.echo(f"harness proxy: {printable(str(error))}", err=True)
        sys.exit(Exit.UNUSABLE)
    if os.path.exists(out) and not os.path.isdir(out):
        click.echo(f"harness proxy: --out {out!r} is a file, not a folder", err=True)
        sys.exit(Exit.UNUSABLE)
    allowed: tuple[str, ...] = ()
    if allow_stop_reasons is not None:
        if not strict:
            click.echo(
                "harness proxy: --allow-stop-reasons needs --strict: without it no answer "
                "is checked",
                err=True,
            )
            sys.exit(Exit.UNUSABLE)
        try:
            allowed = stop_reasons_from(allow_stop_reasons)
        except InputError as error:
            click.echo(f"harness proxy: --allow-stop-reasons: {printable(str(error))}", err=True)
            sys.exit(Exit.UNUSABLE)
    if profile is not None:
        from harness._providers import check_profile

        if not strict:
            click.echo(
                "harness proxy: --profile needs --strict: without it no answer is checked", err=True
            )
            sys.exit(Exit.UNUSABLE)
        try:
            check_profile(profile)
        except ValueError as error:
            click.echo(f"harness proxy: --profile: {printable(str(error))}", err=True)
            sys.exit(Exit.UNUSABLE)
    log = LineLog()
    recorder = RecordingProxy(
        upstream,
        out,
        log=log,
        strict=strict,
        allow_stop_reasons=allowed,
        profile=profile,
        timeout=upstream_timeout,
    )
    _run("proxy", recorder.app(), host, port, log, recorder.providers)
