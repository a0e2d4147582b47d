"""Every widget of every course notebook, in a real browser: Voila serves each notebook that shows
widgets on 127.0.0.1, Debian's Chromium (driven by Playwright, never `playwright install`) moves every
control of every widget, and each move must redraw that widget's figure with no error logged by the
page. A screenshot of each widget after each move is saved under artifacts/screenshots/ (gitignored;
CI keeps the folder as an artifact).

Skipped where Chromium, Voila or Playwright is missing, except in CI (CI=true), where .ci/run
installs them and a skip would hide a broken set-up.
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCREENSHOTS = REPO / "artifacts" / "screenshots"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"]
OFFLINE_STYLESHEETS = ("fontawesome-free",)  # Voila's template asks a CDN for icon fonts; we answer locally
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
NOTEBOOK_SECONDS = 120
REDRAW_MS = 30_000
EXPLORER = ".widget-vbox:has(> .widget-image)"  # an explorer: controls, caption and its figure
CONTROLS = (".widget-dropdown select, .widget-slider .noUi-handle, .widget-checkbox input[type=checkbox]")


def notebooks_with_widgets():
    """Each committed notebook that displays widgets, with how many explorers it shows."""
    found = []
    for path in sorted((REPO / "notebooks").glob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        shown = sum(WIDGET_VIEW in output.get("data", {}) for cell in cells if cell["cell_type"] == "code"
                    for output in cell.get("outputs", []))
        if shown:
            found.append(pytest.param(path.name, shown, id=path.stem))
    return found


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
        env = dict(os.environ, PYTHONPATH=str(REPO), PYTHONHASHSEED="0")
        env.pop("MPLBACKEND", None)
        proc = subprocess.Popen([sys.executable, "-m", "voila", "--no-browser", f"--port={port}", "--Voila.ip=127.0.0.1",
                                 str(REPO / "notebooks" / notebook)], cwd=REPO / "notebooks", stdout=log,
                                stderr=subprocess.STDOUT, env=env)
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


def _offline_page(browser):
    """A page that records console errors and answers nothing from outside 127.0.0.1."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.errors, page.external = [], []
    page.on("console", lambda message: page.errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: page.errors.append(str(error)))

    def offline(route):
        page.external.append(route.request.url)
        if any(name in route.request.url for name in OFFLINE_STYLESHEETS):
            return route.fulfill(status=200, content_type="text/css", body="")
        return route.abort()

    page.route(lambda url: not url.startswith(("http://127.0.0.1", "ws://127.0.0.1", "data:", "blob:")), offline)
    return page


def _move(control):
    """Change one control as a learner would; return what was done and how to undo it (None if it
    cannot move: hidden, disabled)."""
    if not control.is_visible() or control.is_disabled() or control.get_attribute("aria-disabled") == "true":
        return None
    kind = control.evaluate("e => e.tagName.toLowerCase() + (e.type ? ':' + e.type : '')")
    if kind.startswith("select"):
        current = control.input_value()
        other = next(o for o in control.locator("option").evaluate_all("os => os.map(o => o.value)") if o != current)
        control.select_option(other)
        return f"dropdown {current!r} -> {other!r}", lambda: control.select_option(current)
    if kind == "input:checkbox":
        control.click()
        return "checkbox toggled", control.click
    at_max = control.get_attribute("aria-valuenow") == control.get_attribute("aria-valuemax")
    there, back = ("ArrowLeft", "ArrowRight") if at_max else ("ArrowRight", "ArrowLeft")
    control.focus()
    control.press(there)
    return f"slider {there}", lambda: control.press(back)


def _wait_for_redraw(image, before, what):
    """Wait until the widget's figure is a new, loaded picture; fail saying which control did nothing."""
    try:
        image.evaluate("(img, previous) => new Promise((done, fail) => { const t0 = Date.now();"
                       " (function poll() { if (img.src !== previous && img.complete) done();"
                       f" else if (Date.now() - t0 > {REDRAW_MS}) fail('no redraw');"
                       " else setTimeout(poll, 50); })(); })", before)
    except Exception as error:  # Playwright's error says little: say which control did nothing
        raise AssertionError(f"{what} did not redraw its figure: {error}") from None


def _label(control):
    """The description shown beside a control, for messages and file names."""
    text = control.evaluate("e => { const box = e.closest('.widget-inline-hbox, .widget-checkbox');"
                            " return box ? Array.from(box.querySelectorAll('.widget-label, .widget-label-basic'))"
                            ".map(label => label.textContent).join(' ') : ''; }")
    return re.sub(r"\W+", "-", " ".join(text.split())).strip("-").lower() or "control"


@pytest.mark.parametrize("notebook, explorers", notebooks_with_widgets())
def test_every_control_of_every_widget_redraws_its_figure(browser, voila, notebook, explorers):
    page = _offline_page(browser)
    page.goto(voila(notebook), timeout=NOTEBOOK_SECONDS * 1000)
    page.wait_for_function(f"n => document.querySelectorAll('{EXPLORER}').length >= n", arg=explorers,
                           timeout=NOTEBOOK_SECONDS * 1000)
    page.wait_for_function(f"() => Array.from(document.querySelectorAll('{EXPLORER} > .widget-image'))"
                           ".every(img => img.complete && img.naturalWidth > 0)", timeout=REDRAW_MS)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    stem = Path(notebook).stem
    shown = page.locator(EXPLORER).count()  # at least what the committed outputs show; all are tried
    for index in range(shown):
        explorer = page.locator(EXPLORER).nth(index)
        explorer.scroll_into_view_if_needed()
        explorer.screenshot(path=SCREENSHOTS / f"{stem}-widget{index}.png")
        moved = 0
        for number in range(explorer.locator(CONTROLS).count()):
            control = explorer.locator(CONTROLS).nth(number)
            image = explorer.locator(":scope > .widget-image")
            caption = explorer.locator(":scope > .widget-html")
            name, before, first_caption = _label(control), image.get_attribute("src"), caption.inner_text()
            move = _move(control)
            if move is None:
                continue
            what, undo = move
            moved += 1
            _wait_for_redraw(image, before, f"{notebook}, widget {index}: moving {name} ({what})")
            explorer.screenshot(path=SCREENSHOTS / f"{stem}-widget{index}-{name}.png")
            changed = image.get_attribute("src")
            undo()  # back where it started, so every control is tried from the notebook's own setting
            _wait_for_redraw(image, changed, f"{notebook}, widget {index}: moving {name} back")
            assert caption.inner_text() == first_caption, f"{notebook}, widget {index}: {name} moved back " \
                                                          "does not show the first figure's caption again"
        assert moved, f"{notebook}, widget {index} has no control a learner can move"
    assert not page.errors, f"{notebook}: the page logged errors: {page.errors}"
    assert all(any(name in u for name in OFFLINE_STYLESHEETS) for u in page.external), \
        f"{notebook}: the page asked the network for more than Voila's icon fonts: {page.external}"
    page.close()
