"""The package's arrows point one way (CONTRIBUTING.md's picture): a module imports only from the packages
its layer may use, so numerics never depend on the simulated device and the engine knows nothing of Keras.
The imports are read from the source (also those inside functions), not from what happens to be loaded."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "ipu_teach"

# Small modules of shared utilities that import nothing of ours above them: any layer may use them.
SHARED = {
    "atomic",
    "eager",
    "integers",
    "nest",
    "session",
    "validation",
    "untrusted",
    "dtypes",
    "not_simulated",
    "hardware",
}

MAY_IMPORT = {
    **{name: SHARED for name in SHARED},
    "bsp": SHARED,
    "autograd": SHARED,
    "data": SHARED,
    "schedules": SHARED,
    "pipeline": SHARED | {"schedules"},  # the alias module of ipu_teach.schedules, one release
    "profiling": SHARED | {"bsp"},
    "keras": SHARED | {"autograd", "data"},
    "examples": SHARED | {"keras", "ipu", "bsp", "profiling"},
    "ipu": SHARED | {"keras", "autograd", "bsp", "schedules", "profiling"},
    "widgets": SHARED | {"bsp", "schedules", "profiling"},
    "tensorflow": SHARED | {"keras", "autograd", "data", "ipu"},
    "notebook_environment": SHARED,
    "cli": SHARED | {"keras", "ipu", "tensorflow", "examples", "notebook_environment"},
    "torch": SHARED | {"autograd", "data"},
    "torchvision": SHARED | {"torch", "keras"},
    "poptorch": SHARED | {"torch", "autograd", "ipu", "keras", "bsp", "profiling"},
}


def _imported_packages(path: Path, source: str | None = None) -> set:
    """The top-level ``ipu_teach`` packages or modules that the file at ``path`` (or ``source`` as if it
    were there) imports from."""
    here = path.relative_to(PACKAGE).parts[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text() if source is None else source)):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = list(here[: len(here) - (node.level - 1)])
            target = base + (node.module.split(".") if node.module else [])
            found |= {target[0]} if target else {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ipu_teach."):
            found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            found |= {alias.name.split(".")[1] for alias in node.names if alias.name.startswith("ipu_teach.")}
    return {name.removesuffix(".py") for name in found}


def _layer(path: Path) -> str:
    return path.relative_to(PACKAGE).parts[0].removesuffix(".py")


@pytest.mark.parametrize(
    "path",
    sorted(p for p in PACKAGE.rglob("*.py") if _layer(p) in MAY_IMPORT),
    ids=lambda p: str(p.relative_to(PACKAGE)),
)
def test_imports_point_down(path):
    layer = _layer(path)
    upward = _imported_packages(path) - MAY_IMPORT[layer] - {layer}
    assert not upward, (
        f"{path.relative_to(PACKAGE.parent)} imports {sorted(upward)}, which layer `{layer}` may not "
        f"use (it may use {sorted(MAY_IMPORT[layer])}); see CONTRIBUTING.md's architecture picture"
    )


def test_every_layer_is_listed():
    layers = {_layer(p) for p in PACKAGE.rglob("*.py")} - {"__init__", "__main__"}
    assert layers <= MAY_IMPORT.keys(), f"add {sorted(layers - MAY_IMPORT.keys())} to MAY_IMPORT"


def test_an_upward_import_is_found():
    # What an upward import looks like from a sub-package: relative, absolute, and inside a function.
    source = "from ..keras import models\nimport ipu_teach.widgets.pipeline\ndef f():\n    from ..ipu import config\n"
    assert _imported_packages(PACKAGE / "bsp" / "engine.py", source) == {"keras", "widgets", "ipu"}
