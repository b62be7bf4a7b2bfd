"""The first OpenAI test docs/openai.md walks through passes as a user runs it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "python" / "test_openai_first.py"


@pytest.mark.slow
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


def test_the_example_projects_session_is_what_its_script_writes(tmp_path: Path) -> None:
    """examples/openai_project's cassettes are the ones write_weather.py writes, byte for byte."""
    cassettes = ROOT / "examples" / "openai_project" / "tests" / "cassettes"
    subprocess.run(
        [sys.executable, str(cassettes / "write_weather.py"), str(tmp_path)],
        check=True,
        capture_output=True,
        timeout=60,
    )
    shipped = sorted(path.name for path in (cassettes / "weather").iterdir())
    assert shipped == ["turn-01.jsonl", "turn-02.jsonl"]
    for name in shipped:
        assert (tmp_path / name).read_bytes() == (cassettes / "weather" / name).read_bytes()
