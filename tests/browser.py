"""A headless Chromium for the tests of the pages the harness writes, and the docs' screenshots.

`Browser` starts `chromium --headless=new --remote-debugging-port=0` with a user data
folder of its own, reads the DevTools websocket's URL from its standard error, and
drives one tab over the Chrome DevTools Protocol with aiohttp's websocket client (a
dependency already: no browser package). `Browser.open(path)` loads a page and gives a
`Page`: every request it made (`Network.requestWillBeSent`: a page of ours makes none
but its own `file://` document and `data:` URLs, `outside_requests`), what its console
said, `evaluate(js)` to read its DOM, `screenshot()` a PNG, which `decode_png` reads
with zlib alone into an `Image` a test can count colours in.

Bounded: every step has a timeout (`STEP_TIMEOUT`), and `close()` (the `with` block's
end) kills the browser's process group and removes its folder. `why_no_browser()` says
why none can run here (tests skip with it); `make test` installs one where it can.

    with Browser.launch() as browser:
        page = browser.open(Path("report.html"))
        assert page.outside_requests() == []
        assert page.evaluate("document.querySelectorAll('tr').length") > 1

`python -m tests.browser PAGE.html OUT.png [--width W] [--height H] [--full]` writes a
page's screenshot (`make screenshots`: the ones docs/view.md shows).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, TypeVar

import aiohttp

#: The names a Chromium goes by on the systems we know (Debian's package is `chromium`).
EXECUTABLES: Final = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
#: Seconds any one step may take: the launch, a protocol call, a page's load.
STEP_TIMEOUT: Final = 30.0
#: The switches of a quiet, reproducible browser: no first-run pages, no background
#: requests of its own, sRGB colours (a screenshot's pixels are the CSS colours), and no
#: sandbox for root (a container's user), which Chromium's sandbox refuses to run as.
SWITCHES: Final = (
    "--headless=new",
    "--remote-debugging-port=0",
    "--remote-debugging-address=127.0.0.1",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-sync",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--force-color-profile=srgb",
    "--hide-scrollbars",
    "--mute-audio",
)
_LISTENING: Final = re.compile(rb"DevTools listening on (ws://\S+)")

T = TypeVar("T")


class BrowserError(Exception):
    """The browser did not start, answered a call with an error, or a step timed out."""


def find_chromium() -> str | None:
    """The Chromium to run: `$CHROMIUM`, else the first of `EXECUTABLES` on the PATH."""
    chosen = os.environ.get("CHROMIUM")
    if chosen:
        return shutil.which(chosen)
    return next(filter(None, map(shutil.which, EXECUTABLES)), None)


def why_no_browser() -> str | None:
    """Why no browser can run the page tests here (None: one can)."""
    if find_chromium() is not None:
        return None
    return (
        f"no Chromium ({', '.join(EXECUTABLES)} or $CHROMIUM) on the PATH: make test installs "
        "it where it can (Debian, as root: apt-get install chromium)"
    )


@dataclass
class Page:
    """A page loaded in the browser's tab."""

    browser: Browser
    url: str
    #: every URL the page asked for, its own document first
    requests: list[str] = field(default_factory=list)
    #: what its console said, and the errors thrown: `level: text`
    console: list[str] = field(default_factory=list)

    def outside_requests(self) -> list[str]:
        """The requests other than the page's own document and `data:` URLs."""
        return [url for url in self.requests if url != self.url and not url.startswith("data:")]

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (JSON values come back as they
        are); an exception thrown is a `BrowserError` naming it."""
        return self.browser.evaluate(expression)

    def screenshot(self, *, full_page: bool = False) -> bytes:
        """A PNG of the viewport, or of the whole page."""
        return self.browser.screenshot(full_page=full_page)


class _Connection:
    """The DevTools protocol over one websocket: calls answered by id, events kept in order."""

    def __init__(self, socket: aiohttp.ClientWebSocketResponse) -> None:
        self.socket = socket
        self.events: list[dict[str, Any]] = []
        self._calls = 0
        self._answers: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._arrived = asyncio.Condition()
        self.reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        async for message in self.socket:
            if message.type is not aiohttp.WSMsgType.TEXT:
                continue
            data = json.loads(message.data)
            answer = self._answers.pop(data["id"], None) if "id" in data else None
            if answer is not None and not answer.done():
                answer.set_result(data)
            elif "method" in data:
                async with self._arrived:
                    self.events.append(data)
                    self._arrived.notify_all()
        for answer in self._answers.values():
            if not answer.done():
                answer.set_exception(BrowserError("the browser closed the connection"))

    async def call(
        self, method: str, params: dict[str, Any] | None = None, *, session: str | None = None
    ) -> dict[str, Any]:
        self._calls += 1
        number = self._calls
        answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._answers[number] = answer
        message: dict[str, Any] = {"id": number, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        await self.socket.send_str(json.dumps(message))
        data = await answer
        if "error" in data:
            raise BrowserError(f"{method}: {data['error'].get('message', data['error'])}")
        result: dict[str, Any] = data.get("result", {})
        return result

    async def event(self, method: str, since: int) -> dict[str, Any]:
        """The first event `method` at or after index `since` of `events`, waiting for it."""
        async with self._arrived:
            while True:
                for event in self.events[since:]:
                    if event["method"] == method:
                        return event
                await self._arrived.wait()


class Browser:
    """One headless Chromium and one tab of it, driven step by step (see the module doc)."""

    def __init__(self, executable: str, *, timeout: float = STEP_TIMEOUT) -> None:
        self.timeout = timeout
        self._loop = asyncio.new_event_loop()
        self._folder = tempfile.mkdtemp(prefix="harness-chromium-")
        self._stderr = open(os.path.join(self._folder, "stderr.txt"), "w+b")  # noqa: SIM115
        #: the browser's process (its group holds its helpers)
        self.process: subprocess.Popen[bytes] | None = None
        self._http: aiohttp.ClientSession | None = None
        self._connection: _Connection | None = None
        self._session = ""
        root = hasattr(os, "geteuid") and os.geteuid() == 0
        command = [
            executable,
            *SWITCHES,
            *(["--no-sandbox"] if root else []),
            f"--user-data-dir={os.path.join(self._folder, 'profile')}",
            "about:blank",
        ]
        try:
            self.process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=self._stderr,
                start_new_session=True,  # its own process group: close() ends all of it
            )
            self._run(self._connect(self._devtools_url()))
        except BaseException:
            self.close()
            raise

    @classmethod
    def launch(cls, *, timeout: float = STEP_TIMEOUT) -> Browser:
        """The browser `find_chromium` finds; `BrowserError` when there is none."""
        executable = find_chromium()
        if executable is None:
            raise BrowserError(str(why_no_browser()))
        return cls(executable, timeout=timeout)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _run(self, step: Awaitable[T]) -> T:
        """Run one step on the browser's loop, within the timeout."""
        try:
            return self._loop.run_until_complete(asyncio.wait_for(step, self.timeout))
        except TimeoutError:
            raise BrowserError(f"a step took more than {self.timeout:g} s") from None

    def _devtools_url(self) -> str:
        """The browser's websocket URL, as its standard error announces it."""
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            self._stderr.seek(0)
            said = self._stderr.read()
            found = _LISTENING.search(said)
            if found is not None:
                return found.group(1).decode()
            if self.process is not None and self.process.poll() is not None:
                last = said.decode(errors="replace").strip().splitlines()[-3:]
                raise BrowserError(
                    f"chromium exited with status {self.process.returncode}: {' | '.join(last)}"
                )
            time.sleep(0.05)
        raise BrowserError(f"chromium did not announce its DevTools URL in {self.timeout:g} s")

    async def _connect(self, url: str) -> None:
        self._http = aiohttp.ClientSession()
        socket = await self._http.ws_connect(url, max_msg_size=0)
        self._connection = connection = _Connection(socket)
        target = await connection.call("Target.createTarget", {"url": "about:blank"})
        attached = await connection.call(
            "Target.attachToTarget", {"targetId": target["targetId"], "flatten": True}
        )
        self._session = attached["sessionId"]
        for domain in ("Page", "Network", "Runtime", "Log"):
            await self._call(f"{domain}.enable")

    async def _call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        assert self._connection is not None
        return await self._connection.call(method, params, session=self._session)

    def open(self, page: Path | str, *, width: int = 1200, height: int = 800) -> Page:
        """Load a page (a file, or a URL) in a viewport of `width` x `height` CSS pixels at
        one device pixel each, and wait for its load event."""
        url = page.resolve().as_uri() if isinstance(page, Path) else page
        return self._run(self._open(url, width, height))

    async def _open(self, url: str, width: int, height: int) -> Page:
        assert self._connection is not None
        await self._call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )
        since = len(self._connection.events)
        navigated = await self._call("Page.navigate", {"url": url})
        if navigated.get("errorText"):
            raise BrowserError(f"{url}: {navigated['errorText']}")
        await self._connection.event("Page.loadEventFired", since)
        loaded = Page(self, url)
        for event in self._connection.events[since:]:
            if event.get("sessionId") != self._session:
                continue
            params = event["params"]
            if event["method"] == "Network.requestWillBeSent":
                loaded.requests.append(params["request"]["url"])
            elif event["method"] == "Log.entryAdded":
                loaded.console.append(f"{params['entry']['level']}: {params['entry']['text']}")
            elif event["method"] == "Runtime.consoleAPICalled":
                said = " ".join(str(arg.get("value", "")) for arg in params["args"])
                loaded.console.append(f"{params['type']}: {said}")
            elif event["method"] == "Runtime.exceptionThrown":
                loaded.console.append(f"exception: {params['exceptionDetails']['text']}")
        return loaded

    def evaluate(self, expression: str) -> Any:
        """See `Page.evaluate`."""
        result = self._run(
            self._call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        )
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            thrown = details.get("exception", {}).get("description", details.get("text"))
            raise BrowserError(f"{expression[:60]}: {thrown}")
        return result["result"].get("value")

    def screenshot(self, *, full_page: bool = False) -> bytes:
        """See `Page.screenshot`."""
        return self._run(self._screenshot(full_page))

    async def _screenshot(self, full_page: bool) -> bytes:
        params: dict[str, Any] = {"format": "png", "fromSurface": True}
        if full_page:
            metrics = await self._call("Page.getLayoutMetrics")
            size = metrics.get("cssContentSize", metrics["contentSize"])
            params["captureBeyondViewport"] = True
            params["clip"] = {
                "x": 0,
                "y": 0,
                "width": size["width"],
                "height": size["height"],
                "scale": 1,
            }
        taken = await self._call("Page.captureScreenshot", params)
        return base64.b64decode(taken["data"])

    def close(self) -> None:
        """Ask the browser to close, end its process group (whatever it answered), close
        the connection, remove the browser's folder. Bounded: each step has its timeout."""
        if self._connection is not None:
            with contextlib.suppress(Exception):
                self._run(self._connection.call("Browser.close"))
        process = self.process
        if process is not None and process.poll() is None:
            _end_group(process)
        with contextlib.suppress(Exception):
            self._run(self._disconnect())
        self._loop.close()
        self._stderr.close()
        shutil.rmtree(self._folder, ignore_errors=True)

    async def _disconnect(self) -> None:
        connection, self._connection = self._connection, None
        http, self._http = self._http, None
        try:
            if connection is not None:
                connection.reader.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await connection.reader
                await connection.socket.close()
        finally:
            if http is not None:
                await http.close()


