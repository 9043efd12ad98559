#!/usr/bin/env python3
"""Load a `gguf report` page in headless Chromium and say what happened.

    python3 tests/browser/report_page.py [--chromium BIN] PAGE.html
    python3 tests/browser/report_page.py --screenshots DIR PAGE.html

Drives Debian's `chromium-headless-shell` over the DevTools protocol on a
pipe (`--remote-debugging-pipe`: no port, no network), python3's standard
library only. Loads the page from a file:// URL at 1280x900, and prints
one JSON document on stdout:

- `console`: console messages, uncaught exceptions and browser log entries
  of level warning or error (a Content Security Policy violation, a failed
  load), each as text;
- `requests`: every network request's URL other than the page itself;
- `load_ms`: milliseconds from navigation to the load event;
- `svgs`: each `svg.chart`'s class, rendered width and height and number
  of drawn shapes;
- `scripts`: `<script>` elements in the document; `pwned`: whether any of
  the markers a hostile file's injected script or handler would set exists;
- `title`, `h1`: the document's title and first heading as text;
- `dark_background`: the body's background under prefers-color-scheme: dark;
- `phone_overflow`: how many pixels the page is wider than a 390 px
  viewport (0 when it fits; wide tables and charts scroll inside their box);
- `phone_chart_width`: the narrowest chart's width there (charts keep a
  legible width rather than shrink their text).

With `--screenshots DIR`, also writes one PNG per `<section>` to
DIR/ID.png (the section's box, at most 1100 px tall). Nothing is asserted
here: the Rust test (tests/integration/report_browser.rs) decides.
"""
import argparse
import base64
import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time


def _high(fd: int) -> int:
    """`fd` moved to a number above 9 (close-on-exec, as pipes start)."""
    new = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return new


