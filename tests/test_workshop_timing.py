"""tools/time_notebooks.py, the timings WORKSHOP.md's agendas are built from: sections as a learner sees them,
the reading estimate by its stated rule, and wall and processor seconds measured per section without ever
writing the notebook back."""

import importlib.util
from pathlib import Path

import nbformat
import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("time_notebooks", REPO_ROOT / "tools" / "time_notebooks.py")
time_notebooks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(time_notebooks)


def notebook(*cells):
    """A notebook of ("md" | "code", source) cells."""
    made = nbformat.v4.new_notebook()
    made.cells = [
        nbformat.v4.new_markdown_cell(s) if kind == "md" else nbformat.v4.new_code_cell(s) for kind, s in cells
    ]
    made.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return made


def test_sections_start_at_every_level_two_heading_also_inside_a_markdown_cell():
    sections, code_sections = time_notebooks.split_into_sections(
        notebook(
            ("md", "# Title\n\nfour words of intro"),
            ("code", "import math\n\nx = 1\n"),
            ("md", "end of the first part\n\n## 1 · First\nsix words here\n\n## 2 · Second\nthree more words"),
            ("code", "y = 2"),
            ("md", "### a subheading stays in its section\nSolution: `%load solutions/00_exercise_1.py`."),
            ("md", "Again: %load solutions/00_exercise_1.py and %load solutions/00_exercise_2.py"),
        )
    )
    assert [s.title for s in sections] == [time_notebooks.BEFORE_FIRST_SECTION, "1 · First", "2 · Second"]
    first_part, first, second = sections
    # "# Title four words of intro" + "end of the first part": the text before the heading stays behind
    assert first_part.prose_words == 6 + 5
    assert (first_part.code_cells, first_part.code_lines) == (1, 2)  # blank lines are not read
    assert first.prose_words == len("1 · First six words here".split())  # the heading counts, not its ##
    assert (first.code_cells, second.code_cells) == (0, 1)
    assert code_sections == {1: first_part, 3: second}
    # one exercise per distinct solution, however often it is pointed to
    assert second.exercises == {"solutions/00_exercise_1.py", "solutions/00_exercise_2.py"}


def test_a_pointer_that_names_its_siblings_counts_each_solution():
    text = "`%load solutions/08_exercise_1.py` (and `_2`, `_3`), each in a new cell"
    assert time_notebooks.exercise_solutions(text) == {f"solutions/08_exercise_{n}.py" for n in (1, 2, 3)}


def test_reading_and_exercise_minutes_follow_the_printed_rule():
    section = time_notebooks.Section("s")
    section.add_prose(" ".join(["word"] * 400) + " %load solutions/01_exercise_3.py")
    section.add_code("a = 1\n\nb = 2\n" * 10)  # 20 lines
    expected = (400 + 2) / time_notebooks.PROSE_WORDS_PER_MINUTE  # "%load" and its path are words too
    expected += 20 / time_notebooks.CODE_LINES_PER_MINUTE + time_notebooks.MINUTES_PER_CODE_CELL
    assert section.reading_minutes == pytest.approx(expected)
    assert section.exercise_minutes == time_notebooks.MINUTES_PER_EXERCISE
    assert f"/ {time_notebooks.PROSE_WORDS_PER_MINUTE}" in time_notebooks.LEARNER_RULE


@pytest.mark.slow
def test_a_notebook_is_timed_per_section_and_left_as_it_was(tmp_path, capsys):
    path = tmp_path / "timed.ipynb"
    nbformat.write(
        notebook(
            ("code", "import time"),
            ("md", "## Busy"),
            ("code", "start = time.process_time()\nwhile time.process_time() - start < 0.4:\n    pass"),
            ("md", "## Idle"),
            ("code", "time.sleep(0.5)\nprint('slept')"),
        ),
        path,
    )
    before = path.read_bytes()
    timing = time_notebooks.time_notebook(path)
    assert path.read_bytes() == before  # executed in memory only
    _, busy, idle = timing.sections
    tick = 0.01  # processor times are counted in clock ticks
    assert busy.processor_seconds >= 0.4 - tick  # the kernel's own processor time, whatever the machine's load
    assert idle.wall_seconds >= 0.5 and idle.processor_seconds < 0.3  # sleeping is wall time, not processor time
    assert timing.processor_seconds >= busy.processor_seconds + idle.processor_seconds
    assert timing.wall_seconds >= busy.wall_seconds + idle.wall_seconds
    assert timing.peak_kernel_bytes > 10 * 2**20  # a Python kernel resides in more than 10 MiB

    assert time_notebooks.main([str(path)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("before: load average ") and printed[0].endswith(" processors")
    notebook_line = next(line for line in printed if line.startswith("timed.ipynb: wall "))
    assert "processor" in notebook_line and " MiB;" in notebook_line  # a kernel holds some memory
    assert any(line.startswith("    Idle: wall ") for line in printed)
    assert printed[-1] == time_notebooks.LEARNER_RULE


@pytest.mark.slow
def test_a_failing_notebook_is_named_and_the_others_are_still_timed(tmp_path, capsys):
    broken, fine = tmp_path / "broken.ipynb", tmp_path / "fine.ipynb"
    nbformat.write(notebook(("md", "## Oops"), ("code", "1 / 0")), broken)
    nbformat.write(notebook(("md", "## Fine"), ("code", "print('ok')")), fine)
    assert time_notebooks.main([str(broken), str(fine)]) == 1
    printed = capsys.readouterr().out
    assert "FAILED broken.ipynb (not timed):" in printed and "ZeroDivisionError" in printed
    assert "\nfine.ipynb: wall " in printed
    assert "1 of 2 notebooks failed, their times are left out: broken.ipynb" in printed


def test_a_path_that_is_not_a_notebook_is_refused(tmp_path):
    with pytest.raises(SystemExit, match="not a notebook file"):
        time_notebooks.main([str(tmp_path / "missing.ipynb")])