def _end_group(process: subprocess.Popen[bytes]) -> None:
    """End the browser and its helpers (its process group, by the browser's own id):
    SIGTERM, then SIGKILL if they outlive 5 s."""
    for sent, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sent)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(wait)
            return


# -- PNG, read with zlib ------------------------------------------------------------------

_SIGNATURE: Final = b"\x89PNG\r\n\x1a\n"
#: Bytes a pixel, by PNG colour type (8 bits a sample): grey, RGB, grey+alpha, RGBA.
_CHANNELS: Final = {0: 1, 2: 3, 4: 2, 6: 4}

Box = tuple[int, int, int, int]  # left, top, right, bottom (right and bottom excluded)
Colour = tuple[int, int, int]


@dataclass(frozen=True)
class Image:
    """A decoded PNG: `rows` of `width` pixels, `channels` bytes each."""

    width: int
    height: int
    channels: int
    rows: list[bytes]

    def pixel(self, x: int, y: int) -> Colour:
        """The RGB colour at (x, y) (grey read as RGB; alpha left out)."""
        row, at = self.rows[y], x * self.channels
        if self.channels < 3:
            return (row[at], row[at], row[at])
        return (row[at], row[at + 1], row[at + 2])

    def colours(self, box: Box | None = None) -> Counter[Colour]:
        """How many pixels of each colour the box (the whole image: None) holds."""
        left, top, right, bottom = box or (0, 0, self.width, self.height)
        right, bottom = min(right, self.width), min(bottom, self.height)
        return Counter(
            self.pixel(x, y) for y in range(max(top, 0), bottom) for x in range(max(left, 0), right)
        )

    def share(self, colour: Colour, box: Box | None = None, tolerance: int = 2) -> float:
        """The share of the box's pixels within `tolerance` of `colour` on every channel."""
        counted = self.colours(box)
        near = sum(
            number
            for seen, number in counted.items()
            if all(abs(a - b) <= tolerance for a, b in zip(seen, colour, strict=True))
        )
        return near / max(sum(counted.values()), 1)


