"""tools/make_slides.py builds the instructor's reveal.js deck from the committed notebooks' outputs: the slides
it promises, each figure embedded byte for byte, printed tables without their log lines, reveal.js taken from
where it is told, and a clear error when the notebooks no longer hold what a slide names."""

import base64
import importlib.util
import shutil
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("make_slides", REPO_ROOT / "tools" / "make_slides.py")
make_slides = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_slides)


class TopLevelSlides(HTMLParser):
    """The text of each top-level <section> of reveal's slides, and the images (source, alternative text) in it."""

    def __init__(self):
        super().__init__()
        self.depth, self.slides = 0, []

    def handle_starttag(self, tag, attrs):
        if tag == "section":
            self.depth += 1
            if self.depth == 1:
                self.slides.append({"text": "", "images": []})
        elif tag == "img" and self.depth:
            self.slides[-1]["images"].append((dict(attrs)["src"], dict(attrs).get("alt")))

    def handle_endtag(self, tag):
        if tag == "section":
            self.depth -= 1

    def handle_data(self, data):
        if self.depth:
            self.slides[-1]["text"] += data


def slides_of(page):
    parser = TopLevelSlides()
    parser.feed(page)
    return parser.slides


def title_of(name):
    """The notebook's "# " heading as the slides show it (markdown's backticks become code), e.g.
    "00 · The IPU and bulk synchronous parallel (BSP)"."""
    first_cell = nbformat.read(REPO_ROOT / "notebooks" / name, as_version=4).cells[0].source
    return first_cell.splitlines()[0].removeprefix("# ").replace("`", "")


def first_png(pick):
    """The picked figure's PNG bytes, read straight from the committed notebook."""
    notebook = nbformat.read(REPO_ROOT / "notebooks" / pick.notebook, as_version=4)
    for title, cells in make_slides.sections_of(notebook):
        if title.startswith(pick.section):
            for cell in cells:
                for output in cell.get("outputs", []):
                    data = output.get("data", {})
                    if "image/png" in data and make_slides.WIDGET_VIEW not in data:
                        return base64.b64decode(data["image/png"])
    raise AssertionError(f"no figure for {pick}")


def shown_section(pick):
    notebook = nbformat.read(REPO_ROOT / "notebooks" / pick.notebook, as_version=4)
    return next(title for title, _ in make_slides.sections_of(notebook) if title.startswith(pick.section)).replace(
        "`", ""
    )


@pytest.fixture(scope="module")
def deck(tmp_path_factory):
    out = tmp_path_factory.mktemp("deck") / "intro.slides.html"
    assert make_slides.main(["--out", str(out)]) == 0
    return out.read_text(encoding="utf-8")


def test_the_deck_has_a_title_slide_one_slide_per_pick_and_a_closing_slide(deck):
    slides = slides_of(deck)
    assert len(slides) == len(make_slides.SLIDES) + 2
    assert make_slides.DECK_TITLE in slides[0]["text"]
    for pick, shown in zip(make_slides.SLIDES, slides[1:-1]):
        assert shown_section(pick) in shown["text"] and pick.says in shown["text"]
        assert title_of(pick.notebook) in shown["text"]  # under its notebook's title
    course = slides[-1]["text"]
    assert all(title_of(path.name) in course for path in sorted((REPO_ROOT / "notebooks").glob("*.ipynb")))


def test_every_figure_is_embedded_as_the_notebook_holds_it(deck):
    slides = slides_of(deck)[1:-1]
    for pick, shown in zip(make_slides.SLIDES, slides):
        if pick.kind == "figure":
            [(source, alternative)] = shown["images"]
            assert source.startswith("data:image/png;base64,")  # in the file: nothing to fetch
            assert base64.b64decode(source.split(",", 1)[1]) == first_png(pick)
            assert alternative == f"{title_of(pick.notebook)}: {shown_section(pick)}"  # a screen reader says what
        else:
            assert shown["images"] == []


def test_a_printed_table_is_shown_without_the_log_lines_printed_with_it(deck):
    numerics = next(p for p in make_slides.SLIDES if p.notebook.startswith("01_") and p.kind == "text")
    shown = slides_of(deck)[1 + make_slides.SLIDES.index(numerics)]["text"]
    assert "largest difference between CPU and IPU weights:" in shown
    assert "IPU (simulated)" in shown
    assert "INFO:ipu_teach" not in shown


def test_a_text_pick_takes_the_first_printed_text_holding_what_it_names(deck):
    precision = next(p for p in make_slides.SLIDES if p.notebook.startswith("06_"))
    assert precision.containing == "us/step"
    shown = slides_of(deck)[1 + make_slides.SLIDES.index(precision)]["text"]
    assert "float32" in shown and "mixed_float16" in shown and "us/step" in shown
    assert "Policy" not in shown  # the section's first printout, the policy's demonstration, is passed over


def test_the_deck_says_what_it_loads_from_the_network_and_can_take_reveal_from_a_local_folder(tmp_path, capsys):
    out = tmp_path / "room" / "intro.html"
    assert make_slides.main(["--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "presenting it loads from the network:" in printed
    assert "https://unpkg.com/reveal.js@4.0.2/dist/reveal.js" in printed  # nbconvert's CDN by default

    assert make_slides.main(["--out", str(out), "--reveal-prefix", "reveal.js", "--require-js", "reveal.js/r.js"]) == 0
    page = out.read_text(encoding="utf-8")
    assert '"reveal.js/dist/reveal.js"' in page and 'href="reveal.js/dist/reveal.css"' in page
    assert '<script src="reveal.js/r.js"></script>' in page
    loaded = make_slides.external_addresses(page)
    assert not any("reveal" in address or "require" in address for address in loaded)
    assert loaded  # what remains (jQuery, MathJax, mermaid) is listed, not hidden
    assert f"{len(make_slides.SLIDES) + 2} slides" in capsys.readouterr().out


def test_a_notebook_without_its_outputs_is_named_and_nothing_is_written(tmp_path, capsys):
    notebooks = tmp_path / "notebooks"
    shutil.copytree(REPO_ROOT / "notebooks", notebooks, ignore=shutil.ignore_patterns("solutions"))
    stripped = notebooks / "02_steps_per_execution.ipynb"
    notebook = nbformat.read(stripped, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs = []
    nbformat.write(notebook, stripped)
    out = tmp_path / "deck.html"
    assert make_slides.main(["--notebooks", str(notebooks), "--out", str(out)]) == 1
    error = capsys.readouterr().err
    assert "02_steps_per_execution.ipynb has no figure output (is the notebook executed?)" in error
    assert "update SLIDES in tools/make_slides.py" in error
    assert not out.exists()


def test_a_section_that_was_renamed_is_named():
    moved = make_slides.Pick("03_replication.ipynb", "4 · Scaling to Mars")
    with pytest.raises(make_slides.SlideSourceError, match="03_replication.ipynb has no section starting with"):
        make_slides.deck_notebook(picks=[moved])
