"""The learner's workspace: a copy of the course notebooks that JupyterLab opens, saves and autosaves.

The course's own notebooks (a checkout's ``notebooks/``, tracked by git) are never opened by JupyterLab,
so running, editing and autosaving change only the learner's copy, and updating the course (``git pull``)
never conflicts with the learner's work. Each start copies in what the learner does not have yet (a new
notebook, solution or data file) and never overwrites a file the learner has: one that differs from the
course's is kept and named, and ``reset`` puts the course's version back, first renaming the learner's
(``02_steps_per_execution.backup-1.ipynb``), so nothing the learner wrote is lost. A hidden record in the
workspace (``.ipu-teach-course.json``: the fingerprint of the course's version each file was copied from)
tells the files the learner changed from those the course has updated since, which are named apart.

The default folder is ``~/ipu-teach-workspace``: found again from any directory and after any ``git pull``,
outside the checkout (so ``git status`` stays clean), and one per user on a shared machine.
"""

from __future__ import annotations

import filecmp
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..atomic import atomic_write
from ..untrusted import read_json
from ..validation import BadFileError

WORKSPACE_NAME = "ipu-teach-workspace"
# Written by running the course (the executable cache, profiling reports, Python's and Jupyter's caches),
# not part of it: never copied.
GENERATED = {"__pycache__", "ipu_executable_cache", "report"}
FOLDER_SUMMARISED_FROM = 4  # more new files than this in one sub-folder are counted, not listed
RECORD_NAME = ".ipu-teach-course.json"
RECORD_LIMIT = 1_000_000  # bytes: a record of a course of thousands of files


def default_workspace() -> Path:
    return Path.home() / WORKSPACE_NAME


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def workspace_folder(given, course: Path) -> Path:
    """The workspace to use (``given``, else the default), refused if it would let JupyterLab save into the
    course's own folder or if it is a file."""
    workspace = (Path(given).expanduser() if given else default_workspace()).resolve()
    if _inside(workspace, course.resolve()):
        raise SystemExit(
            f"ipu-teach course: the workspace {workspace} is inside the course's own folder {course}, so "
            f"JupyterLab would save into the course's notebooks; choose a folder outside it with --workspace "
            f"(the default is ~/{WORKSPACE_NAME})"
        )
    if workspace.exists() and not workspace.is_dir():
        raise SystemExit(f"ipu-teach course: the workspace {workspace} is a file; give a folder with --workspace")
    return workspace


def course_files(course: Path) -> list:
    """The course's files, as paths relative to ``course``: everything but hidden and generated files."""
    return sorted(
        path.relative_to(course)
        for path in course.rglob("*")
        if path.is_file()
        and not any(part.startswith(".") or part in GENERATED for part in path.relative_to(course).parts)
    )