def decode_png(data: bytes) -> Image:
    """Read a non-interlaced 8-bit PNG (what Chromium's screenshots are); `ValueError` else."""
    if not data.startswith(_SIGNATURE):
        raise ValueError("not a PNG: the signature is missing")
    at, header, compressed = len(_SIGNATURE), b"", bytearray()
    while at < len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        kind, body = data[at + 4 : at + 8], data[at + 8 : at + 8 + length]
        (crc,) = struct.unpack(">I", data[at + 8 + length : at + 12 + length])
        if zlib.crc32(kind + body) != crc:
            raise ValueError(f"PNG chunk {kind!r}: its CRC does not match")
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            compressed += body
        elif kind == b"IEND":
            break
        at += 12 + length
    width, height, depth, colour_type, _, _, interlace = struct.unpack(">IIBBBBB", header)
    if depth != 8 or colour_type not in _CHANNELS or interlace:
        raise ValueError(f"PNG of depth {depth}, colour type {colour_type}: not read here")
    channels = _CHANNELS[colour_type]
    raw = zlib.decompress(bytes(compressed))
    stride = width * channels
    rows: list[bytes] = []
    prior = bytes(stride)
    for y in range(height):
        start = y * (stride + 1)
        row = _unfilter(raw[start], bytearray(raw[start + 1 : start + 1 + stride]), prior, channels)
        rows.append(row)
        prior = row
    return Image(width, height, channels, rows)


