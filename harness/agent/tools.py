"""Tools the agent loop runs, and their definitions (name, description, JSON Schema).

The adapter only checks that a tool's input is a JSON object; the fields are the tool's
business: `execute` starts with `string_field(input, "path")`. A tool reports its own
failures by raising `ToolError`, which the loop turns into an `is_error` tool result.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from harness._exceptions import ToolError
from harness.agent.signal import AbortSignal

__all__ = ["TOOL_FACTORIES", "ReadTool", "Tool", "ToolDefinition", "ToolError", "string_field"]

#: A file larger than this is refused rather than sent to the model whole.
MAX_READ_BYTES = 256 * 1024


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    """What the model is told about a tool: the API's `tools` entry."""

    name: str
    description: str
    input_schema: dict[str, Any]

    def to_api(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
        }


class Tool(Protocol):
    """A tool: its definition, and `execute` returning the text result or raising `ToolError`."""

    @property
    def definition(self) -> ToolDefinition: ...

    async def execute(self, input: Mapping[str, Any], signal: AbortSignal | None) -> str: ...


def string_field(input: Mapping[str, Any], name: str) -> str:
    """The field `name` of a tool input, which must be a non-empty string."""
    value = input.get(name)
    if not isinstance(value, str):
        found = _json_kind(value) if name in input else "nothing"
        raise ToolError(f"input field {name!r} must be a string, got {found}")
    if not value:
        raise ToolError(f"input field {name!r} must not be empty")
    return value


def _json_kind(value: object) -> str:
    """The JSON name of a parsed value's type, for error messages the model can act on."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return "an array" if isinstance(value, list) else "an object"


READ_DEFINITION = ToolDefinition(
    name="read",
    description=(
        "Read a UTF-8 text file. `path` is relative to the workspace root; "
        "paths outside the root are refused."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File path relative to the workspace root"}
        },
        "required": ["path"],
        "additionalProperties": False,
    },
)


class ReadTool:
    """`read`: the text of a file below `root`; symlinks are resolved before the root check."""

    definition = READ_DEFINITION

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root).resolve()

    async def execute(self, input: Mapping[str, Any], signal: AbortSignal | None) -> str:
        path = string_field(input, "path")
        try:
            return self._read(path)
        except (OSError, RuntimeError, ValueError) as error:
            # The OS's own message names the absolute path, and with it the root: the
            # model and the transcript are told the reason alone, about the path it gave.
            reason = getattr(error, "strerror", None) or _reason(error)
            raise ToolError(f"{path}: cannot read: {reason}") from None

    def _read(self, path: str) -> str:
        target = (self.root / path).resolve()
        if not target.is_relative_to(self.root):
            raise ToolError(f"{path}: outside the workspace root, refused")
        if not target.exists():
            raise ToolError(f"{path}: no such file")
        if not target.is_file():
            raise ToolError(f"{path}: not a regular file")
        size = target.stat().st_size
        if size > MAX_READ_BYTES:
            raise ToolError(f"{path}: {size} bytes, larger than the {MAX_READ_BYTES}-byte limit")
        data = target.read_bytes()
        if b"\x00" in data:
            raise ToolError(f"{path}: binary content, not a text file")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise ToolError(f"{path}: not UTF-8 text") from None


def _reason(error: Exception) -> str:
    """Why a path could not be read, without the path (which the OS gives absolute)."""
    if isinstance(error, RuntimeError):  # pathlib's "Symlink loop from '/abs/path'"
        return "symbolic link loop"
    if isinstance(error, ValueError):  # "embedded null byte"
        return "not a usable path"
    return type(error).__name__


#: Tool name (as `session.json` lists it) -> constructor taking the workspace root.
TOOL_FACTORIES: Mapping[str, type[ReadTool]] = {"read": ReadTool}
