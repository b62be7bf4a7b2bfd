"""Writes tests/cassettes/test_chat.yaml, the vcrpy cassette the README imports.

Recorded by vcrpy against the fake Messages API (tests/fake_api.py) serving
cassettes/interleaved.jsonl: a `GET /status`, then a streamed Messages call, as a
project's own test would make them. Run from the repository root.
"""

from pathlib import Path

import httpx2
import vcr
from anthropic import Anthropic
from fake_api import FakeMessagesAPI

from harness import read_cassette

HERE = Path(__file__).resolve().parent
OUT = HERE / "cassettes" / "test_chat.yaml"


def main() -> None:
    events = list(read_cassette("cassettes/interleaved.jsonl").events())
    OUT.unlink(missing_ok=True)
    with FakeMessagesAPI(events) as api:
        recorder = vcr.VCR(record_mode="all", filter_headers=["x-api-key", "authorization"])
        with recorder.use_cassette(str(OUT)):
            httpx2.get(f"{api.base_url}/status").raise_for_status()
            client = Anthropic(api_key="dummy-key", base_url=api.base_url, max_retries=0)
            with client:
                stream = client.messages.create(
                    model="claude-harness-test",
                    max_tokens=1024,
                    messages=[{"role": "user", "content": "Read notes/a.md and notes/b.md"}],
                    stream=True,
                )
                for _ in stream:
                    pass


if __name__ == "__main__":
    main()
