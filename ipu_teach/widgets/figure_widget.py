"""A figure that controls redraw, shown as a PNG in an ``ipywidgets.Image``.

The PNG works the same in JupyterLab, Voila and nbval (no Output widget, no interactive backend), and
the matplotlib Figure stays reachable as ``.figure`` so tests can read what was drawn. The PNG is drawn
at twice the resolution it is shown at, so it stays crisp on high-density screens and is never
stretched. Displayed, an explorer also offers its current figure as a plain ``image/png``: a notebook
opened before its cells run (untrusted, or without the widget state) shows that picture instead of the
widget's ``VBox(...)`` text.

Reports may come from someone else, so their strings (variable and program-step names) are untrusted:
captions are plain text that ``redraw`` escapes in one place before they become HTML (a name like
``<img src=x onerror=...>`` must not run in the JupyterLab page, which can drive the kernel), and text
drawn by matplotlib goes through :func:`plot_text` so a ``$`` is not read as math.
"""

from __future__ import annotations

import base64
import contextlib
import html
import io

SCREEN_DPI = 96  # CSS pixels per figure inch, CSS's own: a 10-point label is as large as the notebook's text
MIN_TEXT_PX = 9  # the smallest text drawn in a figure, in CSS pixels on the page (7 points)
PNG_DPI = 2 * SCREEN_DPI
CONTROL_WIDTH = "330px"
DESCRIPTION_WIDTH = "95px"  # "accumulation" and "liveness of" in full
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
FIGURE_CLASS = "ipu-teach-figure"  # the box around an explorer's figure, for pages and tests to find it


def new_figure(size):
    """A Figure outside pyplot, so redrawing it never displays a second copy in the notebook."""
    from matplotlib.figure import Figure

    return Figure(figsize=size)


def caption_html(text: str) -> str:
    """A plain-text caption as HTML: every character escaped, line breaks kept."""
    return "<br>".join(html.escape(line) for line in str(text).split("\n"))


def plot_text(text) -> str:
    """Untrusted text for matplotlib: a ``$`` is drawn as a dollar, never parsed as mathtext."""
    return str(text).replace("$", r"\$")


def figure_png(figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=PNG_DPI)
    return buffer.getvalue()


def control_layout(control) -> None:
    """A control wide enough to drag (sliders) and read (its whole description)."""
    control.layout.width = CONTROL_WIDTH
    control.style.description_width = DESCRIPTION_WIDTH


class FigureWidget:
    """Base of the explorers: ``controls`` (ipywidgets) whose changes call ``redraw``. Controls wrap
    onto as many rows as the page needs; a control that has nothing to choose is hidden."""

    figure_size = (8.4, 5)

    def __init__(self, controls: list, row: list | None = None):
        """``controls`` redraw the figure when they change; ``row`` is what the controls' row shows,
        by default the controls (an explorer may group a control with a box linked to it)."""
        import ipywidgets

        self.controls = controls
        self._held = False
        for control in controls:
            control_layout(control)
            if isinstance(control, ipywidgets.Dropdown) and len(control.options) < 2:
                control.layout.display = "none"
        self.figure = new_figure(self.figure_size)
        # never shrunk (its text would drop under MIN_TEXT_PX): in a column narrower than the figure, as
        # JupyterLab's with the file browser open at a 1024-pixel window, the figure scrolls on its own
        self.image = ipywidgets.Image(
            format="png", layout=ipywidgets.Layout(flex="0 0 auto", max_width="none", height="auto")
        )
        figure_box = ipywidgets.Box([self.image], layout=ipywidgets.Layout(overflow="auto hidden", max_width="100%"))
        figure_box.add_class(FIGURE_CLASS)
        self.caption = ipywidgets.HTML()
        for control in controls:
            control.observe(lambda change: self.redraw(), names="value")
        row = ipywidgets.HBox(row or controls, layout=ipywidgets.Layout(flex_flow="row wrap"))
        self.widget = ipywidgets.VBox([row, self.caption, figure_box])
        self.redraw()

    def draw(self, figure) -> str:
        """Draw on the cleared ``figure``; return the caption as plain text (``redraw`` escapes it).
        Subclasses implement it."""
        raise NotImplementedError

    @contextlib.contextmanager
    def holding_redraws(self):
        """Change controls inside this block without a redraw for each change (``draw`` may adjust one
        control to fit another, as the accumulation slider follows the schedule)."""
        held, self._held = self._held, True
        try:
            yield
        finally:
            self._held = held

    def redraw(self) -> None:
        if self._held:
            return
        self.figure.clear()
        self.caption.value = caption_html(self.draw(self.figure))
        self.image.value = figure_png(self.figure)
        self.image.layout.width = f"{self.display_width()}px"

    def display_width(self) -> int:
        """The figure's width on the page in CSS pixels (its PNG has twice as many)."""
        return round(self.figure.get_figwidth() * SCREEN_DPI)

    def _repr_mimebundle_(self, include=None, exclude=None):
        """The widget, with its current figure as a picture (shown at the widget's size, not the PNG's) and
        one line of text for viewers without widgets."""
        bundle = self.widget._repr_mimebundle_(include=include, exclude=exclude) or {}
        if WIDGET_VIEW not in bundle:  # no widget front end (a plain console): the figure is all there is
            return bundle
        bundle["image/png"] = base64.b64encode(self.image.value).decode("ascii")
        bundle["text/plain"] = f"{type(self).__name__}: run this cell to use its controls"
        return bundle, {"image/png": {"width": self.display_width()}}
