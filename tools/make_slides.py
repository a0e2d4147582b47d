"""Build the instructor's introduction, a reveal.js slide deck, from the executed notebooks' own figures.

The deck is made, never hand-drawn, so it shows what the course shows today: each slide is one output the
committed notebooks hold (a figure, or a printed table where a notebook has no figure), picked by ``SLIDES``
below (notebook, section, kind: no tags or cell numbers in the notebooks), under its notebook's title and
section heading. nbconvert's SlidesExporter writes it; the images are embedded, so the deck is one file.

reveal.js itself is not embedded: by default the deck loads it (with require.js, and jQuery and MathJax that
nbconvert's template adds) from public CDNs, so presenting needs the network; the tool prints every address
the deck loads. For a room without network, download reveal.js 4 and require.js once and point the deck at
them with ``--reveal-prefix`` (nbconvert's ``SlidesExporter.reveal_url_prefix``) and ``--require-js``
(``HTMLExporter.require_js_url``). Opened without reveal.js, the deck is a plain page of the slides in order.

    python tools/make_slides.py                                  # artifacts/slides/ipu-teach-intro.slides.html
    python tools/make_slides.py --out intro.html --reveal-prefix reveal.js --require-js reveal.js/require.js
"""

import argparse
import copy
import html
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbconvert import SlidesExporter

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))
from ipu_teach.atomic import atomic_write  # noqa: E402

NOTEBOOKS = REPO_ROOT / "notebooks"
DEFAULT_OUT = REPO_ROOT / "artifacts" / "slides" / "ipu-teach-intro.slides.html"
DECK_TITLE = "ipu-teach: programming a Graphcore IPU, simulated on your laptop"
SECTION_HEADING = re.compile(r"^## +(.+)$", re.MULTILINE)
NOTEBOOK_TITLE = re.compile(r"^# +(.+)$", re.MULTILINE)
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
# A quoted http(s) address of a script, module or style sheet (links in the slides' text are not loaded).
LOADED_ADDRESS = re.compile(r"""["'](https?://[^"'\s]+?\.(?:js|mjs|css)(?:\?[^"'\s]*)?)["']""")
# reveal.js lays out a 960 x 700 slide: a figure under two lines of headings gets what is left.
SLIDE_STYLE = (
    "<style>.reveal h1 { font-size: 1.9em; } .reveal h2 { font-size: 1.3em; } .reveal h3 { font-size: 1.15em; }"
    " .reveal .jp-OutputArea-output img { max-height: 450px !important; width: auto; }</style>"
)
NO_ALTERNATIVE_TEXT = "No description has been provided for this image"  # what nbconvert writes without one
LOG_LINE = re.compile(r"^(?:INFO|WARNING):ipu_teach:.*\n?", re.MULTILINE)  # Graphcore-style log lines


@dataclass(frozen=True)
class Pick:
    """One slide: the first ``kind`` output ("figure": a PNG that is not a widget's; "text": what a cell
    printed on stdout, holding ``containing``) of the code cells in the section of ``notebook`` whose heading
    starts with ``section``."""

    notebook: str
    section: str
    kind: str = "figure"
    says: str = ""  # one line for the instructor to say, shown under the heading
    containing: str = ""


