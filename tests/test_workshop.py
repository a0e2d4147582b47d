"""WORKSHOP.md stays true to the course: its checkpoints quote what the committed notebooks print in the
sections they name, its agendas add up to their length, every section it points to exists, and the README
links it beside the course map."""

import re
from pathlib import Path

import nbformat
import pytest
from helpers.scripts import load_script

REPO_ROOT = Path(__file__).resolve().parent.parent
WORKSHOP = (REPO_ROOT / "WORKSHOP.md").read_text(encoding="utf-8")
NOTEBOOKS = {path.name[:2]: path for path in sorted((REPO_ROOT / "notebooks").glob("*.ipynb"))}
make_slides = load_script("tools/make_slides.py")

CHECKPOINT = re.compile(r'\*\*Checkpoint \((\d\d), "([^"]+)"\)\.\*\*(.*?)(?=\n- |\n\n)', re.DOTALL)
SECTION_REFERENCE = re.compile(r"\b(0\d) §(\d+)")


def sections(number):
    """{section title: text printed by its code cells} of course notebook ``number`` ("00" to "08")."""
    notebook = nbformat.read(NOTEBOOKS[number], as_version=4)
    printed = {}
    for title, cells in make_slides.sections_of(notebook):
        texts = []
        for cell in cells:
            for output in cell.get("outputs", []):
                if output.get("output_type") == "stream":
                    texts.append(output["text"])
                elif "text/plain" in output.get("data", {}):
                    texts.append(output["data"]["text/plain"])
                elif output.get("output_type") == "error":
                    texts.append(output["evalue"])
        printed[title] = "\n".join(texts)
    return printed


def numbered_sections(number):
    return {title.split(" · ")[0] for title in sections(number) if " · " in title}


def agenda(heading):
    """The rows (start, minutes, rest of the row) of the table under ``heading``."""
    table = WORKSHOP.split(heading, 1)[1].split("\n\n", 2)[1]
    rows = [row.strip("|").split("|") for row in table.splitlines()[2:]]
    return [(start.strip(), int(minutes), "|".join(rest)) for start, minutes, *rest in rows]


def test_every_checkpoint_quotes_what_its_section_prints():
    checkpoints = CHECKPOINT.findall(WORKSHOP)
    assert len(checkpoints) >= 8
    for number, section, says in checkpoints:
        assert "should now see" in says
        matching = [title for title in sections(number) if title.startswith(section)]
        assert matching, f"notebook {number} has no section starting with {section!r}"
        printed = sections(number)[matching[0]]
        quoted = re.findall(r"`([^`]+)`", says)
        assert quoted, f"checkpoint ({number}, {section!r}) quotes nothing"
        for text in quoted:
            assert text in printed, f"notebook {number}, section {matching[0]!r} does not print {text!r}"


@pytest.mark.parametrize(
    ("heading", "length"), [("## The 3-hour path (180 minutes)", 180), ("## The 90-minute path", 90)]
)
def test_each_agenda_adds_up_to_its_length_with_every_start_time_following_on(heading, length):
    rows = agenda(heading)
    elapsed = 0
    for start, minutes, _ in rows:
        assert start == f"{elapsed // 60}:{elapsed % 60:02d}", f"{heading}: a block starts at {start}"
        elapsed += minutes
    assert elapsed == length


@pytest.mark.parametrize("heading", ["## The 3-hour path (180 minutes)", "## The 90-minute path"])
def test_every_notebook_and_section_an_agenda_names_exists(heading):
    for _, _, row in agenda(heading):
        for link in re.findall(r"\]\((notebooks/[^)]+\.ipynb)\)", row):
            assert (REPO_ROOT / link).is_file(), link
        linked = re.findall(r"\]\(notebooks/(\d\d)_", row)
        if len(linked) == 1:  # a row about one notebook: its §N are that notebook's sections
            for first, last in re.findall(r"§(\d+)(?:-§(\d+))?", row):
                for number in range(int(first), int(last or first) + 1):
                    assert str(number) in numbered_sections(linked[0]), f"{heading}: {linked[0]} has no §{number}"


def test_every_section_the_answers_point_to_exists():
    references = SECTION_REFERENCE.findall(WORKSHOP)
    assert len(references) >= 10
    for number, section in references:
        assert section in numbered_sections(number), f"WORKSHOP.md points to {number} §{section}, which is not there"


def test_every_link_within_the_page_reaches_a_heading():
    # GitHub's anchors: the heading in lower case, spaces as hyphens, punctuation other than hyphens dropped
    headings = re.findall(r"^#+ (.+)$", WORKSHOP, re.MULTILINE)
    anchors = {re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-") for heading in headings}
    links = re.findall(r"\]\(#([^)]+)\)", WORKSHOP)
    assert links and set(links) <= anchors, set(links) - anchors


def test_the_room_commands_are_the_course_commands_and_the_readme_links_the_kit():
    """Every ``ipu-teach course`` option WORKSHOP.md tells the instructor to use is one the command has, and the
    backup name it promises is the one ``--reset`` makes."""
    import argparse

    from ipu_teach.cli import course, workspace

    commands = argparse.ArgumentParser().add_subparsers()
    course.add_parser(commands)
    options = {o for action in commands.choices["course"]._actions for o in action.option_strings}
    told = set(re.findall(r"`ipu-teach course (--[a-z-]+)", WORKSHOP))
    assert {"--reset", "--ip"} <= told <= options
    promised = workspace._backup_name(Path("/nonexistent/02_steps_per_execution.ipynb")).name
    assert workspace.WORKSPACE_NAME in WORKSHOP and f"`{promised}`" in WORKSHOP
    course_map = (REPO_ROOT / "README.md").read_text(encoding="utf-8").split("## Course map", 1)[1].split("\n## ")[0]
    assert "[WORKSHOP.md](WORKSHOP.md)" in course_map
