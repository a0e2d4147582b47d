"""Time the course notebooks for an instructor's agenda: run each as tools/execute_notebooks.py does, never save it.

Prints, per notebook, the wall-clock seconds (kernel start included) and the processor seconds its kernel used
(user + system, with any processes it waited for), then the same per section (a ``## `` heading starts one),
and the machine's load average before and after, so a figure measured on a shared machine can be read for
what it is: processor seconds hardly change with the load, wall seconds do.

It also prints a learner's time, which is not the kernel's: reading the notebook's prose and code and trying its
exercises. That is an estimate with its rule printed beside it (``LEARNER_RULE``), not a measurement.

    PYTHONPATH=. python tools/time_notebooks.py                     # every notebooks/*.ipynb
    PYTHONPATH=. python tools/time_notebooks.py notebooks/NAME.ipynb ...
"""

import os
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import psutil  # a dependency of ipykernel, so present wherever notebooks run
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

sys.path.insert(0, str(Path(__file__).resolve().parent))
from execute_notebooks import KERNEL_NAME, TIMEOUT_SECONDS, kernel_environment, notebook_arguments, prepare  # noqa: E402
from make_slides import SECTION_HEADING  # noqa: E402  (one rule for what starts a section, as the deck picks them)

BEFORE_FIRST_SECTION = "(title and imports)"

# A learner's pace, the rule of the estimate: prose (code shown in it included) read at 200 words a minute,
# code read at 20 lines a minute, half a minute per code cell to run it and read what it prints, and
# 5 minutes per "try it" exercise (predict, edit, run; `%load` the solution and run it again).
PROSE_WORDS_PER_MINUTE = 200
CODE_LINES_PER_MINUTE = 20
MINUTES_PER_CODE_CELL = 0.5
MINUTES_PER_EXERCISE = 5
EXERCISE_POINTER = re.compile(r"%load\s+(solutions/[\w./-]+\.py)")
SIBLING_POINTERS = re.compile(r"%load\s+(solutions/[\w./-]+_)\d+\.py`?\s*\(and\s+((?:`_\d+`,?\s*)+)\)")
"""``%load solutions/08_exercise_1.py` (and `_2`, `_3`)``: one pointer that names its siblings' solutions too."""


def exercise_solutions(text: str) -> set:
    """The solutions ``text`` points to: each ``%load`` path, and the siblings named beside one."""
    found = set(EXERCISE_POINTER.findall(text))
    for stem, siblings in SIBLING_POINTERS.findall(text):
        found |= {f"{stem}{n}.py" for n in re.findall(r"`_(\d+)`", siblings)}
    return found


LEARNER_RULE = (
    f"reading minutes = prose words / {PROSE_WORDS_PER_MINUTE} + code lines / {CODE_LINES_PER_MINUTE}"
    f" + {MINUTES_PER_CODE_CELL} per code cell; exercises {MINUTES_PER_EXERCISE} min each"
    " (one per distinct `%load solutions/...` pointer)"
)


@dataclass
class Section:
    """One ``## `` section of a notebook: its cells' measured seconds and what a learner reads and tries."""

    title: str
    prose_words: int = 0
    code_lines: int = 0
    code_cells: int = 0
    exercises: set = field(default_factory=set)
    wall_seconds: float = 0.0
    processor_seconds: float = 0.0

    def add_prose(self, text):
        self.prose_words += len(text.split())
        self.exercises.update(exercise_solutions(text))

    def add_code(self, source):
        self.code_lines += sum(1 for line in source.splitlines() if line.strip())
        self.code_cells += 1
        self.exercises.update(exercise_solutions(source))

    @property
    def reading_minutes(self):
        return (
            self.prose_words / PROSE_WORDS_PER_MINUTE
            + self.code_lines / CODE_LINES_PER_MINUTE
            + MINUTES_PER_CODE_CELL * self.code_cells
        )

    @property
    def exercise_minutes(self):
        return MINUTES_PER_EXERCISE * len(self.exercises)


@dataclass
class NotebookTime:
    name: str
    sections: list
    wall_seconds: float = 0.0
    processor_seconds: float = 0.0
    peak_kernel_bytes: int = 0  # the kernel's largest resident memory seen after a cell: what an open notebook holds

    def total(self, attribute):
        return sum(getattr(section, attribute) for section in self.sections)


