"""What `harness conform` needs to know of each provider, said in one place.

`harness conform --provider NAME` judges an adapter of one provider's dialect. What
differs between them is here, looked up by the provider's name (a cassette header's
`provider`): where its default cases come from, the environment a `--serve` command is
pointed with, and the provider's own modules conform reads (`conform`: the request
fields and policy its rules read, and the variants they make; its wire is
`provider(name).framing`). Anthropic's cases are conform's own, as before: no header line, its
library `harness._testing.conform.library_path()`. When the provider registry learns
these facts, `DIALECTS` folds into it.

`fault_variants` is the hook for a provider's fault catalogue: Anthropic's catalogue
(`harness.faults`) today; a provider whose subpackage has a `faults` module is asked
through `harness.faults.derive_variants(events, provider=NAME)`, and one without gives
no variant (its library's cassettes alone are its cases).
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Final

import harness
from harness._exceptions import InputError
from harness._providers import PACKAGES, provider
from harness._providers.wire import ClientEnv

__all__ = [
    "ANTHROPIC",
    "DIALECTS",
    "OPENAI_LIBRARY",
    "Dialect",
    "conform_module",
    "dialect",
    "fault_variants",
    "library_path",
]

ANTHROPIC: Final = "anthropic"


def library_path() -> Path:
    """The cassette library: `harness/_library/` in an installed wheel, `cassettes/` in a
    checkout (the same files: setup.py copies them at build time)."""
    package = Path(harness.__file__).parent
    shipped = package / "_library"
    return shipped if shipped.is_dir() else package.parent / "cassettes"


#: The OpenAI cassette library (`chat/`, `responses/`), inside the cassette library.
OPENAI_LIBRARY: Final = library_path() / "openai"


@dataclass(frozen=True, slots=True)
class Dialect:
    """One provider as `harness conform` sees it."""

    name: str
    #: its default cases' folder; None: the harness's cassette library (Anthropic's)
    library: Path | None

    @property
    def client_env(self) -> ClientEnv:
        """The variables a `--serve` command reads (the base URL, the API key), and what
        follows the server's URL in the base URL: the provider's `framing.client_env`."""
        return provider(self.name).framing.client_env

    @property
    def own_cases(self) -> bool:
        """Whether the case header line, the request and the policy apply (not Anthropic)."""
        return self.library is not None


DIALECTS: Final[dict[str, Dialect]] = {
    ANTHROPIC: Dialect(ANTHROPIC, None),
    "openai-chat": Dialect("openai-chat", OPENAI_LIBRARY / "chat"),
    "openai-responses": Dialect("openai-responses", OPENAI_LIBRARY / "responses"),
}


def dialect(name: str) -> Dialect:
    """The provider `name` as conform sees it; `InputError` (naming the known) if none."""
    found = DIALECTS.get(name)
    if found is None:
        raise InputError(f"--provider {name}: no such provider (known: {', '.join(DIALECTS)})")
    return found


def conform_module(name: str) -> ModuleType:
    """The provider's `conform` module: `REQUEST`, `POLICY`, `variants(name, lines)`."""
    return provider(name).module("conform")


def fault_variants(name: str, events: list[dict[str, Any]]) -> list[Any]:
    """The fault variants of a good stream of provider `name` (`harness.faults.Variant`s),
    or none when the provider has no fault catalogue yet."""
    from harness import faults

    if name == ANTHROPIC:
        return faults.derive_variants(events)
    if importlib.util.find_spec(f"harness._providers.{PACKAGES[name]}.faults") is None:
        return []
    derive: Any = faults.derive_variants
    return list(derive(events, provider=name))
