"""How a trace row names a thin line."""

from __future__ import annotations

from typing import Any

from thin_dialect.adapter import ThinAdapter

__all__ = ["arguments", "compared", "describe", "machine", "open_items", "shown_text"]


def describe(
    data: dict[str, Any], nothing: object, *, short: bool = False
) -> tuple[str, int | None, str, object]:
    kind = str(data.get("kind"))
    return kind, None, kind, data.get("text", nothing)


def machine(**options: Any) -> ThinAdapter:
    return ThinAdapter()


def compared(data: dict[str, Any], *, ids: bool) -> object:
    return None


def open_items(adapter: ThinAdapter, limit: int) -> tuple[tuple[int, ...], int]:
    return (), 0


def shown_text(data: dict[str, Any]) -> str:
    text = data.get("text")
    return text if data.get("kind") == "text" and isinstance(text, str) else ""


def arguments(data: dict[str, Any]) -> list[tuple[int, str]]:
    """No pieces: a thin call comes whole, its index its place among the calls."""
    return []
