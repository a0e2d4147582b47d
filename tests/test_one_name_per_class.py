"""One name per concept (issue 26): a class name is defined once in the package, except the names CONTRIBUTING lists
as mirroring the public APIs of different frameworks (``keras.layers.ReLU`` and ``torch.nn.ReLU``)."""

import ast
import collections
import pathlib
import re

import ipu_teach

PACKAGE = pathlib.Path(ipu_teach.__file__).parent
CONTRIBUTING = PACKAGE.parent / "CONTRIBUTING.md"


def classes_defined_more_than_once(root=PACKAGE) -> dict:
    """``{class name: [files defining it]}`` for each name a ``class`` statement (at any depth) defines twice or
    more under ``root``."""
    files = collections.defaultdict(list)
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                files[node.name].append(path.relative_to(root).as_posix())
    return {name: where for name, where in files.items() if len(where) > 1}


def mirrored_names() -> dict:
    """``{class name: the frameworks it mirrors}``, from CONTRIBUTING's list in "One name per concept"."""
    text = CONTRIBUTING.read_text()
    listed = text.split("<!-- mirrored class names")[1].split("<!-- end of mirrored class names -->")[0]
    return dict(re.findall(r"^- `(\w+)`: (.+)$", listed, re.M))


def test_a_class_name_is_defined_twice_only_where_contributing_lists_it_as_mirrored():
    mirrored = mirrored_names()
    unlisted = {name: where for name, where in classes_defined_more_than_once().items() if name not in mirrored}
    assert unlisted == {}, (
        "each class name here is defined more than once: rename one, or, if each mirrors a different framework's "
        "public API, add it to CONTRIBUTING's list of mirrored names with those frameworks"
    )


def test_the_mirrored_list_names_only_classes_still_defined_more_than_once():
    """A name renamed away leaves the list, so the list stays the exceptions that exist."""
    assert sorted(set(mirrored_names()) - set(classes_defined_more_than_once())) == []
    assert "ReLU" in mirrored_names() and "keras.layers.ReLU" in mirrored_names()["ReLU"]


def test_the_scan_finds_a_name_defined_twice(tmp_path):
    """The scan itself: two files defining one name (one of them in a nested class) are reported."""
    (tmp_path / "a.py").write_text("class Twice:\n    pass\n")
    (tmp_path / "b.py").write_text("def make():\n    class Twice:\n        pass\n\n\nclass Once:\n    pass\n")
    assert classes_defined_more_than_once(tmp_path) == {"Twice": ["a.py", "b.py"]}