def split_into_sections(notebook):
    """The notebook's sections in order, and for each code cell (by index) the section it belongs to. A ``## ``
    heading starts a section, also in the middle of a markdown cell; before the first: the title and imports."""
    sections, code_cell_sections = [Section(BEFORE_FIRST_SECTION)], {}
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type == "code":
            sections[-1].add_code(cell.source)
            code_cell_sections[index] = sections[-1]
        elif cell.cell_type == "markdown":
            # re.split with one group gives [text before, heading, text after, heading, text after, ...]
            parts = SECTION_HEADING.split(cell.source)
            sections[-1].add_prose(parts[0])
            for title, text in zip(parts[1::2], parts[2::2]):
                sections.append(Section(title.strip()))
                sections[-1].add_prose(title + text)
    return sections, code_cell_sections


def processor_seconds(process):
    """User and system seconds of a process and of the children it has waited for."""
    times = process.cpu_times()
    return times.user + times.system + times.children_user + times.children_system


class TimedClient(NotebookClient):
    """An nbclient that adds each cell's wall and kernel processor seconds to the cell's section, and keeps the
    kernel's processor seconds since it started (the notebook's total once its last cell has run)."""

    def __init__(self, notebook, result, cell_sections, **kwargs):
        super().__init__(notebook, on_cell_execute=self._cell_starts, on_cell_executed=self._cell_ends, **kwargs)
        self.result = result
        self.cell_sections = cell_sections
        self.kernel_process = None
        self.cell_start = None

    def _kernel(self):
        if self.kernel_process is None:
            self.kernel_process = psutil.Process(self.km.provisioner.pid)
        return self.kernel_process

    def _cell_starts(self, cell, cell_index):
        self.cell_start = (time.perf_counter(), processor_seconds(self._kernel()))

    def _cell_ends(self, cell, cell_index, execute_reply):
        wall_start, processor_start = self.cell_start
        processor_now = processor_seconds(self._kernel())
        section = self.cell_sections[cell_index]
        section.wall_seconds += time.perf_counter() - wall_start
        section.processor_seconds += processor_now - processor_start
        self.result.processor_seconds = processor_now
        self.result.peak_kernel_bytes = max(self.result.peak_kernel_bytes, self._kernel().memory_info().rss)


def time_notebook(path):
    """Execute one notebook in memory, as tools/execute_notebooks.py does, and return its timings;
    the file is only read."""
    notebook = nbformat.read(path, as_version=4)
    sections, cell_sections = split_into_sections(notebook)
    prepare(notebook)
    result = NotebookTime(path.name, sections)
    client = TimedClient(
        notebook,
        result,
        cell_sections,
        timeout=TIMEOUT_SECONDS,
        kernel_name=KERNEL_NAME,
        record_timing=False,
        resources={"metadata": {"path": str(path.parent)}},
    )
    start = time.perf_counter()
    client.execute(env=kernel_environment())
    result.wall_seconds = time.perf_counter() - start
    return result


def load_line():
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} processors"


def report(timings):
    """The printed report: one line per notebook, its sections indented below it, then the totals and the rule."""
    lines = []
    for timing in timings:
        lines.append(
            f"{timing.name}: wall {timing.wall_seconds:.1f} s, processor {timing.processor_seconds:.1f} s,"
            f" kernel memory {timing.peak_kernel_bytes / 2**20:.0f} MiB;"
            f" learner: reading {timing.total('reading_minutes'):.0f} min"
            f" + exercises {timing.total('exercise_minutes'):.0f} min"
        )
        for section in timing.sections:
            lines.append(
                f"    {section.title}: wall {section.wall_seconds:.1f} s, processor {section.processor_seconds:.1f} s;"
                f" reading {section.reading_minutes:.1f} min, {len(section.exercises)} exercise(s)"
            )
    lines.append(
        f"total: wall {sum(t.wall_seconds for t in timings):.1f} s,"
        f" processor {sum(t.processor_seconds for t in timings):.1f} s;"
        f" learner: reading {sum(t.total('reading_minutes') for t in timings):.0f} min"
        f" + exercises {sum(t.total('exercise_minutes') for t in timings):.0f} min"
    )
    lines.append(LEARNER_RULE)
    return lines


def main(argv=None):
    paths = notebook_arguments(argv, __doc__.splitlines()[0])
    if not paths:
        print("time_notebooks: no notebooks to time")
        return 0
    print(f"before: {load_line()}", flush=True)
    timings, failed = [], []
    for path in paths:
        try:
            timings.append(time_notebook(path))
        except (CellExecutionError, CellTimeoutError, DeadKernelError) as error:
            failed.append(path.name)
            print(f"FAILED {path.name} (not timed):\n{error}", flush=True)
        else:
            print(f"timed {path.name}", flush=True)
    print(f"after: {load_line()}")
    print("\n".join(report(timings)))
    if failed:
        print(f"{len(failed)} of {len(paths)} notebooks failed, their times are left out: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
