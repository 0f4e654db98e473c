"""Debian's headless Chromium, driven through its chromedriver (W3C
WebDriver over HTTP on loopback), with nothing but the standard library.

One browser for a whole test: start() launches chromedriver on a free port
and opens a session of /usr/bin/chromium in headless mode; stop() ends both.
No browser is ever downloaded: scripts/install-test-deps installs Debian's
chromium and chromium-driver.
"""

import base64
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

CHROMIUM = os.environ.get("PLACEMENT_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("PLACEMENT_CHROMEDRIVER", "/usr/bin/chromedriver")
START_TIMEOUT_S = 60


def available():
    """Whether Debian's chromium and chromedriver are installed."""
    return os.access(CHROMIUM, os.X_OK) and os.access(CHROMEDRIVER, os.X_OK)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class WebDriverError(AssertionError):
    pass


class Browser:
    """A headless Chromium session. Every call raises WebDriverError with
    chromedriver's message when it fails."""

    def __init__(self, width=1400, height=1000):
        self.width = width
        self.height = height
        self.driver = None
        self.session = None
        self.profile = None
        self.log_path = None

    def start(self):
        self.profile = tempfile.mkdtemp(prefix="placement-chromium-")
        port = _free_port()
        self.log_path = os.path.join(self.profile, "chromedriver.log")
        with open(self.log_path, "wb") as log:
            self.driver = subprocess.Popen(
                [CHROMEDRIVER, f"--port={port}"], stdin=subprocess.DEVNULL,
                stdout=log, stderr=log)
        self.base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                if self._call("GET", "/status").get("ready"):
                    break
            except (OSError, WebDriverError):
                pass
            if time.monotonic() > deadline or self.driver.poll() is not None:
                raise WebDriverError(f"chromedriver did not start: {self.log()}")
            time.sleep(0.1)
        args = ["--headless=new", "--disable-gpu", "--disable-dev-shm-usage",
                "--no-first-run", "--no-default-browser-check",
                "--disable-extensions", "--disable-background-networking",
                "--disable-sync", "--disable-component-update",
                f"--user-data-dir={os.path.join(self.profile, 'data')}",
                f"--window-size={self.width},{self.height}"]
        if os.geteuid() == 0:
            args.append("--no-sandbox")  # Chromium's sandbox refuses root
        capabilities = {"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": CHROMIUM, "args": args},
            "goog:loggingPrefs": {"browser": "ALL"},
            "pageLoadStrategy": "normal",
        }}}
        value = self._call("POST", "/session", capabilities)
        self.session = value["sessionId"]

    def stop(self):
        if self.session is not None:
            try:
                self._call("DELETE", f"/session/{self.session}")
            except (OSError, WebDriverError):
                pass
            self.session = None
        if self.driver is not None and self.driver.poll() is None:
            self.driver.terminate()
            try:
                self.driver.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.driver.kill()
                self.driver.wait()
        if self.profile is not None:
            shutil.rmtree(self.profile, ignore_errors=True)
            self.profile = None

    def log(self):
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()[-3000:]
        except (OSError, TypeError):
            return "(no log)"

    def _call(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.base + path, data=data, method=method,
            headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=120) as response:
                payload = json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as e:
            payload = json.loads(e.read() or b"{}")
            value = payload.get("value", {})
            raise WebDriverError(
                f"{method} {path}: {value.get('error')}: "
                f"{value.get('message', '')[:500]}") from None
        return payload.get("value", payload)

    def _session_call(self, method, path, body=None):
        return self._call(method, f"/session/{self.session}{path}", body)

    def get(self, url):
        """Navigates and waits for the load event."""
        self._session_call("POST", "/url", {"url": url})

    def run(self, script, *args):
        """Runs `script` (a function body) in the page; returns its value."""
        return self._session_call("POST", "/execute/sync",
                                  {"script": script, "args": list(args)})

    def find(self, css):
        """Whether an element matches `css`."""
        return self.run("return document.querySelector(arguments[0]) !== null;",
                        css)

    def type_into(self, css, text):
        element = self._session_call(
            "POST", "/element", {"using": "css selector", "value": css})
        element_id = next(iter(element.values()))
        self._session_call("POST", f"/element/{element_id}/value",
                           {"text": text})
        return element_id

    def click(self, css):
        element = self._session_call(
            "POST", "/element", {"using": "css selector", "value": css})
        element_id = next(iter(element.values()))
        self._session_call("POST", f"/element/{element_id}/click", {})

    def console_errors(self):
        """The browser's console entries at SEVERE since the last call
        (errors, and Content-Security-Policy violations among them)."""
        entries = self._session_call("POST", "/se/log", {"type": "browser"})
        return [e for e in entries if e.get("level") == "SEVERE"]

    def screenshot(self, path):
        png = base64.b64decode(self._session_call("GET", "/screenshot"))
        with open(path, "wb") as f:
            f.write(png)