SLIDES = (
    Pick(
        "00_ipu_and_bsp.ipynb",
        "7 · Reading the timeline",
        says="Every program is supersteps: compute, sync, exchange. The slowest tile sets the pace.",
    ),
    Pick(
        "00_ipu_and_bsp.ipynb",
        "8 · What an imbalanced mapping costs",
        says="The same work crowded on 2 of 16 tiles: 8x the compute cycles.",
    ),
    Pick(
        "01_porting_keras_to_the_ipu.ipynb",
        "8 · Same numerics on the CPU and on the IPU",
        kind="text",
        says="Five changes put the tutorial's Keras model on the IPU; it learns exactly what the CPU learns.",
    ),
    Pick(
        "02_steps_per_execution.ipynb",
        "3 · A table and a figure",
        says="Each execution costs the host ~2.8 ms: loop many steps on the device.",
    ),
    Pick(
        "03_replication.ipynb",
        "4 · Scaling to a Pod",
        says="Replicas add throughput, and an all-reduce every step.",
    ),
    Pick(
        "04_pipelining.ipynb",
        "Ramp-up, main phase, ramp-down",
        says="A model too big for one IPU: stages on IPUs, micro-batches in flight, gradient accumulation.",
    ),
    Pick(
        "05_profiling.ipynb",
        "5 · The tile-memory explorer",
        says="Every tile's SRAM holds data and code; the fullest tile decides whether a program fits.",
    ),
    Pick(
        "06_half_precision.ipynb",
        "2 · Keras mixed precision",
        kind="text",
        containing="us/step",
        says="fp16: faster products, half the activations, and new ways to fail.",
    ),
    Pick(
        "07_where_next.ipynb",
        "5 · PyTorch pipelining",
        says="The same ideas in PopTorch and PyTorch: 1F1B beside Graphcore's schedules.",
    ),
    Pick(
        "08_poptorch_on_the_ipu.ipynb",
        "6 · Pipelining with `BeginBlock`",
        kind="text",
        containing="IPU0 |",
        says="PopTorch on the same IPU: BeginBlock makes the stages, the same pipeline as PipelineStage.",
    ),
    Pick(
        "09_sizing_a_real_model.ipynb",
        "7 · A POD16",
        kind="text",
        containing="uint8",
        says="ResNet-50 on 16 IPUs, sized in seconds: accumulation pays the all-reduce, 8-bit images the host's links.",
    ),
)


class SlideSourceError(Exception):
    """A slide's notebook, section or output is missing: the notebooks changed and ``SLIDES`` must follow."""


def sections_of(notebook):
    """(section title, its code cells) in order; a ``## `` heading starts a section, in any markdown cell."""
    sections = [("", [])]
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            sections.extend((title.strip(), []) for title in SECTION_HEADING.findall(cell.source))
        elif cell.cell_type == "code":
            sections[-1][1].append(cell)
    return sections


def figure(cell, containing=""):
    """The cell's first PNG figure that is not a widget's, or None."""
    for output in cell.get("outputs", []):
        data = output.get("data", {})
        if "image/png" in data and WIDGET_VIEW not in data:
            return copy.deepcopy(output)
    return None


def printed_text(cell, containing=""):
    """What the cell printed on stdout, without the log lines it interleaves with it, if it holds ``containing``;
    else None."""
    streams = [
        o.text for o in cell.get("outputs", []) if o.get("output_type") == "stream" and o.get("name") == "stdout"
    ]
    text = LOG_LINE.sub("", "".join(streams)).strip("\n")
    if not text or containing not in text:
        return None
    return nbformat.v4.new_output("stream", name="stdout", text=text + "\n")


OUTPUT_KINDS = {"figure": figure, "text": printed_text}


def notebook_title(notebook, name):
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            found = NOTEBOOK_TITLE.search(cell.source)
            if found:
                return found.group(1).strip()
    raise SlideSourceError(f"{name} has no '# ' title heading")


def picked_output(pick, notebooks_folder):
    """The notebook's title, the section's full title and a copy of the output ``pick`` names."""
    path = Path(notebooks_folder) / pick.notebook
    if not path.is_file():
        raise SlideSourceError(f"{path} does not exist: update SLIDES in tools/make_slides.py")
    notebook = nbformat.read(path, as_version=4)
    output_of = OUTPUT_KINDS[pick.kind]
    for title, cells in sections_of(notebook):
        if title.startswith(pick.section):
            for cell in cells:
                output = output_of(cell, pick.containing)
                if output is not None:
                    return notebook_title(notebook, pick.notebook), title, output
            raise SlideSourceError(
                f"section {title!r} of {pick.notebook} has no {pick.kind} output (is the notebook executed?):"
                " update SLIDES in tools/make_slides.py"
            )
    raise SlideSourceError(
        f"{pick.notebook} has no section starting with {pick.section!r}: update SLIDES in tools/make_slides.py"
    )


