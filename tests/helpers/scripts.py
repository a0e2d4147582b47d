"""The repository's scripts (``tools/``, ``benchmarks/``) as modules, for the tests that check what they do or
read their figures: those folders are not packages, and putting them on ``sys.path`` would let their names
shadow others."""

import importlib.util
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def load_script(path: str):
    """The script at ``path`` (from the repository's root, e.g. ``tools/make_slides.py``) run as a module named
    after its file (a new module each call)."""
    spec = importlib.util.spec_from_file_location(Path(path).stem, REPO_ROOT / path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
