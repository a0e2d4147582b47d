"""The import mapping in the processes a script run by ``ipu-teach run`` starts with ``multiprocessing``.

A child started by ``spawn`` (the default on macOS and Windows) or ``forkserver`` is a new interpreter that
runs the script again, as ``__mp_main__``, to find the functions it is given: without the mapping its
``import tensorflow`` fails, and a ``Pool`` then starts new workers forever. (A ``fork`` child is a copy of
the parent and has the mapping already.) Before anything else, such a child loads the "preparation data"
multiprocessing sends it (``multiprocessing.spawn.get_preparation_data``: its ``sys.path``, ``sys.argv``, the
main script's path) as a pickle. ``TensorFlowImportsInChildren`` adds one entry to that data whose loading
installs the mapping in the child, for the rest of its life, and passes it on to the child's own children.

The child imports ``ipu_teach`` to do so from where Python looks as it starts (the installed package, or the
current folder), as the ``ipu-teach`` command itself does.
"""

from multiprocessing import spawn

from .import_map import TensorFlowImports

ENTRY = "ipu_teach: TensorFlow imports"


def _install_in_this_child() -> bool:
    """Runs in the child while it loads its preparation data, before the script runs there."""
    TensorFlowImports().__enter__()  # never left: the child ends with the script's work
    TensorFlowImportsInChildren().__enter__()
    return True


class _InstallsOnLoading:
    """The entry of the preparation data: loading it (unpickling) runs ``_install_in_this_child``."""

    def __reduce__(self):
        return _install_in_this_child, ()


class TensorFlowImportsInChildren:
    """A context in which the children multiprocessing spawns (or forks from its fork server) import TensorFlow
    as this process does."""

    def __enter__(self):
        self._original = spawn.get_preparation_data

        def with_the_mapping(name):
            return {ENTRY: _InstallsOnLoading(), **self._original(name)}  # first: loaded before the rest

        spawn.get_preparation_data = with_the_mapping
        return self

    def __exit__(self, *exc):
        spawn.get_preparation_data = self._original
        return False
