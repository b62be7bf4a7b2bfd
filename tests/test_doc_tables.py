"""The helper the docs' generated tables are checked and written with (tests/doc_tables.py):
a marked block read and written, the version line never compared, and a changed table
reported row by row, each row named, with the releases documented and installed."""

from __future__ import annotations

from pathlib import Path

import doc_tables
import pytest
from doc_tables import Block, changed_rows, check, read_block, version_line, write_block

DOC = """# A page

Prose above.

<!-- readers-table -->
Measured with anthropic 2.14.0, litellm 1.110.0 (`make tables`).

| API | reader | accepted | strict |
|---|---|---|---|
| chat | create | 30 | 0 |
| chat | stream | 27 | 0 |
| responses | create | 33 | 0 |
<!-- /readers-table -->

Prose below.
"""
HEADER = "| API | reader | accepted | strict |\n|---|---|---|---|\n"
ROWS = (
    HEADER
    + "| chat | create | 30 | 0 |\n| chat | stream | 27 | 0 |\n| responses | create | 33 | 0 |\n"
)
NEW_RELEASES = "Measured with anthropic 2.17.0, litellm 1.111.0 (`make tables`)."


def _doc(tmp_path: Path) -> Path:
    doc = tmp_path / "page.md"
    doc.write_text(DOC, encoding="utf-8")
    return doc


def test_a_block_is_read_between_its_markers_and_written_leaving_the_rest_alone() -> None:
    assert read_block(DOC, "readers-table").startswith("Measured with anthropic 2.14.0")
    assert read_block(DOC, "readers-table").endswith("| responses | create | 33 | 0 |\n")
    written = write_block(DOC, "readers-table", "new body\n")
    assert written == DOC.replace(read_block(DOC, "readers-table"), "new body\n")
    assert read_block(written, "readers-table") == "new body\n"
    with pytest.raises(AssertionError, match="no block <!-- other-table -->"):
        read_block(DOC, "other-table")


def test_the_version_line_names_each_release_installed_or_not() -> None:
    line = version_line(("pytest", "no-such-distribution-here"))
    assert line.startswith(f"Measured with pytest {pytest.__version__}, ")
    assert line.endswith("no-such-distribution-here not installed (`make tables`).")
    assert "no-such-package (npm)" not in version_line(npm=("no-such-package",))
    assert "no-such-package not installed (npm)" in version_line(npm=("no-such-package",))


def test_new_releases_that_behave_the_same_pass(tmp_path: Path) -> None:
    check(_doc(tmp_path), Block("readers-table", NEW_RELEASES, ROWS, key_cells=2))


def test_a_changed_table_fails_naming_each_changed_row_and_the_releases(
    tmp_path: Path,
) -> None:
    now = ROWS.replace("| chat | stream | 27 | 0 |", "| chat | stream | 26 | 0 |")
    now = now.replace("| responses | create | 33 | 0 |\n", "") + "| responses | stream | 12 | 0 |\n"
    with pytest.raises(AssertionError) as failed:
        check(_doc(tmp_path), Block("readers-table", NEW_RELEASES, now, key_cells=2))
    message = str(failed.value)
    assert message.startswith(f"{tmp_path / 'page.md'}, <!-- readers-table -->: 3 rows differ")
    assert (
        "  chat | stream\n"
        "    documented: | chat | stream | 27 | 0 |\n"
        "    now:        | chat | stream | 26 | 0 |\n"
        "  responses | stream\n"
        "    documented: (no such row)\n"
        "    now:        | responses | stream | 12 | 0 |\n"
        "  responses | create\n"
        "    documented: | responses | create | 33 | 0 |\n"
        "    now:        (no such row)\n"
        "  documented: Measured with anthropic 2.14.0, litellm 1.110.0 (`make tables`).\n"
        f"  installed:  {NEW_RELEASES}\n"
    ) in message
    assert "chat | create" not in message
    assert "make tables" in message.splitlines()[-1]


def test_rows_are_keyed_by_their_first_cells_or_a_list_items_name() -> None:
    documented = ["- pydantic-ai: `text/cut`", "- litellm: none", "**anthropic**"]
    now = ["- pydantic-ai: `text/cut`, `text/stop`", "- litellm: none", "**anthropic**"]
    (change,) = changed_rows(documented, now)
    assert change.row == "pydantic-ai"
    assert changed_rows(documented, [*reversed(documented)])[0].row == "(row order)"
    with pytest.raises(ValueError, match="two rows named 'chat'"):
        changed_rows(["| chat | create |", "| chat | stream |"], [])


def test_a_row_holds_where_the_test_says_it_does(tmp_path: Path) -> None:
    def racy(documented: str, now: str) -> bool:
        return documented == now or "varies" in documented

    doc = _doc(tmp_path)
    doc.write_text(DOC.replace("| chat | create | 30 | 0 |", "| chat | create | varies | 0 |"))
    check(doc, Block("readers-table", NEW_RELEASES, ROWS, key_cells=2, same=racy))
    with pytest.raises(AssertionError, match="1 row differs"):
        check(doc, Block("readers-table", NEW_RELEASES, ROWS, key_cells=2))


def test_writing_replaces_the_rows_and_the_version_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(doc_tables, "WRITING", True)
    doc = _doc(tmp_path)
    now = ROWS.replace("| chat | stream | 27 | 0 |", "| chat | stream | 26 | 0 |")
    check(doc, Block("readers-table", NEW_RELEASES, now, key_cells=2))
    assert doc.read_text() == DOC.replace(
        read_block(DOC, "readers-table"), f"{NEW_RELEASES}\n\n{now}"
    )
    monkeypatch.setattr(doc_tables, "WRITING", False)
    check(doc, Block("readers-table", NEW_RELEASES, now, key_cells=2))


def test_what_a_table_needs_is_skipped_without_it_and_fails_the_writer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    doc_tables.require(None)
    with pytest.raises(pytest.skip.Exception, match="litellm not installed"):
        doc_tables.require("litellm not installed")
    monkeypatch.setattr(doc_tables, "WRITING", True)
    with pytest.raises(pytest.fail.Exception, match="cannot write the table: litellm"):
        doc_tables.require("litellm not installed")
