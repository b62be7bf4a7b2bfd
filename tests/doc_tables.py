"""The docs' tables of what the installed SDK releases and frameworks do with broken
streams: written by the tests that measure them, and compared with them row by row.

A table lives in a doc between `<!-- NAME -->` and `<!-- /NAME -->`: a first line naming
the releases it was measured with (`Measured with anthropic 2.17.0, ... (`make tables`).`),
a blank line, then its rows (a Markdown table, or a list). With `HARNESS_WRITE_TABLES=1`
(`make tables`) a test writes its blocks from what it measured; otherwise it compares.
The version line is written, never compared, so a new release that behaves the same
passes; a release that behaves otherwise fails the test naming each row that changed
(documented, then now) and the releases documented and installed.

A row is named by its key: a table row's first `key_cells` cells, a list item's text
before its first colon, any other line by itself.
"""

from __future__ import annotations

import json
import operator
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import pytest
from conftest import NODE_MODULES, ROOT
from filelock import FileLock

#: The environment variable that turns the table tests into writers (`make tables`).
WRITE_VARIABLE = "HARNESS_WRITE_TABLES"
WRITING = os.environ.get(WRITE_VARIABLE) == "1"
VERSION_PREFIX = "Measured with "
#: Read-modify-write of a doc is one test at a time (two files write docs/strict.md).
_LOCK = Path(tempfile.gettempdir()) / "stream-harness-doc-tables.lock"


def python_version(package: str) -> str:
    """The installed release of a Python distribution, or `not installed`."""
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def npm_version(package: str, modules: Path = NODE_MODULES) -> str:
    """The release of an npm package installed under `modules` (`make node`), or `not
    installed`."""
    manifest = modules / package / "package.json"
    if not manifest.exists():
        return "not installed"
    return str(json.loads(manifest.read_text(encoding="utf-8"))["version"])


def node_version() -> str:
    """The node runtime's version (`node --version`, without its `v`), or `not installed`."""
    node = shutil.which("node")
    if node is None:
        return "not installed"
    found = subprocess.run([node, "--version"], capture_output=True, text=True, check=True)
    return found.stdout.strip().removeprefix("v")


def version_line(
    python: tuple[str, ...] = (), npm: tuple[str, ...] = (), *, node: bool = False
) -> str:
    """The line a block opens with: the installed releases of what its table depends on."""
    named = [f"{package} {python_version(package)}" for package in python]
    named += [f"{package} {npm_version(package)} (npm)" for package in npm]
    if node:
        named.append(f"node {node_version()}")
    return f"{VERSION_PREFIX}{', '.join(named)} (`make tables`)."


def _markers(name: str) -> re.Pattern[str]:
    return re.compile(rf"(<!-- {re.escape(name)} -->\n)(.*?)(<!-- /{re.escape(name)} -->)", re.S)


def read_block(text: str, name: str) -> str:
    """What a doc holds between `<!-- name -->` and `<!-- /name -->`."""
    found = _markers(name).search(text)
    if found is None:
        raise AssertionError(f"no block <!-- {name} --> ... <!-- /{name} --> in the doc")
    return found.group(2)


def write_block(text: str, name: str, body: str) -> str:
    """The doc `text` with the block `name` holding `body` instead."""
    read_block(text, name)
    return _markers(name).sub(lambda found: found.group(1) + body + found.group(3), text, count=1)


def split_block(body: str) -> tuple[str | None, list[str]]:
    """A block's version line (None if it has none) and its rows, blank lines left out."""
    lines = [line for line in body.splitlines() if line.strip()]
    if lines and lines[0].startswith(VERSION_PREFIX):
        return lines[0], lines[1:]
    return None, lines


def cells(line: str) -> list[str]:
    """A Markdown table row's cells, stripped."""
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def row_key(line: str, key_cells: int = 1) -> str:
    """What names a row: a table row's first `key_cells` cells, a list item's text before
    its first colon, any other line itself."""
    if line.startswith("|"):
        return " | ".join(cells(line)[:key_cells])
    if line.startswith("- ") and ":" in line:
        return line[2:].split(":", 1)[0]
    return line


