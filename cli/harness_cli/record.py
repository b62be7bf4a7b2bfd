"""`harness record`: parse options, call `harness._record.live`, report in one line."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from functools import partial
from typing import Any

import click

from harness._exceptions import ANTHROPIC, InputError, OutputError, RecordError
from harness._providers import provider as registered
from harness._record.live import (
    DEFAULT_MAX_DURATION,
    DEFAULT_TIMEOUT,
    build_request,
    check_base_url,
    record,
)
from harness._record.over_http import build_http_request, record_over_http
from harness._record.through_sdk import build_sdk_request, record_through_sdk, records_itself
from harness._terminal import printable
from harness_cli.choices import ProviderChoice
from harness_cli.exit import Exit

EXAMPLES = """\b
Examples:
  export ANTHROPIC_API_KEY=...      # opt-in: a live, billed API call
  harness record --model claude-sonnet-5 --prompt "Read notes/a.md" \\
      --tool read=schemas/read.json --out read.jsonl
  harness record --request request.json --out rec.jsonl --vcr rec.vcr.yaml
  harness record --base-url http://127.0.0.1:8080 --prompt hi --model m --out rec.jsonl
  export OPENAI_API_KEY=...         # --provider openai-chat | openai-responses
  harness record --provider openai-chat --model gpt-4.1-mini --prompt "Weather in Paris?" \\
      --tool get_weather=schemas/weather.json --out weather.jsonl
  harness record --provider openai-responses --request body.json --out rec.jsonl
  harness record --provider openai-chat --base-url http://127.0.0.1:8000/v1 ...  # vLLM
  harness record --provider bedrock-converse --model us.amazon.nova-micro-v1:0 \\
      --prompt hi --out rec.jsonl    # boto3, signed with your usual AWS credentials
  export GEMINI_API_KEY=...         # or GOOGLE_API_KEY (preferred if both are set)
  harness record --provider gemini --model gemini-2.5-flash --prompt "Weather in Paris?" \\
      --tool get_weather=schemas/weather.json --out weather.jsonl

