"""docs/import.md's examples, run as written: every shown output is what the command prints.

An example is a 4-space-indented block: `    $ COMMAND` lines, each followed by its
exact output (stdout and stderr as a terminal shows them). They run in order from the
repository root, with this environment's `harness` first on PATH.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

DOC = ROOT / "docs" / "import.md"
SCRATCH = Path("/tmp/harness-docs")  # the folder the examples write to


def _examples() -> list[tuple[str, str]]:
    """(command, expected output) in document order."""
    examples: list[tuple[str, list[str]]] = []
    output: list[str] | None = None
    for line in DOC.read_text().splitlines():
        if line.startswith("    $ "):
            output = []
            examples.append((line.removeprefix("    $ "), output))
        elif output is not None and line.startswith("    "):
            output.append(line.removeprefix("    "))
        else:
            output = None
    return [(command, "".join(f"{line}\n" for line in lines)) for command, lines in examples]


@pytest.mark.slow
def test_every_example_in_docs_import_prints_what_the_docs_show() -> None:
    shutil.rmtree(SCRATCH, ignore_errors=True)
    environment = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    examples = _examples()
    assert len(examples) >= 8
    for command, expected in examples:
        shown = subprocess.run(
            ["bash", "-c", command],
            cwd=ROOT,
            env=environment,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            check=False,
        ).stdout
        assert shown == expected, command
