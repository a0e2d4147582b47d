"""``tools/make_wheelhouse.py`` downloads what installing the course needs, at the tested versions.
(The wheelhouse it makes is installed with ``--no-index`` into a fresh venv by a phase of ``.ci/run``.)"""

import re
from pathlib import Path

from helpers.scripts import load_script

REPO_ROOT = Path(__file__).resolve().parents[1]
make_wheelhouse = load_script("tools/make_wheelhouse.py")


def name_of(requirement: str) -> str:
    return re.match(r"[A-Za-z0-9_.-]+", requirement).group(0).lower().replace("_", "-")


def test_the_wheelhouse_holds_the_runtime_the_notebooks_extra_and_the_build_backend():
    names = {name_of(requirement) for requirement in make_wheelhouse.course_requirements()}
    # numpy is what `import ipu_teach` needs, h5py what Keras' .h5 / .keras files need, tqdm what PopTorch
    # scripts import; an install without extras must bring them
    assert names == {"numpy", "h5py", "tqdm", "matplotlib", "ipywidgets", "jupyterlab", "setuptools"}


def test_every_course_requirement_but_the_build_backend_is_pinned_to_the_tested_version():
    pins = {
        name_of(line): line
        for line in make_wheelhouse.PINS.read_text(encoding="utf-8").splitlines()
        if "==" in line and not line.startswith("#")
    }
    for requirement in make_wheelhouse.course_requirements():
        if name_of(requirement) != "setuptools":  # pip's build environment, not the course's
            assert name_of(requirement) in pins, requirement


def test_the_download_is_constrained_by_the_pins_and_passes_pips_own_options_on(tmp_path):
    command = make_wheelhouse.download_command(tmp_path, ["--platform", "manylinux2014_x86_64"])
    assert command[1:4] == ["-m", "pip", "download"]
    assert command[command.index("--dest") + 1] == str(tmp_path)
    assert command[command.index("--constraint") + 1] == str(REPO_ROOT / "requirements" / "test.txt")
    assert command[command.index("--platform") + 1] == "manylinux2014_x86_64"
    assert command[-len(make_wheelhouse.course_requirements()) :] == make_wheelhouse.course_requirements()
