"""The read tool: fields checked inside the tool, the root never escaped, clear errors."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from harness.agent.tools import MAX_READ_BYTES, ReadTool, ToolError, string_field


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "root"
    (folder / "docs").mkdir(parents=True)
    (folder / "docs" / "a.md").write_text("# A\nhé\n", encoding="utf-8")
    (tmp_path / "secret.txt").write_text("outside")
    return folder


def read(root: Path, input: dict[str, Any]) -> str:
    return asyncio.run(ReadTool(root).execute(input, None))


def test_reads_a_utf8_file_relative_to_the_root(root: Path) -> None:
    assert read(root, {"path": "docs/a.md"}) == "# A\nhé\n"


def test_a_path_inside_the_root_through_dotdot_is_allowed(root: Path) -> None:
    assert read(root, {"path": "docs/../docs/a.md"}) == "# A\nhé\n"


@pytest.mark.parametrize("path", ["../secret.txt", "docs/../../secret.txt", "/etc/hostname"])
def test_a_path_escaping_the_root_is_refused(root: Path, path: str) -> None:
    with pytest.raises(ToolError, match="outside the workspace root"):
        read(root, {"path": path})


def test_a_symlink_pointing_outside_the_root_is_refused(root: Path) -> None:
    os.symlink(root.parent / "secret.txt", root / "link.txt")
    with pytest.raises(ToolError, match=r"link\.txt: outside the workspace root"):
        read(root, {"path": "link.txt"})


def test_a_symlink_inside_the_root_is_followed(root: Path) -> None:
    os.symlink(root / "docs" / "a.md", root / "alias.md")
    assert read(root, {"path": "alias.md"}) == "# A\nhé\n"


def test_a_root_given_through_a_symlink_still_holds(root: Path, tmp_path: Path) -> None:
    os.symlink(root, tmp_path / "root-link")
    assert read(tmp_path / "root-link", {"path": "docs/a.md"}) == "# A\nhé\n"
    with pytest.raises(ToolError, match="outside"):
        read(tmp_path / "root-link", {"path": "../secret.txt"})


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("image.png", b"\x89PNG\r\n\x1a\n\x00\x00", "image.png: binary content, not a text file"),
        ("latin1.txt", "café".encode("latin-1"), "latin1.txt: not UTF-8 text"),
    ],
    ids=["binary", "not-utf8"],
)
def test_non_text_content_is_a_clear_error(
    root: Path, name: str, content: bytes, message: str
) -> None:
    (root / name).write_bytes(content)
    with pytest.raises(ToolError) as error:
        read(root, {"path": name})
    assert str(error.value) == message


def test_a_missing_file_and_a_folder_are_clear_errors(root: Path) -> None:
    with pytest.raises(ToolError, match=r"^docs/b\.md: no such file$"):
        read(root, {"path": "docs/b.md"})
    with pytest.raises(ToolError, match=r"^docs: not a regular file$"):
        read(root, {"path": "docs"})


def test_a_file_over_the_size_limit_is_refused(root: Path) -> None:
    (root / "big.txt").write_bytes(b"x" * (MAX_READ_BYTES + 1))
    with pytest.raises(ToolError, match="larger than the"):
        read(root, {"path": "big.txt"})


@pytest.mark.parametrize(
    ("input", "message"),
    [
        ({}, "input field 'path' must be a string, got nothing"),
        ({"path": 42}, "input field 'path' must be a string, got a number"),
        ({"path": None}, "input field 'path' must be a string, got null"),
        ({"path": ["a.md"]}, "input field 'path' must be a string, got an array"),
        ({"path": ""}, "input field 'path' must not be empty"),
    ],
    ids=["missing", "number", "null", "array", "empty"],
)
def test_the_path_field_is_checked_inside_the_tool(
    root: Path, input: dict[str, Any], message: str
) -> None:
    with pytest.raises(ToolError) as error:
        read(root, input)
    assert str(error.value) == message


def test_string_field_returns_the_value() -> None:
    assert string_field({"path": "a.md", "other": 1}, "path") == "a.md"


def test_the_definition_sent_to_the_model_is_a_json_schema_requiring_path(root: Path) -> None:
    definition = ReadTool(root).definition.to_api()
    assert set(definition) == {"name", "description", "input_schema"}
    assert definition["name"] == "read"
    schema = definition["input_schema"]
    Draft202012Validator.check_schema(schema)
    validator = Draft202012Validator(schema)
    assert validator.is_valid({"path": "a.md"})
    assert not validator.is_valid({})
    assert not validator.is_valid({"path": 42})