def fingerprint(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_record(workspace: Path) -> dict:
    """The fingerprint of the course's version each workspace file was copied from (by its path); empty for a
    workspace made before the record was kept, or one whose record is damaged (it is then written anew)."""
    try:
        record = read_json(workspace / RECORD_NAME, "a record of ipu-teach course", "", RECORD_LIMIT)
    except (FileNotFoundError, BadFileError):
        return {}
    return record if isinstance(record, dict) else {}


def write_record(workspace: Path, record: dict) -> None:
    with atomic_write(workspace / RECORD_NAME) as stream:
        json.dump(record, stream, indent=1, sort_keys=True)


def _copy(source: Path, target: Path) -> None:
    """The course's file, written whole (a new file of the learner's, writable even if the course's is not)."""
    with atomic_write(target, "wb") as stream:
        stream.write(source.read_bytes())


@dataclass
class Update:
    """What one update of the workspace did: files copied in; the learner's kept, those the learner changed
    and those the course has another version of (updated since they were copied, or copied before the record
    was kept); and how many were already the course's."""

    new: list = field(default_factory=list)
    changed: list = field(default_factory=list)
    updated: list = field(default_factory=list)
    unchanged: int = 0


def update_workspace(course: Path, workspace: Path) -> Update:
    """Copy into ``workspace`` every course file it does not have; leave every file it has as it is."""
    update, record = Update(), read_record(workspace)
    for name in course_files(course):
        target, key, version = workspace / name, name.as_posix(), fingerprint(course / name)
        if not target.exists():
            _copy(course / name, target)
            update.new.append(name)
            record[key] = version
        elif filecmp.cmp(course / name, target, shallow=False):
            update.unchanged += 1
            record[key] = version
        elif record.get(key) == version:  # the course's version is the one copied: the learner changed it
            update.changed.append(name)
        else:  # the course's version is not the one copied (or that is not known): the course was updated
            update.updated.append(name)
    write_record(workspace, record)
    return update


def summary(names: list) -> str:
    """``names`` for one line: each file of the top folder, a sub-folder's files counted when there are many."""
    by_folder = {}
    for name in names:
        by_folder.setdefault(name.parent, []).append(name)
    parts = []
    for folder, files in by_folder.items():
        if folder != Path(".") and len(files) >= FOLDER_SUMMARISED_FROM:
            parts.append(f"{folder.as_posix()}/ ({len(files)} files)")
        else:
            parts.extend(file.as_posix() for file in files)
    return ", ".join(parts)


def report(update: Update, workspace: Path) -> str:
    """The lines ``ipu-teach course`` prints about the workspace: where it is, what is new, what is kept."""
    lines = [
        f"ipu-teach course: your copy of the course is {workspace} (JupyterLab opens and saves it there; "
        f"the course's own notebooks are never changed)"
    ]
    if update.new:
        lines.append(f"ipu-teach course: new in your copy: {summary(update.new)}")
    if update.changed:
        lines.append(f"ipu-teach course: kept as you changed them: {summary(update.changed)}")
    if update.updated:
        lines.append(
            f"ipu-teach course: the course has another version of these, yours are kept: {summary(update.updated)}; "
            f"`ipu-teach course --reset NAME` takes the course's and keeps yours as a backup"
        )
    return "\n".join(lines)


def find_course_file(course: Path, name: str) -> Path:
    """The course file ``name`` stands for: a path as JupyterLab shows it (``02_steps_per_execution.ipynb``,
    ``solutions/02_exercise_1.py``), without its suffix, or the start of one notebook's name (``02``)."""
    files = course_files(course)
    wanted = Path(name.strip()).as_posix()
    exact = [file for file in files if wanted in (file.as_posix(), file.with_suffix("").as_posix())]
    notebooks = [file for file in files if file.parent == Path(".") and file.suffix == ".ipynb"]
    started = [file for file in notebooks if file.name.startswith(wanted)]
    found = exact or started
    if len(found) != 1:
        why = "is in more than one of" if found else "is none of"
        raise SystemExit(
            f"ipu-teach course: {name!r} {why} the course's notebooks; give one of "
            f"{', '.join(file.stem for file in notebooks)} (or a solution, e.g. solutions/02_exercise_1.py)"
        )
    return found[0]


def _backup_name(target: Path) -> Path:
    """``NAME.backup-K.SUFFIX`` beside ``target`` with the first K not taken: JupyterLab still opens it."""
    number = 1
    while (backup := target.with_name(f"{target.stem}.backup-{number}{target.suffix}")).exists():
        number += 1
    return backup


def reset(course: Path, workspace: Path, name: str) -> str:
    """Put the course's version of ``name`` back in the workspace, the learner's renamed to a backup; say so."""
    file = find_course_file(course, name)
    target = workspace / file
    if target.exists() and filecmp.cmp(course / file, target, shallow=False):
        return f"ipu-teach course: {target} is already the course's version; nothing to reset"
    backup = None
    if target.exists():
        backup = _backup_name(target)
        os.rename(target, backup)
    _copy(course / file, target)
    write_record(workspace, {**read_record(workspace), file.as_posix(): fingerprint(course / file)})
    kept = f"; yours is kept as {backup.name}" if backup else ""
    return (
        f"ipu-teach course: {target} is the course's version again{kept} (in JupyterLab, close its tab "
        f"without saving, or use File > Reload Notebook from Disk)"
    )
