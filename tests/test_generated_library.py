"""`cassettes/generate.py` reproduces the committed library byte for byte, so it cannot drift."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import LIBRARY


def library_files(folder: Path) -> set[str]:
    """The cassettes `generate.py` owns: the top level and `errors/` (other folders have theirs)."""
    found = [*folder.glob("*.jsonl"), *folder.glob("errors/*.jsonl")]
    return {path.relative_to(folder).as_posix() for path in found}


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("library")
    subprocess.run([sys.executable, str(LIBRARY / "generate.py"), str(out)], check=True)
    return out


def test_generator_writes_exactly_the_committed_cassettes(generated: Path) -> None:
    assert library_files(generated) == library_files(LIBRARY)


@pytest.mark.parametrize("name", sorted(library_files(LIBRARY)))
def test_committed_cassette_is_what_the_generator_writes(generated: Path, name: str) -> None:
    assert (generated / name).read_bytes() == (LIBRARY / name).read_bytes()