def _unfilter(kind: int, row: bytearray, prior: bytes, step: int) -> bytes:
    """Undo a row's PNG filter (None, Sub, Up, Average, Paeth)."""
    if kind == 0:
        return bytes(row)
    if kind == 2:
        return bytes((a + b) & 0xFF for a, b in zip(row, prior, strict=True))
    for i in range(len(row)):
        left = row[i - step] if i >= step else 0
        if kind == 1:
            row[i] = (row[i] + left) & 0xFF
        elif kind == 3:
            row[i] = (row[i] + ((left + prior[i]) >> 1)) & 0xFF
        elif kind == 4:
            up, corner = prior[i], prior[i - step] if i >= step else 0
            estimate = left + up - corner
            pa, pb, pc = abs(estimate - left), abs(estimate - up), abs(estimate - corner)
            best = left if pa <= pb and pa <= pc else up if pb <= pc else corner
            row[i] = (row[i] + best) & 0xFF
        else:
            raise ValueError(f"PNG filter {kind}: no such filter")
    return bytes(row)


def css_colour(text: str) -> Colour:
    """`rgb(253, 222, 222)` (what `getComputedStyle` gives) as a colour."""
    found = re.fullmatch(r"rgba?\((\d+),\s*(\d+),\s*(\d+)(?:,\s*[\d.]+)?\)", text.strip())
    if found is None:
        raise ValueError(f"not an rgb() colour: {text!r}")
    red, green, blue = (int(part) for part in found.groups())
    return (red, green, blue)


def element_box(page: Page, selector: str, *, inset: int = 2) -> Box:
    """The viewport box of the first element `selector` matches, in whole pixels, `inset`
    pixels inside its edges (a border, a neighbour's antialiasing left out)."""
    rect = page.evaluate(
        f"(() => {{ const e = document.querySelector({json.dumps(selector)}); if (!e) "
        "return null; const r = e.getBoundingClientRect(); "
        "return [r.left, r.top, r.right, r.bottom]; })()"
    )
    if rect is None:
        raise BrowserError(f"no element matches {selector}")
    left, top, right, bottom = (round(value) for value in rect)
    return (left + inset, top + inset, right - inset, bottom - inset)


# -- the docs' screenshots ------------------------------------------------------------------


def write_screenshot(
    page_path: Path, out: Path, *, width: int = 1200, height: int = 800, full_page: bool = False
) -> Page:
    """Load `page_path` and write its screenshot to `out`; the page, to check."""
    with Browser.launch() as browser:
        page = browser.open(page_path, width=width, height=height)
        out.write_bytes(page.screenshot(full_page=full_page))
        return page


def main(argv: list[str] | None = None, echo: Callable[[str], None] = print) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.browser", description="Write a page's screenshot."
    )
    parser.add_argument("page", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--width", type=int, default=1200)
    parser.add_argument("--height", type=int, default=800)
    parser.add_argument("--full", action="store_true", help="the whole page, not the viewport")
    options = parser.parse_args(argv)
    if not options.page.is_file():
        echo(f"{options.page}: no such file")
        return 2
    try:
        page = write_screenshot(
            options.page,
            options.out,
            width=options.width,
            height=options.height,
            full_page=options.full,
        )
    except BrowserError as error:
        echo(f"python -m tests.browser: {error}")
        return 1
    outside = page.outside_requests()
    if outside:
        echo(f"{options.page} asked for {', '.join(outside)}: a page must ask for nothing")
        return 1
    echo(f"{options.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
