"""One header builder: every writer of a cassette builds its header with `make_header`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from harness import make_header


def test_a_request_is_kept_without_credentials_and_names_the_model() -> None:
    request = {"model": "claude-sonnet-5", "api_key": "sk-ant-secret", "stream": True}
    header = make_header("d", "recorded", request=request)
    assert header["model"] == "claude-sonnet-5"
    assert "sk-ant-secret" not in str(header)
    assert "stream" not in header["request"]  # a transport field, not the request's own


def test_a_model_given_wins_over_the_requests() -> None:
    assert make_header("d", request={"model": "a"}, model="b")["model"] == "b"
    assert "model" not in make_header("d", request={"model": 3})


def test_recorded_at_is_utc_to_the_second() -> None:
    moment = datetime(2026, 12, 1, 9, 30, 15, 123456, tzinfo=timezone(timedelta(hours=2)))
    assert make_header("d", recorded_at=moment)["recorded_at"] == "2026-12-01T07:30:15Z"
    assert make_header("d", recorded_at="as given")["recorded_at"] == "as given"
    assert "recorded_at" not in make_header("d")
    assert make_header("d", recorded_at=datetime.now(UTC))["recorded_at"].endswith("Z")


def test_a_request_that_is_not_a_mapping_is_refused() -> None:
    with pytest.raises(TypeError, match="request must be a mapping"):
        make_header("d", request=["not", "a", "request"])
