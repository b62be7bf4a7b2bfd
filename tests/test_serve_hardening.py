"""Issue 20: `serve` and `proxy` against an unlucky or hostile world, one test a case."""

from __future__ import annotations

import asyncio
import json
import os
import re
import select
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2
import pytest
from aiohttp import web
from conftest import LIBRARY, read_then_close
from test_serve_cli import BODY, HARNESS, KEY, TEXT_ONLY, _whole_stream, running

from harness._http.bounds import LineLog
from harness._http.hosting import (
    MAX_HEADERS,
    TOO_DEEP,
    ServerThread,
    base_url_line,
    harness_app,
)
from harness._http.proxy import RecordingProxy
from harness._http.server import KEPT_REQUEST_BYTES, KEPT_REQUESTS, CassetteServer
from harness._json import MAX_NESTING, held_bytes
from harness._replay.replayer import Replayer

#: What a client sending JSON says it sends (`serve` refuses any other body).
JSON = {"content-type": "application/json"}
#: Streamed answers asked of `serve` while its standard output is full.
ANSWERS_WITH_STDOUT_FULL = 100


def _fill(pipe: int) -> None:
    """Write into `pipe` until it takes no more: its reader now reads nothing."""
    os.set_blocking(pipe, False)
    try:
        while True:
            os.write(pipe, b"." * 65536)
    except BlockingIOError:
        pass
    finally:
        os.set_blocking(pipe, True)


def _read_until(pipe: int, marker: bytes, timeout: float = 30) -> bytes:
    """What `pipe` gives until `marker` has come; fails (does not hang) if it does not."""
    data = b""
    while marker not in data:
        ready, _, _ = select.select([pipe], [], [], timeout)
        assert ready, f"no {marker!r} in what was read: {data[-200:]!r}"
        chunk = os.read(pipe, 65536)
        assert chunk, f"the pipe closed before {marker!r}"
        data += chunk
    return data


def test_a_log_nobody_reads_never_blocks_and_counts_what_it_dropped() -> None:
    read_end, write_end = os.pipe()
    with os.fdopen(write_end, "w") as stream:
        _fill(write_end)
        log = LineLog(stream, backlog=10)
        for number in range(1000):
            log(f"line {number}")  # returns at once although the pipe is full
        got = _read_until(read_end, b"not read)\n").decode().lstrip(".").splitlines()
        log.close()
    os.close(read_end)
    shown = [line for line in got if line.startswith("line ")]
    (dropped,) = (line for line in got if "dropped" in line)
    count = re.fullmatch(r"\((\d+) log lines dropped: standard output was not read\)", dropped)
    assert count is not None, dropped
    assert len(shown) + int(count.group(1)) == 1000
    assert shown == [f"line {number}" for number in range(len(shown))]


def test_log_lines_reach_the_terminal_escaped_one_line_each() -> None:
    read_end, write_end = os.pipe()
    with os.fdopen(write_end, "w") as stream:
        log = LineLog(stream)
        log("GET /\x1b[31mred\nforged line -> 404")
        log.close()
    with os.fdopen(read_end) as reader:
        assert reader.read() == "GET /\\u001b[31mred\\u000aforged line -> 404\n"


@pytest.mark.slow
def test_serve_keeps_answering_while_nobody_reads_its_output() -> None:
    read_end, write_end = os.pipe()
    process = subprocess.Popen(
        [*HARNESS, "serve", str(LIBRARY)], stdout=write_end, stderr=subprocess.PIPE
    )
    try:
        first = _read_until(read_end, b"\n").decode()
        url = first.split(" ")[0].removeprefix("ANTHROPIC_BASE_URL=")
        # the library holds every SDK's cassettes: each one's base URL, on the first line
        assert first == (
            f"ANTHROPIC_BASE_URL={url} ANTHROPIC_BEDROCK_BASE_URL={url}"
            f" ANTHROPIC_VERTEX_BASE_URL={url}/v1 OPENAI_BASE_URL={url}/v1"
            f" AWS_ENDPOINT_URL_BEDROCK_RUNTIME={url} GOOGLE_GEMINI_BASE_URL={url}"
            f" GOOGLE_VERTEX_BASE_URL={url}\n"
        )
        _fill(write_end)  # as a fixture that read the URL and never reads again
        headers = {"x-api-key": KEY, "x-harness-cassette": "text_only"}
        with httpx2.Client(timeout=30) as client:
            for _ in range(ANSWERS_WITH_STDOUT_FULL):
                answer = client.post(f"{url}/v1/messages", json=BODY, headers=headers)
                assert answer.content == _whole_stream(TEXT_ONLY)
        log = _read_until(read_end, f"#{ANSWERS_WITH_STDOUT_FULL} POST".encode()).decode()
        assert "#1 POST /v1/messages stream -> 200 from text_only.jsonl" in log
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=30)
        stopped = "harness serve: stopped (SIGTERM)\n"
        assert (process.returncode, err.decode()) == (0, stopped)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate(timeout=30)
        os.close(read_end)
        os.close(write_end)


