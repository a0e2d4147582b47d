"""Make a wheelhouse for installing the course where there is no network: a room's Wi-Fi, an exam machine.

Run once where PyPI is reachable; it downloads every wheel the course needs into one folder:
ipu-teach's runtime requirements and its ``notebooks`` extra (numpy, tqdm, matplotlib, ipywidgets, JupyterLab
and all they need) at the versions the notebooks are tested with (``requirements/test.txt`` as constraints),
and the build requirement (setuptools), so that ``pip install -e .`` builds ipu-teach offline too.
Copy the folder and a checkout of the repository to the learners' machines and install there with

    python3 -m venv .venv && .venv/bin/pip install --no-index --find-links wheelhouse -e ".[notebooks]"

A wheelhouse is made for one platform and Python version (by default this machine's). For learners on
another one, pass pip's own options after ``--``, e.g.
``-- --python-version 3.12 --platform manylinux2014_x86_64 --only-binary=:all:`` (make one folder per platform).

    python tools/make_wheelhouse.py [FOLDER] [-- PIP DOWNLOAD OPTIONS]
"""

import argparse
import subprocess
import sys
from pathlib import Path

import tomllib

REPO = Path(__file__).resolve().parent.parent
PINS = REPO / "requirements" / "test.txt"
DEFAULT_FOLDER = REPO / "wheelhouse"


def course_requirements(pyproject: Path = REPO / "pyproject.toml") -> list:
    """What installing ipu-teach with the ``notebooks`` extra needs: its dependencies, the extra's, and the
    build system's (pip builds an editable install in an isolated environment it fills from the wheelhouse)."""
    metadata = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    project = metadata["project"]
    return (
        list(project.get("dependencies", []))
        + list(project["optional-dependencies"]["notebooks"])
        + list(metadata["build-system"]["requires"])
    )


def download_command(folder: Path, pip_options=()) -> list:
    """``pip download`` of the course's requirements into ``folder``, pinned as the notebooks are tested."""
    return [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--quiet",
        "--dest",
        str(folder),
        "--constraint",
        str(PINS),
        *pip_options,
        *course_requirements(),
    ]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?", type=Path, default=DEFAULT_FOLDER, help="where the wheels go")
    parser.add_argument("pip_options", nargs="*", help="after --: options for pip download (--platform ...)")
    args = parser.parse_args(argv)
    status = subprocess.call(download_command(args.folder, args.pip_options))
    if status == 0:
        wheels = sorted(args.folder.iterdir())
        size = sum(wheel.stat().st_size for wheel in wheels)
        print(f"make_wheelhouse: {len(wheels)} files, {size / 2**20:.0f} MiB in {args.folder}")
        print(f'install with: pip install --no-index --find-links {args.folder} -e ".[notebooks]"')
    return status


if __name__ == "__main__":
    raise SystemExit(main())
