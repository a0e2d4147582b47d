"""The README's table of tested faults stays true: its stated count is the table's, and every test it names exists."""

import pathlib
import re

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
HEADING = "### Bad inputs and faults tested"


def fault_table(readme: str) -> tuple[int, list[list[str]]]:
    """The count the text states and the table's rows (cells without the header), from the section's text."""
    section = readme[readme.index(HEADING) :].split("\n## ", 1)[0]
    stated = int(re.search(r"(\d[\d,]*) cases in all", section).group(1).replace(",", ""))
    lines = [line for line in section.splitlines() if line.startswith("|")][2:]
    # a cell may hold an escaped pipe (`\|`), as in `ipu-teach tour \| head -1`
    rows = [[cell.strip() for cell in re.split(r"(?<!\\)\|", line)[1:-1]] for line in lines]
    return stated, rows


def case_count(row: list[str]) -> int:
    """A row is one case unless it says "(N cases" (several "(N cases" add up)."""
    counts = [int(n) for n in re.findall(r"\((\d+) cases", " ".join(row))]
    return sum(counts) if counts else 1


def test_the_stated_count_is_the_tables():
    stated, rows = fault_table((REPO_ROOT / "README.md").read_text(encoding="utf-8"))
    assert all(len(row) == 4 for row in rows), [row for row in rows if len(row) != 4]
    assert stated == sum(case_count(row) for row in rows)


def test_every_named_test_file_exists():
    _, rows = fault_table((REPO_ROOT / "README.md").read_text(encoding="utf-8"))
    named = {name.strip() for row in rows for name in row[3].split(",")}
    missing = sorted(name for name in named if not (REPO_ROOT / "tests" / name).is_file())
    assert not missing


def test_counting_reads_rows_as_written():
    readme = (
        f"{HEADING}\n\n2 + 3 = 6 cases in all.\n\n| area | fault | what | test |\n|---|---|---|---|\n"
        "| a | x | y (2 cases); z (3 cases) | t.py |\n|  | `a \\| b` | one | t.py |\n\n## Next\n| not | counted |\n"
    )
    stated, rows = fault_table(readme)
    assert (stated, [case_count(row) for row in rows], rows[1][1]) == (6, [5, 1], "`a \\| b`")
