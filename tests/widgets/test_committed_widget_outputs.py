"""A freshly opened notebook (outputs as committed, no kernel) shows each widget as a picture: the saved
widget state for JupyterLab and nbconvert's HTML, and a plain image for viewers without widgets (GitHub,
untrusted notebooks), never the widget's ``VBox(children=...)`` text."""

import base64
import json
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _widget_outputs(notebook):
    return [
        (number, output)
        for number, cell in enumerate(notebook["cells"])
        if cell["cell_type"] == "code"
        for output in cell.get("outputs", [])
        if WIDGET_VIEW in output.get("data", {})
    ]


def test_the_course_shows_widgets():
    assert sum(len(_widget_outputs(json.loads(p.read_text(encoding="utf-8")))) for p in NOTEBOOKS) >= 4


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_committed_widget_has_its_picture_and_its_saved_state(path):
    notebook = json.loads(path.read_text(encoding="utf-8"))
    state = notebook["metadata"].get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    for number, output in _widget_outputs(notebook):
        data, where = output["data"], f"{path.name} cell {number}"
        assert data[WIDGET_VIEW]["model_id"] in state, f"{where}: the widget's state is not saved in the notebook"
        assert base64.b64decode(data.get("image/png", ""))[:8] == PNG_SIGNATURE, f"{where}: no picture"
        text = "".join(data.get("text/plain", ""))
        assert text.endswith("run this cell to use its controls") and "VBox(" not in text, f"{where}: {text!r}"
