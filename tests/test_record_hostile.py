"""`harness record` against hostile servers: it never lies, never destroys, never hangs.

Every failure is exit 1 and one line ending in "nothing written"; the files given with
--force stay byte for byte and no other file appears. The endless servers stop by
themselves (`FakeMessagesAPI(hold=...)`), so a regression fails instead of hanging.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from fake_api import BODIES, FakeMessagesAPI
from hypothesis import HealthCheck, given, settings, strategies as st

from harness._record.live import record
from harness.builder import StreamBuilder
from harness_cli.main import cli

DUMMY_KEY = "sk-ant-api03-DUMMY-offline-hostile-key-0123456789"
SERVED = StreamBuilder(model="m").text(0, "Hello").stop()
OLD = {"rec.jsonl": b'{"cassette": 1, "old": "cassette"}\n', "rec.vcr.yaml": b"old: vcr\n"}


@pytest.fixture(autouse=True)
def keyed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", DUMMY_KEY)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)


def record_cli(base_url: str, folder: Path, *extra: str, vcr: bool = False) -> Result:
    args = ["record", "--model", "m", "--prompt", "hi", "--base-url", base_url]
    args += ["--out", str(folder / "rec.jsonl"), "--force", *extra]
    if vcr:
        args += ["--vcr", str(folder / "rec.vcr.yaml")]
    return CliRunner().invoke(cli, args)


def plant_old_files(folder: Path) -> None:
    for name, content in OLD.items():
        (folder / name).write_bytes(content)


def assert_nothing_written(folder: Path, result: Result) -> str:
    """Exit 1, one line naming the failure, and the folder exactly as it was."""
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("harness record: ")
    assert lines[0].endswith("nothing written")
    assert {path.name: path.read_bytes() for path in folder.iterdir()} == OLD
    return lines[0]


@pytest.mark.parametrize("vcr", [False, True], ids=["plain", "vcr"])
@pytest.mark.parametrize("behaviour", sorted(BODIES))
def test_a_200_that_is_not_a_stream_of_events_writes_nothing(
    tmp_path: Path, behaviour: str, vcr: bool
) -> None:
    plant_old_files(tmp_path)
    with FakeMessagesAPI(SERVED.events(), behaviour=behaviour) as api:
        result = record_cli(api.base_url, tmp_path, vcr=vcr)
    line = assert_nothing_written(tmp_path, result)
    assert "the response is not a stream of events" in line


@pytest.mark.parametrize("vcr", [False, True], ids=["plain", "vcr"])
@pytest.mark.slow
def test_headers_then_silence_end_at_the_timeout(tmp_path: Path, vcr: bool) -> None:
    plant_old_files(tmp_path)
    with FakeMessagesAPI(SERVED.events(), behaviour="silent") as api:
        result = record_cli(api.base_url, tmp_path, "--timeout", "1", vcr=vcr)
    line = assert_nothing_written(tmp_path, result)
    assert "no byte arrived for 1 s (--timeout) after 0 events" in line


@pytest.mark.parametrize("vcr", [False, True], ids=["plain", "vcr"])
@pytest.mark.slow
def test_keep_alive_comments_without_end_stop_at_the_max_duration(
    tmp_path: Path, vcr: bool
) -> None:
    plant_old_files(tmp_path)
    with FakeMessagesAPI(SERVED.events(), behaviour="keepalive") as api:
        result = record_cli(api.base_url, tmp_path, "--max-duration", "0.5", vcr=vcr)
    line = assert_nothing_written(tmp_path, result)
    assert "took longer than 0.5 s (--max-duration)" in line


@pytest.mark.slow
def test_the_max_duration_holds_outside_the_main_thread_too(tmp_path: Path) -> None:
    import threading

    from harness import RecordError

    caught: list[BaseException] = []

    def run() -> None:
        try:
            record(
                {"model": "m", "max_tokens": 1, "messages": []},
                str(tmp_path / "rec.jsonl"),
                base_url=api.base_url,
                max_duration=0.5,
            )
        except BaseException as error:
            caught.append(error)

    with FakeMessagesAPI(SERVED.events(), behaviour="keepalive") as api:
        worker = threading.Thread(target=run)
        worker.start()
        worker.join(timeout=30)
    assert len(caught) == 1 and isinstance(caught[0], RecordError)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("option", "where"),
    [("--out", "missing/rec.jsonl"), ("--vcr", "missing/rec.vcr.yaml"), ("--out", ".")],
    ids=["out-folder-missing", "vcr-folder-missing", "out-is-a-folder"],
)
def test_an_unwritable_output_is_refused_before_the_billed_request(
    tmp_path: Path, option: str, where: str
) -> None:
    target = str(tmp_path / where)
    with FakeMessagesAPI(SERVED.events()) as api:
        args = ["record", "--model", "m", "--prompt", "hi", "--base-url", api.base_url]
        out = ["--out", str(tmp_path / "rec.jsonl")] if option == "--vcr" else []
        result = CliRunner().invoke(cli, [*args, *out, option, target])
        assert api.received == []
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith(f"harness record: {target}: ")
    assert not (tmp_path / "rec.jsonl").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes in any folder")
def test_a_read_only_folder_is_refused_before_the_billed_request(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir(mode=0o500)
    with FakeMessagesAPI(SERVED.events()) as api:
        result = record_cli(api.base_url, folder)
        assert api.received == []
    assert result.exit_code == 2
    assert "cannot write in" in result.stderr


# -- one redaction, everywhere ----------------------------------------------------------------

SECRET_NAMES = [
    "api_key",
    "Authorization",
    "client_secret",
    "password",
    "x-api-key",
    "access_token",
    "Refresh-Token",
    "session_cookie",
    "aws_secret_access_key",
    "PRIVATE_KEY",
    "passwd",
    "credentials",
    "signature",
]
SAFE_NAMES = ["name", "note", "items", "path", "max_tokens", "budget_tokens", "x"]


def planted(secret: str) -> st.SearchStrategy[Any]:
    """JSON values with `secret` under credential-like names at random depths."""
    leaf = st.one_of(st.integers(0, 9), st.sampled_from(["a", "b"]), st.just(secret))

    def grow(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return st.one_of(
            st.lists(children, max_size=3),
            st.dictionaries(
                st.sampled_from(SAFE_NAMES + SECRET_NAMES), children, min_size=1, max_size=3
            ),
        )

    def secret_holder(name: str, value: Any) -> dict[str, Any]:
        return {name: value}

    holders = st.builds(secret_holder, st.sampled_from(SECRET_NAMES), st.just(secret))
    return st.recursive(st.one_of(leaf, holders), grow, max_leaves=12)


def strip_free_secret(value: Any, secret: str) -> Any:
    """`value` with every `secret` that is not under a credential-like name replaced."""
    if isinstance(value, dict):
        return {
            key: item if key in SECRET_NAMES else strip_free_secret(item, secret)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [strip_free_secret(item, secret) for item in value]
    return "x" if value == secret else value


@pytest.fixture(scope="module")
def server() -> Iterator[FakeMessagesAPI]:
    with FakeMessagesAPI(SERVED.events()) as api:
        yield api


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    metadata=st.data(),
    where=st.sampled_from(["metadata", "tools", "system", "extra"]),
    vcr_suffix=st.sampled_from([".yaml", ".json"]),
)
@pytest.mark.slow
def test_no_planted_secret_reaches_any_file_record_writes(
    server: FakeMessagesAPI,
    tmp_path_factory: pytest.TempPathFactory,
    metadata: st.DataObject,
    where: str,
    vcr_suffix: str,
) -> None:
    secret = "SECRET-" + os.urandom(6).hex()
    value = metadata.draw(planted(secret))
    value = {"api_key": secret, "nested": strip_free_secret(value, secret)}
    request: dict[str, Any] = {
        "model": "m",
        "max_tokens": 16,
        "messages": [{"role": "user", "content": "hi"}],
    }
    if where == "tools":
        request["tools"] = [{"name": "t", "input_schema": {"type": "object"}, **value}]
    elif where == "system":
        request["system"] = [{"type": "text", "text": "s", "headers": value}]
    else:
        request[where] = value
    folder = tmp_path_factory.mktemp("rec")
    out, vcr_path = folder / "rec.jsonl", folder / f"rec.vcr{vcr_suffix}"
    record(request, str(out), api_key=DUMMY_KEY, base_url=server.base_url, vcr_path=str(vcr_path))
    assert secret in json.dumps(server.received[-1].json())  # it was sent...
    for path in (out, vcr_path):
        text = path.read_text()
        assert secret not in text, path  # ...and written nowhere
        assert DUMMY_KEY not in text, path
    assert "max_tokens" in out.read_text()


def test_an_alarm_the_caller_set_is_left_alone(tmp_path: Path) -> None:
    import signal

    def callers_alarm(signum: int, frame: object) -> None:
        raise AssertionError("the caller's alarm went off")

    previous = signal.signal(signal.SIGALRM, callers_alarm)
    signal.setitimer(signal.ITIMER_REAL, 300)
    try:
        with FakeMessagesAPI(SERVED.events()) as api:
            assert record_cli(api.base_url, tmp_path).exit_code == 0
        assert signal.getsignal(signal.SIGALRM) is callers_alarm
        assert signal.getitimer(signal.ITIMER_REAL)[0] > 0
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
