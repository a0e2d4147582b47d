"""A figure that controls redraw, shown as a PNG in an ``ipywidgets.Image``.

The PNG works the same in JupyterLab, Voila and nbval (no Output widget, no interactive backend), and
the matplotlib Figure stays reachable as ``.figure`` so tests can read what was drawn.

Reports may come from someone else, so their strings (variable and program-step names) are untrusted:
captions are plain text that ``redraw`` escapes in one place before they become HTML (a name like
``<img src=x onerror=...>`` must not run in the JupyterLab page, which can drive the kernel), and text
drawn by matplotlib goes through :func:`plot_text` so a ``$`` is not read as math.
"""
from __future__ import annotations

import html
import io


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
    figure.savefig(buffer, format="png", dpi=80)
    return buffer.getvalue()


class FigureWidget:
    """Base of the explorers: ``controls`` (ipywidgets) whose changes call ``redraw``."""

    figure_size = (10, 6)

    def __init__(self, controls: list):
        import ipywidgets
        self.controls = controls
        self.figure = new_figure(self.figure_size)
        self.image = ipywidgets.Image(format="png")
        self.caption = ipywidgets.HTML()
        for control in controls:
            control.observe(lambda change: self.redraw(), names="value")
        self.widget = ipywidgets.VBox([ipywidgets.HBox(controls), self.caption, self.image])
        self.redraw()

    def draw(self, figure) -> str:
        """Draw on the cleared ``figure``; return the caption as plain text (``redraw`` escapes it).
        Subclasses implement it."""
        raise NotImplementedError

    def redraw(self) -> None:
        self.figure.clear()
        self.caption.value = caption_html(self.draw(self.figure))
        self.image.value = figure_png(self.figure)

    def _ipython_display_(self):
        from IPython.display import display
        display(self.widget)