class Browser:
    """A headless Chromium and one page, over the DevTools pipe."""

    def __init__(self, binary: str):
        # Above fd 9, so that placing them at 3 and 4 in the child never
        # overwrites one with the other.
        to_chrome_r, self._to_chrome = (_high(fd) for fd in os.pipe())
        self._from_chrome, from_chrome_w = (_high(fd) for fd in os.pipe())
        self._profile = tempfile.mkdtemp(prefix="gguf-report-chromium-")

        def wire_fds():
            os.dup2(to_chrome_r, 3)
            os.dup2(from_chrome_w, 4)

        self.proc = subprocess.Popen(
            [binary, "--headless", "--remote-debugging-pipe", "--no-sandbox",
             "--disable-gpu", "--no-first-run", "--no-default-browser-check",
             "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--disable-extensions", "--mute-audio",
             f"--user-data-dir={self._profile}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, close_fds=False, preexec_fn=wire_fds)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buf = b""
        self._next_id = 0
        self.events = []
        self.session = None

    def _read_message(self, deadline: float) -> dict:
        while b"\0" not in self._buf:
            if time.monotonic() > deadline:
                raise TimeoutError("no answer from Chromium")
            chunk = os.read(self._from_chrome, 1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed the DevTools pipe")
            self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        return json.loads(raw)

    def call(self, method: str, params=None, session=True, timeout=30.0) -> dict:
        self._next_id += 1
        msg = {"id": self._next_id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self._to_chrome, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            m = self._read_message(deadline)
            if m.get("id") == self._next_id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            self.events.append(m)

    def wait_event(self, method: str, timeout=30.0) -> dict:
        deadline = time.monotonic() + timeout
        for i, m in enumerate(self.events):
            if m.get("method") == method:
                del self.events[i]
                return m
        while True:
            m = self._read_message(deadline)
            if m.get("method") == method:
                return m
            self.events.append(m)

    def attach(self):
        targets = self.call("Target.getTargets", session=False)["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self.session = self.call("Target.attachToTarget",
                                 {"targetId": page["targetId"], "flatten": True},
                                 session=False)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable")

    def evaluate(self, expression: str):
        r = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in r:
            raise RuntimeError(f"evaluate failed: {r['exceptionDetails']}")
        return r["result"].get("value")

    def close(self):
        try:
            self.call("Browser.close", session=False, timeout=5)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to_chrome, self._from_chrome):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self._profile, ignore_errors=True)


CHARTS = """JSON.stringify([...document.querySelectorAll('svg.chart')].map(s => {
  const r = s.getBoundingClientRect();
  return {cls: s.getAttribute('class'), width: r.width, height: r.height,
          shapes: s.querySelectorAll('rect,polyline,circle,line').length};
}))"""

SECTIONS = """JSON.stringify([...document.querySelectorAll('section')].map(s => {
  const r = s.getBoundingClientRect();
  return {id: s.id, x: r.left + window.scrollX, y: r.top + window.scrollY,
          width: r.width, height: r.height};
}))"""

# What an injected script or event handler in the hostile file sets.
PWNED = "Boolean(window.__gguf_pwned || document.getElementById('gguf-pwned'))"


def metrics(b: Browser, width: int, height: int):
    b.call("Emulation.setDeviceMetricsOverride",
           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})


def inspect_page(b: Browser, url: str, screenshots) -> dict:
    metrics(b, 1280, 900)
    started = time.monotonic()
    b.call("Page.navigate", {"url": url})
    b.wait_event("Page.loadEventFired")
    load_ms = (time.monotonic() - started) * 1000
    report = {
        "load_ms": round(load_ms, 1),
        "svgs": json.loads(b.evaluate(CHARTS)),
        "scripts": b.evaluate("document.scripts.length"),
        "pwned": b.evaluate(PWNED),
        "title": b.evaluate("document.title"),
        "h1": b.evaluate("(document.querySelector('h1') || {}).textContent || ''"),
        "bytes": b.evaluate("document.documentElement.outerHTML.length"),
    }
    if screenshots:
        os.makedirs(screenshots, exist_ok=True)
        # Without scroll bars, so that a section's box is what is drawn.
        b.call("Emulation.setScrollbarsHidden", {"hidden": True})
        metrics(b, 1100, 900)
        for sec in json.loads(b.evaluate(SECTIONS)):
            clip = {"x": sec["x"], "y": sec["y"], "width": sec["width"],
                    "height": min(sec["height"], 1100), "scale": 1}
            shot = b.call("Page.captureScreenshot",
                          {"format": "png", "clip": clip, "captureBeyondViewport": True})
            with open(os.path.join(screenshots, f"{sec['id']}.png"), "wb") as f:
                f.write(base64.b64decode(shot["data"]))
    b.call("Emulation.setEmulatedMedia",
           {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
    report["dark_background"] = b.evaluate("getComputedStyle(document.body).backgroundColor")
    b.call("Emulation.setEmulatedMedia",
           {"features": [{"name": "prefers-color-scheme", "value": "light"}]})
    report["light_background"] = b.evaluate("getComputedStyle(document.body).backgroundColor")
    metrics(b, 390, 844)
    report["phone_overflow"] = b.evaluate(
        "Math.max(0, document.documentElement.scrollWidth - window.innerWidth)")
    report["phone_chart_width"] = b.evaluate(
        "Math.min(...[...document.querySelectorAll('svg.chart')].map(s => s.getBoundingClientRect().width), 1e9)")
    return report


def messages(events: list, page_url: str) -> tuple:
    console, requests = [], []
    for m in events:
        method, p = m.get("method"), m.get("params", {})
        if method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "warning", "assert"):
            console.append(" ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", [])))
        elif method == "Runtime.exceptionThrown":
            console.append(p.get("exceptionDetails", {}).get("text", "exception"))
        elif method == "Log.entryAdded" and p.get("entry", {}).get("level") in ("error", "warning"):
            console.append(p["entry"].get("text", ""))
        elif method == "Network.requestWillBeSent":
            url = p.get("request", {}).get("url", "")
            if url != page_url and url != "about:blank":
                requests.append(url)
    return console, requests


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("page")
    ap.add_argument("--chromium", default=os.environ.get("GGUF_CHROMIUM", "chromium-headless-shell"))
    ap.add_argument("--screenshots")
    args = ap.parse_args()
    binary = shutil.which(args.chromium)
    if binary is None:
        print(json.dumps({"skipped": f"{args.chromium} not found"}))
        return
    url = "file://" + os.path.abspath(args.page)
    b = Browser(binary)
    try:
        b.attach()
        report = inspect_page(b, url, args.screenshots)
        # Late events (a request started after the load event) arrive
        # before this answer.
        b.evaluate("1")
        report["console"], report["requests"] = messages(b.events, url)
    finally:
        b.close()
    json.dump(report, sys.stdout)
    print()


if __name__ == "__main__":
    main()
