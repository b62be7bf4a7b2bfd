"""What `harness conform --provider thin` tells an adapter beside the lines: nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

#: Its default cases: the library beside the package.
LIBRARY: Final = Path(__file__).resolve().parent.parent / "cassettes"
REQUEST: Final[dict[str, Any]] = {}
POLICY: Final[dict[str, Any]] = {}


def variants(name: str, lines: list[dict[str, Any]]) -> list[Any]:
    return []
