"""`harness doctor`: the installed SDKs against what the harness documents of them."""

from __future__ import annotations

import sys

import click

from harness_cli.choices import ProviderChoice
from harness_cli.exit import Exit

EXAMPLES = """\b
Examples:
  harness doctor
  harness doctor --provider anthropic

Run it after upgrading an SDK. It prints the installed SDK and framework versions
against the range the harness was tested with, then serves each provider's fault
catalogue rows to its installed SDK's readers (each way a user's code reads a stream,
named as docs/sdk-readers.md names them), through the direct API's client and the
clients of the hosts its dialect is served on (those whose extra is installed), and
reports each row that reads otherwise than docs/sdk-readers.md says.
Exit status: 0 every row as documented; 1 a row differs (each is listed); 2 an SDK
it needs is not installed."""


def _measured() -> tuple[str, ...]:
    """The providers whose SDK readers are measured (`harness._testing.sdk_behaviour`)."""
    from harness._testing import sdk_behaviour

    return sdk_behaviour.PROVIDERS


def _readers(count: int) -> str:
    return f"{count} reader{'' if count == 1 else 's'}"


@click.command(epilog=EXAMPLES)
@click.option(
    "--provider",
    "providers",
    multiple=True,
    type=ProviderChoice(_measured),
    help="Check this provider's SDK readers only (repeatable; default: every provider's).",
)
def doctor(providers: tuple[str, ...]) -> None:
    """Compare the installed SDK releases with the documented behaviour."""
    from harness._exceptions import InputError
    from harness._providers import provider as registered
    from harness._testing import sdk_behaviour as behaviour

    chosen = providers or behaviour.PROVIDERS
    for provider in chosen:
        try:  # the SDK's own one line, naming the extra to install, as every command says it
            registered(provider).sdk.module()
        except InputError as error:
            click.echo(
                f"harness doctor: {error}; --provider names the providers to check without it",
                err=True,
            )
            sys.exit(Exit.UNUSABLE)
    documented = behaviour.documented()
    lowest = behaviour.lower_bounds()
    click.echo("installed releases, against the tested range (lowest allowed to locked):")
    for package in behaviour.PACKAGES:
        installed = behaviour.installed_version(package)
        tested = documented["tested"].get(package)
        status = behaviour.version_status(
            installed, tested, lowest.get(behaviour.project_name(package))
        )
        click.echo(f"  {package:<20} {installed or '-':<10} {status}")
    measured = behaviour.measured_with(documented)
    click.echo(f"the SDK readers, served the fault rows (documented with {measured}):")
    changes = []
    for provider in chosen:
        now = behaviour.measure(provider)
        found = behaviour.changed_rows(provider, now, documented["rows"].get(provider, {}))
        readers = _readers(len(behaviour.READERS[provider]))
        verdict = "as documented" if not found else f"{len(found)} differ"
        click.echo(f"  {provider}: {len(now)} rows x {readers}, {verdict}")
        for change in found:
            click.echo(f"    {change}")
        changes.extend(found)
        for host in behaviour.hosts(provider):  # its clients on Bedrock, Vertex: the same rows
            then = documented["rows"].get(provider, {})
            on_host = f"{provider} on {host}"
            missing = behaviour.host_unusable(provider, host)
            if missing is not None:  # its extra is not installed: nothing to compare
                click.echo(f"  {on_host}: not checked: {missing}")
                continue
            found = behaviour.changed_rows(on_host, behaviour.measure(provider, host), then)
            verdict = "as documented" if not found else f"{len(found)} differ"
            click.echo(f"  {on_host}: {len(now)} rows x {readers}, {verdict}")
            for change in found:
                click.echo(f"    {change}")
            changes.extend(found)
    sys.exit(Exit.FAILED if changes else Exit.OK)