@dataclass(frozen=True, slots=True)
class Change:
    """A row that differs: its key, and the line documented and now (None where absent)."""

    row: str
    documented: str | None
    now: str | None

    def __str__(self) -> str:
        return (
            f"  {self.row}\n"
            f"    documented: {self.documented or '(no such row)'}\n"
            f"    now:        {self.now or '(no such row)'}"
        )


def changed_rows(
    documented: list[str],
    now: list[str],
    *,
    key_cells: int = 1,
    same: Callable[[str, str], bool] = operator.eq,
) -> list[Change]:
    """Each row whose line differs (`same(documented, now)` false), is new or is gone, by
    key, in the order of the rows now; a reordering alone is one change, `(row order)`."""
    then = _keyed(documented, key_cells)
    found = _keyed(now, key_cells)
    changes = [
        Change(key, then.get(key), line)
        for key, line in found.items()
        if key not in then or not same(then[key], line)
    ]
    changes += [Change(key, line, None) for key, line in then.items() if key not in found]
    if not changes and list(then) != list(found):
        changes.append(Change("(row order)", ", ".join(then), ", ".join(found)))
    return changes


def _keyed(lines: list[str], key_cells: int) -> dict[str, str]:
    keyed: dict[str, str] = {}
    for line in lines:
        key = row_key(line, key_cells)
        if key in keyed:
            raise ValueError(f"two rows named {key!r}: {keyed[key]!r} and {line!r}")
        keyed[key] = line
    return keyed


@dataclass(frozen=True, slots=True)
class Block:
    """A table a test measured: its marker's name, the version line, the rows (one a line),
    how many leading cells name a row, and when a documented line still holds for one now."""

    name: str
    versions: str
    rows: str
    key_cells: int = 1
    same: Callable[[str, str], bool] = operator.eq

    @property
    def body(self) -> str:
        return f"{self.versions}\n\n{self.rows}"


def differences(text: str, block: Block, shown_as: str = "the doc") -> str | None:
    """Why the doc's block no longer says what was measured, naming each row that changed
    and the releases documented and installed; None when every row holds."""
    versions, documented = split_block(read_block(text, block.name))
    changes = changed_rows(
        documented, split_block(block.body)[1], key_cells=block.key_cells, same=block.same
    )
    if not changes:
        return None
    rows = "row differs" if len(changes) == 1 else "rows differ"
    return "\n".join(
        [
            f"{shown_as}, <!-- {block.name} -->: {len(changes)} {rows} from what the "
            "installed releases do",
            *map(str, changes),
            f"  documented: {versions or '(no version line)'}",
            f"  installed:  {block.versions}",
        ]
    )


def check(doc: Path, *blocks: Block) -> None:
    """Compare each block with the doc, failing with every changed row of every block; with
    `HARNESS_WRITE_TABLES=1`, write them into the doc instead."""
    shown_as = doc.relative_to(ROOT).as_posix() if doc.is_relative_to(ROOT) else str(doc)
    if WRITING:
        with FileLock(str(_LOCK)):
            text = doc.read_text(encoding="utf-8")
            for block in blocks:
                text = write_block(text, block.name, block.body)
            doc.write_text(text, encoding="utf-8")
        return
    text = doc.read_text(encoding="utf-8")
    found = [why for block in blocks if (why := differences(text, block, shown_as)) is not None]
    if found:
        found.append(
            "If the release changed it, rewrite the tables (`make tables`, which sets "
            f"{WRITE_VARIABLE}=1) and review their diff."
        )
        raise AssertionError("\n".join(found))


def require(missing: str | None) -> None:
    """Skip a table's test where what it measures is not installed; when writing, fail
    instead: a table written without it would be wrong."""
    if missing is None:
        return
    if WRITING:
        pytest.fail(f"cannot write the table: {missing}")
    pytest.skip(missing)
