"""The first OpenAI test docs/openai.md walks through passes as a user runs it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "python" / "test_openai_first.py"


def test_the_first_openai_test_passes_on_the_answer_and_every_broken_variant() -> None:
    ran = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(EXAMPLE)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    summary = ran.stdout.strip().splitlines()[-1]
    assert summary.startswith("27 passed"), summary
    page = (ROOT / "docs" / "openai.md").read_text(encoding="utf-8")
    assert "pytest examples/python/test_openai_first.py    # 27 passed" in page