SECRET = "sk-ant-api03-hardening-secret-0123456789"
BAD_REQUESTS = {
    "not HTTP": (b"GARBAGE\r\n\r\n", 400),
    "a header without a colon": (
        b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nx-api-key " + SECRET.encode() + b"\r\n\r\n",
        400,
    ),
    "a header too long": (
        b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nx-api-key: "
        + SECRET.encode() * 300
        + b"\r\n\r\n",
        431,
    ),
    "too many headers": (
        b"POST /v1/messages HTTP/1.1\r\nHost: x\r\n"
        + b"".join(b"x-key-%d: %s\r\n" % (n, SECRET.encode()) for n in range(MAX_HEADERS + 1))
        + b"\r\n",
        431,
    ),
    "a request line too long": (
        b"POST /v1/messages?key=" + SECRET.encode() * 300 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
        414,
    ),
    "a bad content-length": (
        b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nx-api-key: "
        + SECRET.encode()
        + b"\r\nContent-Length: "
        + SECRET.encode()
        + b"\r\n\r\n",
        400,
    ),
}


def _apps(tmp_path: Path, log: Callable[[str], None]) -> dict[str, web.Application]:
    return {
        "serve": CassetteServer([str(LIBRARY)], log=log).app(),
        "proxy": RecordingProxy("http://127.0.0.1:9", tmp_path, log=log).app(),
    }