def slide(markdown, output=None):
    """A markdown cell that starts a slide, and the code cell holding its output (its input is not exported)."""
    cells = [nbformat.v4.new_markdown_cell(markdown, metadata={"slideshow": {"slide_type": "slide"}})]
    if output is not None:
        cells.append(nbformat.v4.new_code_cell("", metadata={"slideshow": {"slide_type": "-"}}, outputs=[output]))
    return cells


def deck_notebook(picks=SLIDES, notebooks_folder=NOTEBOOKS):
    """The deck as a notebook (a title slide, one slide per pick, a closing slide with the course's notebooks),
    and a description of each figure in it, in order."""
    deck = nbformat.v4.new_notebook(metadata={"title": DECK_TITLE})
    deck.cells = slide(
        f"{SLIDE_STYLE}\n\n# {DECK_TITLE}\n\n"
        "- a simulated IPU (1,472 tiles, their SRAM, bulk-synchronous supersteps, IPU-Links, the host link)"
        " behind Graphcore's Keras API: the tutorial's code runs with only its imports changed\n"
        "- training is real (numpy on your CPU); IPU times and memory are simulated, and labelled so\n"
        "- every figure that follows is an output of the course's notebooks"
    )
    figure_descriptions = []
    for pick in picks:
        title, section, output = picked_output(pick, notebooks_folder)
        text = f"## {title}\n\n### {section}"
        if pick.kind == "figure":
            figure_descriptions.append(f"{title}: {section}".replace("`", ""))  # plain text, not markdown
        if pick.says:
            text += f"\n\n{pick.says}"
        deck.cells += slide(text, output)
    course = "\n".join(
        f"- {notebook_title(nbformat.read(path, as_version=4), path.name)}"
        for path in sorted(Path(notebooks_folder).glob("*.ipynb"))
    )
    deck.cells += slide(f"## The course, one notebook at a time\n\n{course}\n\nAgendas and checkpoints: WORKSHOP.md")
    return deck, figure_descriptions


def export(deck, figure_descriptions, reveal_prefix=None, require_js=None):
    """The deck's HTML, by nbconvert's SlidesExporter; code cells show only their outputs, and each figure
    has its slide's headings as its alternative text (nbconvert's template has no place for one)."""
    exporter = SlidesExporter(exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True)
    if reveal_prefix:
        exporter.reveal_url_prefix = reveal_prefix
    if require_js:
        exporter.require_js_url = require_js
    page, _ = exporter.from_notebook_node(deck)
    for alternative in figure_descriptions:
        page = page.replace(f'alt="{NO_ALTERNATIVE_TEXT}"', f'alt="{html.escape(alternative)}"', 1)
    return page


def external_addresses(page):
    """Every address the deck loads from the network (scripts, style sheets, modules), in order, once each."""
    return list(dict.fromkeys(LOADED_ADDRESS.findall(page)))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"the deck's HTML file (default: {DEFAULT_OUT})")
    parser.add_argument("--notebooks", type=Path, default=NOTEBOOKS, help="the folder of executed course notebooks")
    parser.add_argument("--reveal-prefix", help="reveal.js 4's folder or address (default: nbconvert's CDN)")
    parser.add_argument("--require-js", help="require.js's file or address (default: nbconvert's CDN)")
    options = parser.parse_args(argv)
    try:
        deck, figure_descriptions = deck_notebook(notebooks_folder=options.notebooks)
    except SlideSourceError as error:
        print(f"make_slides: {error}", file=sys.stderr)
        return 1
    page = export(deck, figure_descriptions, options.reveal_prefix, options.require_js)
    options.out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(options.out) as stream:
        stream.write(page)
    print(f"wrote {options.out}: {len(SLIDES) + 2} slides")
    addresses = external_addresses(page)
    if addresses:
        print("presenting it loads from the network:\n" + "\n".join(f"    {address}" for address in addresses))
    return 0


if __name__ == "__main__":
    sys.exit(main())
