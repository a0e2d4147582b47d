"""Every widget of every course notebook, in a real browser: Voila serves each notebook that shows
widgets on 127.0.0.1, Debian's Chromium (driven by Playwright, never `playwright install`) moves every
control of every widget, and each move must redraw that widget's figure with no error logged by the
page; then every slider goes to its maximum and every dropdown through its options there. All of it in a
window 1024 pixels wide (a laptop) and one 1440 pixels wide, on a high-density screen, and after every
change each widget must stay readable: slider tracks wide enough to drag, no cut label, no two texts
overlapping, no text under 9 pixels, no sideways scrolling of the page or the widget, the figure shown at
exactly the width it was drawn for (neither blurred nor shrunk: tests/widgets/test_readable_figures.py
checks the text inside it at that width) and not stretched. Then what each kind of explorer promises: the
pipeline explorer's accumulation slider steps only through the counts the schedule allows and the
explorer says what each schedule is; the tile-memory explorer takes a typed tile index; the execution
trace names its rows of steps. A screenshot of each widget after each move is saved under
artifacts/screenshots/<width>px/ (gitignored; CI keeps the folder as an artifact).

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

from ipu_teach.widgets.figure_widget import FIGURE_CLASS, MIN_TEXT_PX

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
EXPLORER = f".widget-vbox:has(> .{FIGURE_CLASS})"  # an explorer: controls, caption and its figure
FIGURE = f":scope > .{FIGURE_CLASS} > .widget-image"
CONTROLS = ".widget-dropdown select, .widget-slider .noUi-handle, .widget-checkbox input[type=checkbox]"
WINDOW_WIDTHS = (1024, 1440)  # a laptop's browser window, and a larger screen's
WINDOW_HEIGHT = 900
PIXEL_RATIO = 2  # a high-density screen, where a figure drawn at the page's resolution looks blurred
MIN_TRACK_PX = 120  # a slider track a learner can drag
LAB_COLUMN = {1024: 592}  # JupyterLab 4.6's output column at this window with its file browser open (measured)
TEXTS = ".widget-label, .widget-label-basic, .widget-readout, select, input, .widget-html-content"
READABILITY = f"""(explorer, [ratio, narrow]) => {{
    const problems = [], visible = e => e.offsetParent !== null;
    const name = e => `"${{(e.textContent || e.value || '').trim().slice(0, 40)}}"`;
    for (const track of explorer.querySelectorAll('.widget-slider .noUi-target')) {{
        if (visible(track) && track.clientWidth < {MIN_TRACK_PX})
            problems.push(`a slider track is ${{track.clientWidth}} px wide, too narrow to drag`);
    }}
    for (const label of explorer.querySelectorAll('.widget-label, .widget-label-basic, .widget-readout')) {{
        if (visible(label) && label.scrollWidth > label.clientWidth + 1)
            problems.push(`"${{label.textContent}}" is cut (${{label.scrollWidth}} px in ${{label.clientWidth}} px)`);
    }}
    const texts = Array.from(explorer.querySelectorAll('{TEXTS}')).filter(visible);
    for (const text of texts) {{
        const size = parseFloat(getComputedStyle(text).fontSize);
        if (size < {MIN_TEXT_PX}) problems.push(`${{name(text)}} is ${{size}} px high`);
    }}
    const boxes = texts.map(e => e.getBoundingClientRect());
    for (let i = 0; i < texts.length; i++) for (let j = i + 1; j < texts.length; j++) {{
        const a = boxes[i], b = boxes[j];
        if (texts[i].contains(texts[j]) || texts[j].contains(texts[i])) continue;
        const across = Math.min(a.right, b.right) - Math.max(a.left, b.left);
        if (across > 1 && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1)
            problems.push(`${{name(texts[i])}} overlaps ${{name(texts[j])}}`);
    }}
    const page = document.scrollingElement;
    if (page.scrollWidth > page.clientWidth + 1)
        problems.push(`the page scrolls sideways (${{page.scrollWidth}} px in ${{page.clientWidth}} px)`);
    for (const box of [explorer, ...explorer.querySelectorAll('*')]) {{
        if (narrow && box.classList.contains('{FIGURE_CLASS}')) continue;  // there the figure scrolls on its own
        const style = getComputedStyle(box).overflowX;
        if (visible(box) && (style === 'auto' || style === 'scroll') && box.scrollWidth > box.clientWidth + 1)
            problems.push(`${{box.className || box.tagName}} scrolls sideways (${{box.scrollWidth}} px wide)`);
    }}
    const image = explorer.querySelector('{FIGURE}'), shown = image.getBoundingClientRect();
    if (Math.abs(shown.width * ratio - image.naturalWidth) > 2)
        problems.push(`the figure, drawn for ${{image.naturalWidth / ratio}} px, is shown on ${{shown.width}} px`);
    if (Math.abs(shown.width / shown.height - image.naturalWidth / image.naturalHeight) > 0.01)
        problems.push('the figure is stretched');
    if (image.parentElement.clientHeight + 1 < shown.height)
        problems.push(`the figure's bottom is cut (${{image.parentElement.clientHeight}} px of ${{shown.height}} px)`);
    const frame = narrow ? image.parentElement.getBoundingClientRect() : shown;
    if (frame.right > document.documentElement.clientWidth + 1) problems.push('the figure is wider than the page');
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


def _offline_page(browser, width):
    """A page ``width`` pixels wide that records console errors and answers nothing from outside 127.0.0.1."""
    page = browser.new_page(viewport={"width": width, "height": WINDOW_HEIGHT}, device_scale_factor=PIXEL_RATIO)
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
    """Whether a learner can change this control (it is shown and enabled: a disabled slider is marked on its
    noUiSlider track, not on the handle the test presses keys on)."""
    return (
        control.is_visible()
        and not control.is_disabled()
        and control.get_attribute("aria-disabled") != "true"
        and not control.evaluate("e => e.closest('[disabled]') !== null")
    )


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


def _readable(explorer, where, narrow=False):
    """Fail naming what a learner could not read or use: narrow tracks, cut or overlapping text, text too small,
    sideways scrolling, a blurred, shrunk or stretched figure. ``narrow``: the column is narrower than the
    figure, which then scrolls on its own (and only it)."""
    problems = explorer.evaluate(READABILITY, [PIXEL_RATIO, narrow])
    assert not problems, f"{where}: " + "; ".join(problems)


def _check_a_narrow_column(explorer, column, where, screenshot):
    """In a column as narrow as JupyterLab's beside its file browser, the controls and caption wrap and the
    figure keeps its size (its text readable), scrolling on its own."""
    window = explorer.page.viewport_size
    explorer.evaluate(f"e => e.style.maxWidth = '{column}px'")
    try:
        _readable(explorer, f"{where} in a {column}-px column", narrow=True)
        figure_box = explorer.locator(f":scope > .{FIGURE_CLASS}")
        assert figure_box.evaluate("e => e.scrollWidth > e.clientWidth"), f"{where}: the figure does not scroll"
        explorer.page.set_viewport_size({**window, "height": 2 * window["height"]})  # the whole widget in view
        explorer.screenshot(path=screenshot)
    finally:
        explorer.page.set_viewport_size(window)
        explorer.evaluate("e => e.style.maxWidth = ''")


def _try_extremes(explorer, where, screenshots):
    """Every slider at its maximum (the most stages, micro-batches, supersteps), then every option of every
    dropdown there: each must redraw, stay readable and show a caption. Screenshots: ``screenshots``-max-*.png."""
    image = explorer.locator(FIGURE)
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


def _slider(explorer, description):
    """The handle of the slider described ``description``."""
    return explorer.locator(".widget-slider").filter(has_text=description).locator(".noUi-handle")


def _value(handle) -> int:
    return round(float(handle.get_attribute("aria-valuenow")))


def _change(explorer, action, what):
    """Do ``action`` and wait for the explorer's figure to be redrawn; return the caption's text."""
    image = explorer.locator(FIGURE)
    before = image.get_attribute("src")
    action()
    _wait_for_redraw(image, before, what)
    _readable(explorer, what)
    return explorer.locator(":scope > .widget-html").inner_text()


def _choose(explorer, dropdown, option, where):
    select = explorer.locator(".widget-dropdown").filter(has_text=dropdown).locator("select")
    if select.input_value() == option:
        return explorer.locator(":scope > .widget-html").inner_text()
    return _change(explorer, lambda: select.select_option(option), f"{where}: {dropdown} {option!r}")


def _press(handle, key):
    handle.focus()
    handle.press(key)


def _check_the_accumulation_follows_the_schedule(explorer, where):
    """Each schedule's slider steps only through the counts it allows; a count it forbids (after a change of
    stages) moves to the nearest allowed one, saying so; the explorer says what each schedule is."""
    stages, accumulation = _slider(explorer, "stages"), _slider(explorer, "accumulation")
    # from the learner's own count: on one stage more it moves to the nearest multiple of the stages, saying so,
    # and comes back with the stage (a model's explorer, from_model, keeps the model's stages: its slider is fixed)
    _choose(explorer, "schedule", "Interleaved", where)
    if _movable(stages):
        count, more = _value(accumulation), _value(stages) + 1
        caption = _change(explorer, lambda: _press(stages, "ArrowRight"), f"{where}: one stage more")
        assert count % more, f"{where}: the notebook's count {count} is allowed on {more} stages too: nothing to check"
        assert f"accumulation {count} is not allowed: Interleaved on {more} stages" in caption, f"{where}: {caption}"
        assert _value(accumulation) % more == 0
        caption = _change(explorer, lambda: _press(stages, "ArrowLeft"), f"{where}: that stage back")
        assert _value(accumulation) == count and "not allowed" not in caption, f"{where}: {caption}"
    for schedule, multiple in (("Grouped", lambda s: 2 * s), ("Interleaved", lambda s: s), ("1F1B", lambda s: 1)):
        caption = _choose(explorer, "schedule", schedule, where)
        rule, before = multiple(_value(stages)), _value(accumulation)
        at_max = accumulation.get_attribute("aria-valuenow") == accumulation.get_attribute("aria-valuemax")
        caption = _change(
            explorer,
            lambda key="ArrowLeft" if at_max else "ArrowRight": _press(accumulation, key),
            f"{where}: {schedule}'s accumulation moved",
        )
        after = _value(accumulation)
        assert abs(after - before) == rule and after % rule == 0, f"{where}: {schedule} stepped {before} -> {after}"
        assert f"{after} micro-batches" in caption and "Not allowed" not in caption, f"{where}: {caption}"
    caption = _choose(explorer, "schedule", "Eager 1F1B", where)
    assert "Eager 1F1B, for comparison: 1F1B with a longer warm-up" in caption, f"{where}: {caption}"


def _check_a_typed_tile_is_shown(explorer, where):
    """The tile-memory explorer's number box takes a tile index typed by the learner."""
    box, slider = explorer.locator(".widget-text input"), _slider(explorer, "tile")
    first, last = _value(slider), round(float(slider.get_attribute("aria-valuemax")))
    for tile in (last, first):  # the last tile (hard to reach with a slider of 1,472 tiles), then back
        typed = f"{where}: tile {tile} typed"
        caption = _change(explorer, lambda text=str(tile): (box.fill(text), box.press("Enter")), typed)
        assert f"tile {tile}:" in caption and _value(slider) == tile, f"{where}: typed {tile}, shows {caption}"


def _check_the_trace_names_its_steps(explorer, where):
    caption = explorer.locator(":scope > .widget-html").inner_text()
    assert re.search(r"the trace's rows, layers in the order they first run: \w+ \(1 step\)", caption), caption


KINDS = {  # what each kind of explorer promises, told apart by a control only it has
    "accumulation": _check_the_accumulation_follows_the_schedule,
    "tile": _check_a_typed_tile_is_shown,
    "supersteps": _check_the_trace_names_its_steps,
}


@pytest.mark.parametrize("width", WINDOW_WIDTHS, ids=[f"{width}px" for width in WINDOW_WIDTHS])
@pytest.mark.parametrize("notebook, explorers", notebooks_with_widgets())
def test_every_control_of_every_widget_redraws_its_figure(browser, voila, notebook, explorers, width):
    page = _offline_page(browser, width)
    page.goto(voila(notebook), timeout=NOTEBOOK_SECONDS * 1000)
    page.wait_for_function(
        f"n => document.querySelectorAll('{EXPLORER}').length >= n", arg=explorers, timeout=NOTEBOOK_SECONDS * 1000
    )
    page.wait_for_function(
        f"() => Array.from(document.querySelectorAll('{EXPLORER} > .{FIGURE_CLASS} > .widget-image'))"
        ".every(img => img.complete && img.naturalWidth > 0)",
        timeout=REDRAW_MS,
    )
    screenshots = SCREENSHOTS / f"{width}px"
    screenshots.mkdir(parents=True, exist_ok=True)
    stem = Path(notebook).stem
    shown = page.locator(EXPLORER).count()  # at least what the committed outputs show; all are tried
    for index in range(shown):
        explorer = page.locator(EXPLORER).nth(index)
        where = f"{notebook} at {width} px, widget {index}"
        explorer.scroll_into_view_if_needed()
        explorer.screenshot(path=screenshots / f"{stem}-widget{index}.png")
        _readable(explorer, where)
        moved = 0
        for number in range(explorer.locator(CONTROLS).count()):
            control = explorer.locator(CONTROLS).nth(number)
            image = explorer.locator(FIGURE)
            caption = explorer.locator(":scope > .widget-html")
            name, before, first_caption = _label(control), image.get_attribute("src"), caption.inner_text()
            move = _move(control)
            if move is None:
                continue
            what, undo = move
            moved += 1
            _wait_for_redraw(image, before, f"{where}: moving {name} ({what})")
            _readable(explorer, f"{where}, {name} moved")
            explorer.screenshot(path=screenshots / f"{stem}-widget{index}-{name}.png")
            changed = image.get_attribute("src")
            undo()  # back where it started, so every control is tried from the notebook's own setting
            _wait_for_redraw(image, changed, f"{where}: moving {name} back")
            assert caption.inner_text() == first_caption, (
                f"{where}: {name} moved back does not show the first figure's caption again"
            )
        assert moved, f"{where} has no control a learner can move"
        kinds = [check for control, check in KINDS.items() if _slider(explorer, control).count()]
        assert kinds, f"{where}: an explorer of no known kind"
        for check in kinds:
            check(explorer, where)
        _try_extremes(explorer, where, screenshots / f"{stem}-widget{index}")
        if width in LAB_COLUMN:
            column = LAB_COLUMN[width]
            _check_a_narrow_column(explorer, column, where, screenshots / f"{stem}-widget{index}-{column}px-column.png")
    assert not page.errors, f"{notebook}: the page logged errors: {page.errors}"
    assert all(any(name in u for name in OFFLINE_STYLESHEETS) for u in page.external), (
        f"{notebook}: the page asked the network for more than Voila's icon fonts: {page.external}"
    )
    page.close()