def _exchange(url: str, raw: bytes) -> tuple[int, Any]:
    """Send `raw` bytes, read the whole answer (the server closes): status and JSON body."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as connection:
        connection.sendall(raw)
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


@pytest.mark.parametrize("app_name", ["serve", "proxy"])
@pytest.mark.parametrize("case", BAD_REQUESTS, ids=str)
def test_a_bad_request_is_one_line_without_the_secret_and_the_right_4xx(
    app_name: str, case: str, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    raw, status = BAD_REQUESTS[case]
    lines: list[str] = []
    with ServerThread(_apps(tmp_path, lines.append)[app_name]) as url:
        got, body = _exchange(url, raw)
    assert got == status
    assert body["type"] == "error" and body["error"]["type"] == "invalid_request_error"
    assert len(lines) == 1 and lines[0].startswith("bad request from 127.0.0.1 -> "), lines
    out, err = capfd.readouterr()
    assert (out, err) == ("", "")
    assert SECRET[:12] not in lines[0] + json.dumps(body)


def _nested(depth: int) -> bytes:
    """A Messages request nesting `depth` levels in all (its own object is one)."""
    inner = depth - 1
    return (
        b'{"model": "m", "max_tokens": 9, "messages": [], "metadata": '
        + b"[" * inner
        + b"]" * inner
        + b"}"
    )


def test_a_body_at_the_nesting_limit_is_answered_and_listed() -> None:
    with ServerThread(CassetteServer([str(TEXT_ONLY)]).app()) as url:
        answer = httpx2.post(f"{url}/v1/messages", content=_nested(MAX_NESTING), headers=JSON)
        listed = httpx2.get(f"{url}/_harness/requests")
    assert answer.status_code == 200
    assert listed.status_code == 200 and len(listed.json()) == 1


@pytest.mark.parametrize("depth", [MAX_NESTING + 1, 1000, 1100])
def test_a_body_nested_past_the_limit_is_the_apis_400(depth: int) -> None:
    lines: list[str] = []
    with ServerThread(CassetteServer([str(TEXT_ONLY)], log=lines.append).app()) as url:
        answer = httpx2.post(f"{url}/v1/messages", content=_nested(depth), headers=JSON)
    assert answer.status_code == 400
    assert answer.json() == {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": f"harness serve: {TOO_DEEP}"},
    }
    assert lines == [
        f"#1 POST /v1/messages -> 400 (the body nests deeper than {MAX_NESTING} levels)"
    ]


def test_the_proxy_forwards_a_body_nested_past_the_limit_and_records_nothing(
    tmp_path: Path,
) -> None:
    lines: list[str] = []
    upstream = CassetteServer([str(TEXT_ONLY)]).app()
    with (
        ServerThread(upstream) as upstream_url,
        ServerThread(RecordingProxy(upstream_url, tmp_path, log=lines.append).app()) as url,
    ):
        answer = httpx2.post(f"{url}/v1/messages", content=_nested(1000), headers=JSON)
    assert answer.status_code == 400 and TOO_DEEP in answer.text  # upstream's own answer
    assert lines[0] == f"POST /v1/messages: not recorded: {TOO_DEEP}"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "headers",
    [
        {"Host": "attacker.example"},
        {"Host": "attacker.example:8080"},
        {"Host": "127.0.0.1.attacker.example"},
        {"Origin": "http://attacker.example"},
        {"Origin": "null"},
    ],
    ids=lambda headers: " ".join(f"{name}: {value}" for name, value in headers.items()),
)
@pytest.mark.parametrize("endpoint", [("GET", "requests"), ("POST", "reset")], ids=str)
def test_the_control_endpoints_refuse_a_foreign_host_or_origin(
    headers: dict[str, str], endpoint: tuple[str, str]
) -> None:
    method, name = endpoint
    lines: list[str] = []
    server = CassetteServer([str(TEXT_ONLY)], log=lines.append)
    with ServerThread(server.app()) as url:
        httpx2.post(f"{url}/v1/messages", json=BODY, headers={"x-api-key": KEY})
        answer = httpx2.request(method, f"{url}/_harness/{name}", headers=headers)
    assert answer.status_code == 403
    assert answer.json()["error"]["type"] == "permission_error"
    assert len(server.replayer.requests) == 1  # not reset
    assert lines[-1].startswith(f"{method} /_harness/{name} -> 403: ")


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Host": "localhost"},
        {"Host": "[::1]:9"},
        {"Origin": "http://localhost:3000"},
        {"Origin": "http://127.0.0.1:8080"},
        {"Host": "devbox.internal:8080", "Origin": "http://devbox.internal:8080"},
    ],
    ids=lambda headers: " ".join(f"{name}: {value}" for name, value in headers.items()) or "none",
)
def test_the_control_endpoints_answer_this_machine_and_the_host_listened_on(
    headers: dict[str, str],
) -> None:
    server = CassetteServer([str(TEXT_ONLY)], host="devbox.internal")
    with ServerThread(server.app()) as url:
        answer = httpx2.get(f"{url}/_harness/requests", headers=headers)
    assert answer.status_code == 200 and answer.json() == []


def _linked_library(tmp_path: Path) -> Path:
    """A served folder holding one cassette of its own and a link to one outside it."""
    served = tmp_path / "served"
    (served / "sub").mkdir(parents=True)
    (served / "own.jsonl").write_bytes(TEXT_ONLY.read_bytes())
    (served / "sub" / "outside.jsonl").symlink_to(LIBRARY / "parallel_tools.jsonl")
    (served / "inside.jsonl").symlink_to(served / "own.jsonl")
    return served


def test_a_link_out_of_the_folder_served_is_left_out_and_said(tmp_path: Path) -> None:
    served = _linked_library(tmp_path)
    server = CassetteServer([str(served)], match_on=None)
    assert sorted(server.names) == sorted(
        ["inside", "inside.jsonl", "own", "own.jsonl"]
        + [str(served / name) for name in ("inside", "inside.jsonl", "own", "own.jsonl")]
    )
    outside = served / "sub" / "outside.jsonl"
    target = LIBRARY / "parallel_tools.jsonl"
    assert server.left_out == [f"left out {outside}: it links to {target}, outside {served}"]
    with ServerThread(server.app()) as url:
        answer = httpx2.post(
            f"{url}/v1/messages", json=BODY, headers={"x-harness-cassette": "sub/outside"}
        )
    assert answer.status_code == 404


def test_a_link_is_resolved_at_start(tmp_path: Path) -> None:
    served = _linked_library(tmp_path)
    server = CassetteServer([str(served)], match_on=None)
    (served / "inside.jsonl").unlink()  # swapped for a link out, once the server runs
    (served / "inside.jsonl").symlink_to(LIBRARY / "parallel_tools.jsonl")
    with ServerThread(server.app()) as url:
        answer = httpx2.post(
            f"{url}/v1/messages", json=BODY, headers={"x-harness-cassette": "inside"}
        )
    assert answer.content == _whole_stream(TEXT_ONLY)


@pytest.mark.slow
def test_serve_says_which_links_it_left_out(tmp_path: Path) -> None:
    served = _linked_library(tmp_path)
    with running("serve", str(served)) as serve:
        serve.base_url()
        _, _, err = serve.stop()
    assert err.splitlines()[0].startswith(f"harness serve: left out {served / 'sub'}")


def test_serve_logs_a_client_closing_after_the_last_event_as_answered_only() -> None:
    """The openai SDK closes at `[DONE]`, before the chunked body's end: one line for
    each request, as answered, and no 500 nobody received."""
    logged: list[str] = []
    chat = LIBRARY / "openai" / "chat" / "text.jsonl"
    server = CassetteServer([str(chat)], match_on=None, log=logged.append)
    body = {"model": "gpt-4.1-mini", "messages": [], "stream": True}
    named = {"x-harness-cassette": "text"}
    times = 20
    with ServerThread(server.app()) as url:
        for _ in range(times):
            got = read_then_close(url, "/v1/chat/completions", body, named)
            assert got.startswith(b"HTTP/1.1 200")
        # one more, read to its end: every earlier answer's handler has ended by then
        answer = httpx2.post(f"{url}/v1/chat/completions", json=body, headers=named, timeout=30)
        assert answer.text.endswith("data: [DONE]\n\n")
    assert len(logged) == times + 1, logged
    assert all(line.endswith(" -> 200 from text.jsonl") for line in logged), logged


async def _begun(request: web.Request) -> web.StreamResponse:
    response = web.StreamResponse(status=201)
    await response.prepare(request)
    await response.write(b"data: first\n\n")
    return response


async def _written_until_the_client_leaves(request: web.Request) -> web.StreamResponse:
    response = await _begun(request)
    while True:  # the write after the client closed raises aiohttp's ConnectionResetError
        await asyncio.sleep(0.01)
        await response.write(b"data: more\n\n")


async def _a_bug_after_it_began(request: web.Request) -> web.StreamResponse:
    await _begun(request)
    raise RuntimeError("a bug")


def test_a_client_gone_after_the_answer_began_is_told_with_the_status_sent() -> None:
    logged: list[str] = []
    app = harness_app(logged.append)
    app.router.add_post("/v1/messages", _written_until_the_client_leaves)
    with ServerThread(app) as url:
        with httpx2.stream("POST", f"{url}/v1/messages", content=b"{}") as answer:
            assert answer.status_code == 201
            next(answer.iter_bytes())
        deadline = time.monotonic() + 30
        while not logged and time.monotonic() < deadline:
            time.sleep(0.01)
    assert logged == ["POST /v1/messages -> 201, the client left before the answer ended"]


def test_a_failure_after_the_answer_began_is_told_with_the_status_sent_not_as_a_500() -> None:
    """The status line already went: the log says 201 and what happened, and the client
    gets no second answer inside the first, only the connection's end (a close the client
    reads as a body cut short, or a reset, as the kernel's timing has it)."""
    logged: list[str] = []
    app = harness_app(logged.append)
    app.router.add_post("/v1/messages", _a_bug_after_it_began)
    with (
        ServerThread(app) as url,
        pytest.raises((httpx2.RemoteProtocolError, httpx2.ReadError)),
        httpx2.stream("POST", f"{url}/v1/messages", content=b"{}") as answer,
    ):
        assert answer.status_code == 201
        answer.read()
    assert logged == ["POST /v1/messages -> 201, then an internal error (RuntimeError: a bug): cut"]


