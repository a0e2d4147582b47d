"""The course's interactive widgets, in a real browser: Voila serves notebooks 04 and 05 on
127.0.0.1, Debian's Chromium (driven by Playwright, never `playwright install`) moves a control,
and the drawn figure must change with no error logged by the page.

Skipped where Chromium, Voila or Playwright is missing, except in CI (CI=true), where .ci/run
installs them and a skip would hide a broken set-up.
"""
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"]
OFFLINE_STYLESHEETS = ("fontawesome-free",)  # Voila's template asks a CDN for icon fonts; we answer locally
NOTEBOOK_SECONDS = 240


def _missing():
    if not Path(CHROMIUM).exists():
        return "Debian's chromium is not installed (apt-get install chromium)"
    for module in ("voila", "playwright"):
        try:
            __import__(module)
        except ImportError:
            return f"{module} is not installed (it is in requirements/test.txt)"
    return None


@pytest.fixture(scope="module")
def browser():
    reason = _missing()
    if reason:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"the browser test cannot run in CI: {reason}")
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        yield browser
        browser.close()


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def voila(tmp_path):
    """Start Voila on one notebook; stop it by its PID afterwards."""
    servers = []

    def serve(notebook):
        port = _free_port()
        log = open(tmp_path / "voila.log", "w")
        proc = subprocess.Popen([sys.executable, "-m", "voila", "--no-browser", f"--port={port}", "--Voila.ip=127.0.0.1",
                                 str(REPO / "notebooks" / notebook)], cwd=REPO / "notebooks", stdout=log,
                                stderr=subprocess.STDOUT, env=dict(os.environ, PYTHONPATH=str(REPO)))
        servers.append(proc)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), 0.5).close()
                return f"http://127.0.0.1:{port}/"
            except OSError:
                assert proc.poll() is None, (tmp_path / "voila.log").read_text()
                time.sleep(0.2)
        raise AssertionError("Voila did not start within 60 s")

    yield serve
    for proc in servers:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


def _image_sources(page):
    return page.eval_on_selector_all("img", "els => els.map(e => e.src)")


def _move_a_control(page):
    """Change the first dropdown with a choice left, else nudge the first slider; say what moved."""
    for select in page.query_selector_all(".widget-dropdown select"):
        options = select.eval_on_selector_all("option", "os => os.map(o => o.value)")
        current = select.input_value()
        others = [o for o in options if o != current]
        if others:
            select.select_option(others[0])
            return f"dropdown {current!r} -> {others[0]!r}"
    handle = page.query_selector(".widget-slider .noUi-handle")
    assert handle is not None, "the page shows no dropdown or slider to move"
    handle.focus()
    page.keyboard.press("ArrowRight")
    return "slider +1 step"


@pytest.mark.parametrize("notebook", ["04_pipelining.ipynb", "05_profiling.ipynb"])
def test_moving_a_control_redraws_the_figure(browser, voila, notebook):
    url = voila(notebook)
    page = browser.new_page()
    errors, external = [], []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))

    def offline(route):
        external.append(route.request.url)
        if any(name in route.request.url for name in OFFLINE_STYLESHEETS):
            return route.fulfill(status=200, content_type="text/css", body="")
        return route.abort()

    page.route(lambda url: not url.startswith(("http://127.0.0.1", "ws://127.0.0.1", "data:", "blob:")), offline)
    page.goto(url, timeout=NOTEBOOK_SECONDS * 1000)
    page.wait_for_selector(".widget-dropdown select, .widget-slider", timeout=NOTEBOOK_SECONDS * 1000)
    page.wait_for_function("() => document.querySelectorAll('img').length > 0", timeout=60000)
    page.wait_for_timeout(1000)  # let the first drawing settle
    before = _image_sources(page)
    moved = _move_a_control(page)
    page.wait_for_function("previous => { const now = Array.from(document.querySelectorAll('img')).map(e => e.src);"
                           " return now.join('|') !== previous; }", arg="|".join(before), timeout=60000)
    assert _image_sources(page) != before, f"moving the {moved} did not change the figure"
    assert not errors, f"the page logged errors: {errors}"
    assert all(any(name in u for name in OFFLINE_STYLESHEETS) for u in external), \
        f"the page asked the network for more than Voila's icon fonts: {external}"
    page.close()
