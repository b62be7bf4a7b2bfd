"""`ProviderChoice`: a `--provider` option's choices, the registered providers' names.

Read from the provider registry when the option is parsed or its help is shown, not
when the command line is imported: a provider registered by an entry point
(docs/providers.md) is a choice as the built-in ones are.
"""

from __future__ import annotations

from typing import Any

import click

__all__ = ["ProviderChoice"]


class ProviderChoice(click.Choice):  # type: ignore[type-arg]
    """`click.Choice` over every registered provider's name, read when first needed."""

    def __init__(self) -> None:  # the choices are the registry's, read later
        self.case_sensitive = True

    @property
    def choices(self) -> tuple[Any, ...]:  # type: ignore[override]
        from harness._providers import names

        return names()