The cassette keeps the header (source, SDK version, model, the request without
credentials, UTC time) and every raw event in arrival order, each after an
{"harness": "at", "ms": N} line (its arrival offset, for `harness replay --realtime`).
Nothing is written, and files given with --force stay byte for byte, unless a whole
stream of events arrived: not for an API error, a dropped connection, a response
that is not text/event-stream (JSON, HTML, empty), an SSE line that is not a JSON
event, a stream without events, --timeout seconds without a byte, or a recording
longer than --max-duration. The folders of --out and --vcr are checked writable
before the billed request is sent. Credential-like fields (*key*, *token*, *secret*,
password, authorization, cookie...) are removed at any depth from the header's
request and from the --vcr file's URI, headers and body.
With --provider openai-chat or openai-responses the request goes to
--base-url (or OPENAI_BASE_URL; default https://api.openai.com/v1) plus
/chat/completions or /responses, with OPENAI_API_KEY, without the openai SDK;
--system is Chat's first message (it needs --prompt) or Responses' instructions,
--max-tokens is max_completion_tokens or max_output_tokens (unset by default),
and the header names the provider; [DONE] is kept as {"harness": "done"}.
With --provider gemini the request goes to --base-url (or GOOGLE_GEMINI_BASE_URL;
default https://generativelanguage.googleapis.com) plus
/v1beta/models/MODEL:streamGenerateContent?alt=sse, the model in the path (the
header's request keeps it), with the key in the x-goog-api-key header: GOOGLE_API_KEY,
else GEMINI_API_KEY, as google-genai reads them (a warning when both are set); --system
is its systemInstruction, --max-tokens its generationConfig's maxOutputTokens.
Exit status: 0 written; 1 the request or the stream failed (nothing written);
2 no API key (ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY, ...) or cloud
credentials, bad options, an output folder not writable, a cassette that cannot be
written (a full disk: nothing written), or --out exists without --force."""


@click.command(epilog=EXAMPLES)
@click.option("--out", required=True, metavar="PATH", help="The cassette to write (*.jsonl).")
@click.option(
    "--provider",
    type=ProviderChoice(),
    default=ANTHROPIC,
    show_default=True,
    help="The API recorded, by its provider's name.",
)
@click.option("--model", help="Model name (overrides the request file's).")
@click.option("--prompt", help="The user message.")
@click.option("--system", help="The system prompt.")
@click.option(
    "--max-tokens",
    type=click.IntRange(min=1),
    help="Default 1024 (Anthropic); unset for OpenAI and Gemini.",
)
@click.option(
    "--tool",
    "tools",
    multiple=True,
    metavar="NAME=SCHEMA.json",
    help="A tool the model may call; the file holds its input JSON Schema. Repeatable.",
)
@click.option(
    "--request",
    "request_file",
    metavar="FILE.json",
    help="A request body of the --provider's API; the options above override its fields.",
)
@click.option(
    "--base-url",
    help="API base URL (a proxy, or a fake server in tests); default: ANTHROPIC_BASE_URL, "
    "or the --provider's SDK's own: OPENAI_BASE_URL, GOOGLE_GEMINI_BASE_URL.",
)
@click.option(
    "--vcr",
    "vcr_path",
    metavar="PATH",
    help="Also save the HTTP exchange as a vcrpy cassette (.yaml, or .json), credentials removed.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=DEFAULT_TIMEOUT,
    show_default=True,
    metavar="SECONDS",
    help="Give up when the server sends no byte for this long (nothing written).",
)
@click.option(
    "--max-duration",
    type=click.FloatRange(min=0, min_open=True),
    default=DEFAULT_MAX_DURATION,
    show_default=True,
    metavar="SECONDS",
    help="Give up when the whole recording takes longer (nothing written).",
)
@click.option("--description", help="The cassette header's description.")
@click.option("--force", is_flag=True, help="Replace --out (and --vcr) if they exist.")
def record_command(
    out: str,
    provider: str,
    model: str | None,
    prompt: str | None,
    system: str | None,
    max_tokens: int | None,
    tools: tuple[str, ...],
    request_file: str | None,
    base_url: str | None,
    vcr_path: str | None,
    timeout: float,
    max_duration: float,
    description: str | None,
    force: bool,
) -> None:
    """Record a live stream into a cassette (needs the provider's API key or your cloud
    credentials; billed)."""

    shown = False  # whether any text was shown (a flag: the text itself is not held)

    def show(text: str) -> None:
        nonlocal shown
        shown = True
        sys.stderr.write(printable(text, keep="\n"))
        sys.stderr.flush()

    try:
        found = registered(provider)
        variable = found.client_env.base_url_variable
        url = base_url or os.environ.get(variable) or None
        if url is not None:  # a bad one is the user's input, said before any request
            check_base_url(url, "--base-url" if base_url else variable)
        # how it is recorded is the provider's: its SDK's own call (Anthropic's, or one
        # that signs it with the user's own credentials: boto3's), or a plain streamed POST
        itself = records_itself(found)
        api_key = None if itself else found.sdk.live_key()
        through_sdk = found.recording == "sdk"
        build: Callable[..., dict[str, Any]]
        recorder: Callable[..., int]
        if itself:
            build = partial(build_sdk_request, provider)
            recorder = partial(record_through_sdk, provider)
        elif through_sdk:
            build, recorder = build_request, record
        else:
            build = partial(build_http_request, provider)
            recorder = partial(record_over_http, provider)
        request = build(
            request_file=request_file,
            model=model,
            prompt=prompt,
            system=system,
            max_tokens=max_tokens,
            tools=tools,
        )
        count = recorder(
            request,
            out,
            api_key=api_key,
            base_url=url,
            force=force,
            vcr_path=vcr_path,
            description=description,
            show=show,
            timeout=timeout,
            max_duration=max_duration,
        )
    except (InputError, OutputError, RecordError) as error:
        reason = printable(str(error))
        click.echo(f"{chr(10) if shown else ''}harness record: {reason}", err=True)
        unusable = isinstance(error, InputError | OutputError)  # a failed write, as elsewhere
        sys.exit(Exit.UNUSABLE if unusable else Exit.FAILED)
    if shown:
        click.echo("", err=True)
    written = f" and {vcr_path}" if vcr_path else ""
    click.echo(f"wrote {out}{written}: {count} events")
