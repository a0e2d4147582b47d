"""Every widget of every course notebook, in a real browser: Voila serves each notebook that shows
widgets on 127.0.0.1, Debian's Chromium (driven by Playwright, never `playwright install`) moves every
control of every widget, and each move must redraw that widget's figure with no error logged by the
page; then every slider goes to its maximum and every dropdown through its options there. The page is as
wide as a JupyterLab notebook on a laptop, on a high-density screen, and after every change each widget
must stay readable: slider tracks wide enough to drag, no cut label, the figure neither enlarged (blurred)
nor stretched nor wider than the page. A screenshot of each widget after each move is saved under
artifacts/screenshots/ (gitignored; CI keeps the folder as an artifact).

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
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
OFFLINE_STYLESHEETS = ("fontawesome-free",)  # Voila's template asks a CDN for icon fonts; we answer locally
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
NOTEBOOK_SECONDS = 300  # Voila runs the whole notebook before the page loads: over 120 s for 04 in a busy full suite
REDRAW_MS = 30_000
EXPLORER = ".widget-vbox:has(> .widget-image)"  # an explorer: controls, caption and its figure
CONTROLS = ".widget-dropdown select, .widget-slider .noUi-handle, .widget-checkbox input[type=checkbox]"
VIEWPORT = {"width": 1000, "height": 900}  # about a JupyterLab notebook's width on a laptop
PIXEL_RATIO = 2  # a high-density screen, where a figure drawn at the page's resolution looks blurred
MIN_TRACK_PX = 120  # a slider track a learner can drag
READABILITY = f"""(explorer, ratio) => {{
    const problems = [], visible = e => e.offsetParent !== null;
    for (const track of explorer.querySelectorAll('.widget-slider .noUi-target')) {{
        if (visible(track) && track.clientWidth < {MIN_TRACK_PX})
            problems.push(`a slider track is ${{track.clientWidth}} px wide, too narrow to drag`);
    }}
    for (const label of explorer.querySelectorAll('.widget-label, .widget-label-basic, .widget-readout')) {{
        if (visible(label) && label.scrollWidth > label.clientWidth + 1)
            problems.push(`"${{label.textContent}}" is cut (${{label.scrollWidth}} px in ${{label.clientWidth}} px)`);
    }}
    const image = explorer.querySelector(':scope > .widget-image'), shown = image.getBoundingClientRect();
    if (shown.width * ratio > image.naturalWidth + 1)
        problems.push(`the figure is enlarged: ${{image.naturalWidth}} px shown on ${{shown.width * ratio}} px`);
    if (Math.abs(shown.width / shown.height - image.naturalWidth / image.naturalHeight) > 0.01)
        problems.push('the figure is stretched');
    if (shown.right > document.documentElement.clientWidth + 1) problems.push('the figure is wider than the page');
    return problems;
}}"""


def notebooks_with_widgets():
    """Each committed notebook that displays widgets, with how many explorers it shows."""
    found = []
    for path in sorted((REPO / "notebooks").glob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        shown = sum(
            WIDGET_VIEW in output.get("data", {})
            for cell in cells
            if cell["cell_type"] == "code"
            for output in cell.get("outputs", [])
        )
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
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "voila",
                "--no-browser",
                f"--port={port}",
                "--Voila.ip=127.0.0.1",
                str(REPO / "notebooks" / notebook),
            ],
            cwd=REPO / "notebooks",
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
        )
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
    page = browser.new_page(viewport=VIEWPORT, device_scale_factor=PIXEL_RATIO)
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


def _movable(control):
    """Whether a learner can change this control (it is shown and enabled)."""
    return control.is_visible() and not control.is_disabled() and control.get_attribute("aria-disabled") != "true"


def _move(control):
    """Change one control as a learner would; return what was done and how to undo it (None if it
    cannot move: hidden, disabled)."""
    if not _movable(control):
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
        image.evaluate(
            "(img, previous) => new Promise((done, fail) => { const t0 = Date.now();"
            " (function poll() { if (img.src !== previous && img.complete) done();"
            f" else if (Date.now() - t0 > {REDRAW_MS}) fail('no redraw');"
            " else setTimeout(poll, 50); })(); })",
            before,
        )
    except Exception as error:  # Playwright's error says little: say which control did nothing
        raise AssertionError(f"{what} did not redraw its figure: {error}") from None


def _label(control):
    """The description shown beside a control, for messages and file names."""
    text = control.evaluate(
        "e => { const box = e.closest('.widget-inline-hbox, .widget-checkbox');"
        " return box ? Array.from(box.querySelectorAll('.widget-label, .widget-label-basic'))"
        ".map(label => label.textContent).join(' ') : ''; }"
    )
    return _slug(text) or "control"


def _slug(text):
    """Text as part of a file name."""
    return re.sub(r"\W+", "-", " ".join(text.split())).strip("-").lower()


def _readable(explorer, where):
    """Fail naming what a learner could not read or use: narrow tracks, cut labels, a blurred or stretched figure."""
    problems = explorer.evaluate(READABILITY, PIXEL_RATIO)
    assert not problems, f"{where}: " + "; ".join(problems)


def _try_extremes(explorer, where, screenshots):
    """Every slider at its maximum (the most stages, micro-batches, supersteps), then every option of every
    dropdown there: each must redraw, stay readable and show a caption. Screenshots: ``screenshots``-max-*.png."""
    image = explorer.locator(":scope > .widget-image")
    for slider in explorer.locator(".widget-slider .noUi-handle").all():
        if _movable(slider) and slider.get_attribute("aria-valuenow") != slider.get_attribute("aria-valuemax"):
            before = image.get_attribute("src")
            slider.focus()
            slider.press("End")
            _wait_for_redraw(image, before, f"{where}: {_label(slider)} at its maximum")
    _readable(explorer, f"{where}: sliders at their maximum")
    explorer.screenshot(path=f"{screenshots}-max.png")
    for dropdown in explorer.locator(".widget-dropdown select").all():
        if not _movable(dropdown):
            continue
        current = dropdown.input_value()
        for option in dropdown.locator("option").evaluate_all("os => os.map(o => o.value)"):
            if option == current:
                continue
            before = image.get_attribute("src")
            dropdown.select_option(option)
            what = f"{where}: sliders at their maximum, {_label(dropdown)} {option!r}"
            _wait_for_redraw(image, before, what)
            _readable(explorer, what)
            assert explorer.locator(":scope > .widget-html").inner_text().strip(), f"{what}: no caption"
            explorer.screenshot(path=f"{screenshots}-max-{_label(dropdown)}-{_slug(option)}.png")
            current = option


@pytest.mark.parametrize("notebook, explorers", notebooks_with_widgets())
def test_every_control_of_every_widget_redraws_its_figure(browser, voila, notebook, explorers):
    page = _offline_page(browser)
    page.goto(voila(notebook), timeout=NOTEBOOK_SECONDS * 1000)
    page.wait_for_function(
        f"n => document.querySelectorAll('{EXPLORER}').length >= n", arg=explorers, timeout=NOTEBOOK_SECONDS * 1000
    )
    page.wait_for_function(
        f"() => Array.from(document.querySelectorAll('{EXPLORER} > .widget-image'))"
        ".every(img => img.complete && img.naturalWidth > 0)",
        timeout=REDRAW_MS,
    )
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    stem = Path(notebook).stem
    shown = page.locator(EXPLORER).count()  # at least what the committed outputs show; all are tried
    for index in range(shown):
        explorer = page.locator(EXPLORER).nth(index)
        explorer.scroll_into_view_if_needed()
        explorer.screenshot(path=SCREENSHOTS / f"{stem}-widget{index}.png")
        _readable(explorer, f"{notebook}, widget {index}")
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
            _readable(explorer, f"{notebook}, widget {index}, {name} moved")
            explorer.screenshot(path=SCREENSHOTS / f"{stem}-widget{index}-{name}.png")
            changed = image.get_attribute("src")
            undo()  # back where it started, so every control is tried from the notebook's own setting
            _wait_for_redraw(image, changed, f"{notebook}, widget {index}: moving {name} back")
            assert caption.inner_text() == first_caption, (
                f"{notebook}, widget {index}: {name} moved back does not show the first figure's caption again"
            )
        assert moved, f"{notebook}, widget {index} has no control a learner can move"
        _try_extremes(explorer, f"{notebook}, widget {index}", SCREENSHOTS / f"{stem}-widget{index}")
    assert not page.errors, f"{notebook}: the page logged errors: {page.errors}"
    assert all(any(name in u for name in OFFLINE_STYLESHEETS) for u in page.external), (
        f"{notebook}: the page asked the network for more than Voila's icon fonts: {page.external}"
    )
    page.close()