#: The hosted clients' variables, as the anthropic SDK reads them (`lib/bedrock`,
#: `lib/vertex`: Vertex's paths below `/v1`), asked of the provider's `HOSTED`.
HOSTED = "ANTHROPIC_BEDROCK_BASE_URL=http://h:1 ANTHROPIC_VERTEX_BASE_URL=http://h:1/v1"


@pytest.mark.parametrize(
    ("paths", "line"),
    [
        (
            [LIBRARY / "text_only.jsonl"],
            "ANTHROPIC_BASE_URL=http://h:1 " + HOSTED,
        ),
        ([LIBRARY / "openai" / "responses"], "OPENAI_BASE_URL=http://h:1/v1"),
        (
            [LIBRARY / "gemini"],
            "GOOGLE_GEMINI_BASE_URL=http://h:1 GOOGLE_VERTEX_BASE_URL=http://h:1",
        ),
        (
            [LIBRARY],
            f"ANTHROPIC_BASE_URL=http://h:1 {HOSTED} OPENAI_BASE_URL=http://h:1/v1"
            " AWS_ENDPOINT_URL_BEDROCK_RUNTIME=http://h:1 GOOGLE_GEMINI_BASE_URL=http://h:1 GOOGLE_VERTEX_BASE_URL=http://h:1",
        ),
    ],
    ids=["anthropic", "openai-both-dialects-once", "gemini", "every-sdk"],
)
def test_serve_announces_the_base_url_of_each_sdk_its_cassettes_answer(
    paths: list[Path], line: str
) -> None:
    served = CassetteServer([str(path) for path in paths]).providers
    assert base_url_line("http://h:1", served) == line


