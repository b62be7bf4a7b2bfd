"""What `harness conform` needs to know of each provider: asked of the registry.

`harness conform --provider NAME` judges an adapter of one provider's dialect. What
differs between them is the provider's own, looked up by its name (a cassette header's
`provider`): where its default cases come from and whether it speaks conform's case
protocol (its `conform` module: `LIBRARY`, the request fields and policy its rules read,
and the variants they make), the environment a `--serve` command is pointed with (its
SDK's `client_env`), its wire (`framing`) and its fault catalogue (`faults`). The
default provider's cases are conform's own, as before there were others: no `conform`
module, no header line, the harness's cassette library (`library_path()`).

`fault_variants` is the hook for a provider's fault catalogue: a provider whose package
has a `faults` module is asked through `harness.faults.derive_variants(events,
provider=NAME)`, and one without gives no variant (its library's cassettes alone are
its cases).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Final

import harness
from harness._exceptions import ANTHROPIC as _DEFAULT, InputError
from harness._providers import Provider, names, provider
from harness._providers.wire import ClientEnv

__all__ = [
    "ANTHROPIC",
    "Dialect",
    "conform_module",
    "dialect",
    "fault_variants",
    "library_path",
]

#: The default provider: conform's own cases, no header line.
ANTHROPIC: Final = _DEFAULT


def library_path() -> Path:
    """The cassette library: `harness/_library/` in an installed wheel, `cassettes/` in a
    checkout (the same files: setup.py copies them at build time)."""
    package = Path(harness.__file__).parent
    shipped = package / "_library"
    return shipped if shipped.is_dir() else package.parent / "cassettes"


@dataclass(frozen=True, slots=True)
class Dialect:
    """One provider as `harness conform` sees it."""

    found: Provider

    @property
    def name(self) -> str:
        return self.found.name

    @property
    def own_cases(self) -> bool:
        """Whether the case header line, the request and the policy apply: the provider
        has a `conform` module (every one but the default)."""
        return self.found.has("conform")

    @property
    def library(self) -> Path | None:
        """Its default cases' folder (its `conform.LIBRARY`: a path, or a folder of the
        harness's cassette library); None: the harness's cassette library (the default
        provider's)."""
        if not self.own_cases:
            return None
        where = self.found.module("conform").LIBRARY
        return where if isinstance(where, Path) else library_path() / where

    @property
    def client_env(self) -> ClientEnv:
        """The variables a `--serve` command reads (the base URL, the API key), and what
        follows the server's URL in the base URL: the provider's SDK's `client_env`."""
        return self.found.client_env


def dialect(name: str) -> Dialect:
    """The provider `name` as conform sees it; `InputError` (naming the known) if none."""
    try:
        return Dialect(provider(name))
    except KeyError:
        raise InputError(
            f"--provider {name}: no such provider (known: {', '.join(names())})"
        ) from None


def conform_module(name: str) -> ModuleType:
    """The provider's `conform` module: `REQUEST`, `POLICY`, `variants(name, lines)`."""
    return provider(name).module("conform")


def fault_variants(name: str, events: list[dict[str, Any]]) -> list[Any]:
    """The fault variants of a good stream of provider `name` (`harness.faults.Variant`s),
    or none when the provider has no fault catalogue."""
    from harness import faults

    if not provider(name).has("faults"):
        return []
    return list(faults.derive_variants(events, provider=name))
