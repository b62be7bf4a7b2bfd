"""`ProviderChoice`: a `--provider` option's choices, the registered providers' names.

Read from the provider registry when the option is parsed or its help is shown, not
when the command line is imported: a provider registered by an entry point
(docs/providers.md) is a choice as the built-in ones are. A command that takes some of
them (those with a fault catalogue) says which, as a function read at the same time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

__all__ = ["ProviderChoice"]


def _every() -> tuple[str, ...]:
    from harness._providers import names

    return names()


class ProviderChoice(click.Choice):  # type: ignore[type-arg]
    """`click.Choice` over the registered providers' names (those `among()` gives: every
    one by default), read when first needed."""

    def __init__(self, among: Callable[[], tuple[str, ...]] = _every) -> None:
        self.case_sensitive = True  # the choices are the registry's, read later
        self._among = among

    @property
    def choices(self) -> tuple[Any, ...]:  # type: ignore[override]
        return self._among()