def test_the_proxy_announces_every_sdks_base_url(tmp_path: Path) -> None:
    providers = RecordingProxy("http://upstream", tmp_path).providers
    assert base_url_line("http://h:1", providers) == (
        f"ANTHROPIC_BASE_URL=http://h:1 {HOSTED} OPENAI_BASE_URL=http://h:1/v1"
        " AWS_ENDPOINT_URL_BEDROCK_RUNTIME=http://h:1 GOOGLE_GEMINI_BASE_URL=http://h:1 GOOGLE_VERTEX_BASE_URL=http://h:1"
    )


# -- bounded whatever arrives (issue 37) ---------------------------------------------------------


def _padded(number: int, pad: int = 0) -> bytes:
    return json.dumps({"n": number, "pad": "x" * pad}).encode()


def test_the_requests_kept_are_the_latest_within_the_count_and_the_bytes() -> None:
    cap = 2 * held_bytes(_padded(5, 1000))  # two of those fit, not with a third request
    replayer = Replayer([str(TEXT_ONLY)], keep_requests=3, keep_request_bytes=cap)
    for number in range(5):
        replayer.capture("POST", "/v1/messages", {}, _padded(number))
    assert [request.json["n"] for request in replayer.requests] == [2, 3, 4]  # the count
    assert replayer.captured == 5
    for number in (5, 6):
        replayer.capture("POST", "/v1/messages", {}, _padded(number, 1000))
    assert [request.json["n"] for request in replayer.requests] == [5, 6]  # the bytes
    replayer.capture("POST", "/v1/messages", {}, _padded(7, cap))
    assert [request.json["n"] for request in replayer.requests] == [7]  # the latest stays
    replayer.reset()
    assert (len(replayer.requests), replayer.captured) == (0, 0)


def test_serve_keeps_its_requests_within_the_documented_bounds() -> None:
    replayer = CassetteServer([str(TEXT_ONLY)]).replayer
    assert (replayer.keep_requests, replayer.keep_request_bytes) == (
        KEPT_REQUESTS,
        KEPT_REQUEST_BYTES,
    )


@pytest.mark.parametrize(
    "content_type",
    ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", None],
)
@pytest.mark.parametrize("path", ["/v1/messages", "/v1/chat/completions", "/v1/responses"])
def test_what_a_web_page_sends_without_a_preflight_is_refused_and_not_kept(
    content_type: str | None, path: str
) -> None:
    lines: list[str] = []
    body = json.dumps({**BODY, "input": "hi"}).encode()
    headers = {} if content_type is None else {"content-type": content_type}
    with ServerThread(CassetteServer([str(LIBRARY)], log=lines.append).app()) as url:
        answer = httpx2.post(url + path, content=body, headers=headers)
        listed = httpx2.get(f"{url}/_harness/requests").json()
    assert answer.status_code == 415
    assert "send the body as JSON (content-type: application/json)" in answer.text
    assert listed == []
    assert lines == [f"#1 POST {path} -> 415 (content-type {content_type or 'missing'}, not JSON)"]


@pytest.mark.parametrize("content_type", ["application/json; charset=utf-8", "application/x+json"])
def test_any_json_content_type_is_answered(content_type: str) -> None:
    with ServerThread(CassetteServer([str(TEXT_ONLY)]).app()) as url:
        answer = httpx2.post(
            f"{url}/v1/messages", content=json.dumps(BODY), headers={"content-type": content_type}
        )
    assert answer.status_code == 200


def test_a_long_content_type_is_quoted_by_its_length_never_cut() -> None:
    """A cut would leave the start of whatever the client put there (a key) in the log
    and the answer, where no masking finds it."""
    lines: list[str] = []
    secret = "sk-ant-api03-" + "k" * 90
    headers = {"content-type": f"text/plain; key={secret}"}
    with ServerThread(CassetteServer([str(TEXT_ONLY)], log=lines.append).app()) as url:
        answer = httpx2.post(url + "/v1/messages", content=b"{}", headers=headers)
    assert answer.status_code == 415
    assert "sk-ant" not in answer.text
    assert "<119 characters>" in answer.text
    assert lines == ["#1 POST /v1/messages -> 415 (content-type <119 characters>, not JSON)"]
