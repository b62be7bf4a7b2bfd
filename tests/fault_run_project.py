"""A project whose fault run reaches most verdicts, for the tests of `--harness-report`
(tests/test_report.py) and of its page in a browser (tests/test_browser.py).

Its cassette's text is hostile markup, and so is a reason of its `accept=`: the report
shows both (a failure's message quotes what the code returned), escaped.
"""

from __future__ import annotations

from pathlib import Path

from harness.builder import StreamBuilder

#: The cassette's whole text: what a page that did not escape it would run.
HOSTILE_TEXT = "</script><script>window.pwned=1</script>"
#: A reason of the marker's `accept=`, shown in its cell.
HOSTILE_REASON = '<img src=x onerror="window.pwned=2"> is shown as it comes'

INI = "[pytest]\naddopts = --strict-markers -p no:cacheprovider\nfilterwarnings = error\n"

TESTS = f'''
import pytest
from harness import StreamProtocolError


class Refused(Exception):
    """What careful() raises when the answer cannot be had."""


def summarize(client):
    with client.messages.stream(
        model="claude-sonnet-5", max_tokens=64, messages=[{{"role": "user", "content": "Sum up"}}]
    ) as stream:
        return "".join(stream.text_stream)


def careful(client):
    try:
        return summarize(client)
    except Exception as error:
        raise Refused(f"no summary: {{type(error).__name__}}") from error


@pytest.mark.cassette("hostile", accept={{"drop_stop_reason": {HOSTILE_REASON!r}}})
def test_summarize(harness_client, fault_variant):
    with fault_variant.expect_failure(StreamProtocolError):
        summarize(harness_client)


@pytest.mark.cassette("hostile")
def test_careful(harness_client, fault_variant):
    with fault_variant.expect_failure(Refused):
        careful(harness_client)


@pytest.mark.cassette("hostile")
def test_adapter(fault_variant):
    fault_variant.assert_caught()
'''


def write_project(folder: Path) -> None:
    """The project's files in `folder`: pytest.ini, test_inner.py, cassettes/hostile.jsonl."""
    (folder / "pytest.ini").write_text(INI, encoding="utf-8")
    (folder / "test_inner.py").write_text(TESTS, encoding="utf-8")
    (folder / "cassettes").mkdir(exist_ok=True)
    StreamBuilder().text(0, HOSTILE_TEXT).stop().write(
        folder / "cassettes" / "hostile.jsonl", "one text block of markup"
    )
