"""Run an unchanged TensorFlow 2 script on the simulator, as ``python SCRIPT.py ARGS`` would run it.

SCRIPT is a Python file, or a folder or zip file holding a ``__main__.py`` (Python's rules, through runpy).
It runs as ``__main__`` with ``sys.argv`` set to its path and arguments and its folder (a folder or zip file:
itself) first on ``sys.path``, inside ``TensorFlowImports`` so its TensorFlow imports give ipu-teach, in
the processes it starts with multiprocessing too (``child_processes``). The exit status and what is printed
for an uncaught exception (any ``BaseException``: Ctrl-C gives Python's ``KeyboardInterrupt`` trace and 130)
are Python's, through ``sys.excepthook``, without the frames of this runner. When the script ran custom training
loops on the simulated IPU (``strategy.run``), their simulated time is printed after it (``ipu.custom_loop.summary``):
the script's own ``time.time()`` measures the host's numpy, not the IPU.

``ipu-teach run`` runs the script as the whole program: the mapping stays for what Python runs after the main
code as it ends, the threads it waits for and the atexit functions. Called in a process that goes on
(tests, a notebook), ``run_script`` puts ``sys.argv``, ``sys.path`` and the imports back when the main code
ends; joining the script's threads there would hang on those that end only when Python does (a
ThreadPoolExecutor never shut down), so threads that outlive the main code there do not have the mapping.
"""

import contextlib
import os
import pkgutil
import runpy
import sys

from ..ipu import custom_loop
from .child_processes import TensorFlowImportsInChildren
from .import_map import TensorFlowImports

INTERRUPTED = 130  # what a shell reports for a program stopped by Ctrl-C (128 + SIGINT)


def run_script(path, args=(), *, as_the_program=False) -> int:
    """Run the script at ``path`` with ``args``; return the exit status Python would give. ``as_the_program``:
    leave the mapping, ``sys.argv`` and ``sys.path`` as they are at the end, for Python's exit to run with."""
    path = os.fspath(path)
    refusal = _cannot_run(path)
    if refusal is not None:
        status, message = refusal
        print(f"ipu-teach run: {message}", file=sys.stderr)
        return status
    saved_argv, saved_path = sys.argv, list(sys.path)
    sys.argv = [path, *map(str, args)]
    if pkgutil.get_importer(path) is None:  # a file: its real folder comes first (runpy puts a folder or zip itself)
        sys.path.insert(0, os.path.dirname(os.path.realpath(path)))
    imports = contextlib.ExitStack()
    imports.enter_context(TensorFlowImports())
    imports.enter_context(TensorFlowImportsInChildren())
    custom_loop.clear_timings()
    try:
        status = _status_of(runpy.run_path, _absolute(path), run_name="__main__")
        if custom_loop.summary():  # a script times its loop with time.time(): say what the simulated IPU took
            print(custom_loop.summary())
        return status
    finally:
        if not as_the_program:
            imports.close()
            sys.argv, sys.path[:] = saved_argv, saved_path


def _cannot_run(path):
    """``(exit status, message)`` as Python gives them when it cannot run ``path`` as a script; None if it can."""
    shown = _absolute(path)
    importer = pkgutil.get_importer(path)
    if importer is not None:  # a folder or a zip file
        if importer.find_spec("__main__") is None:
            return 1, f"can't find '__main__' module in {shown!r}"
        return None
    try:
        with open(path, "rb"):
            return None
    except OSError as error:
        return 2, f"can't open file {shown!r}: [Errno {error.errno}] {error.strerror}"


def _absolute(path) -> str:
    """``path`` made absolute as Python does for the script's ``__file__`` and its messages (not normalised)."""
    return os.path.join(os.getcwd(), path)


def _status_of(function, *args, **kwargs) -> int:
    """Call ``function``; the exit status Python gives a script that did the same: 0, ``sys.exit``'s, or
    after printing an uncaught exception as Python does, 1 (130 for KeyboardInterrupt)."""
    try:
        function(*args, **kwargs)
    except SystemExit as exit_:
        return _exit_status(exit_.code)
    except BaseException as error:  # noqa: BLE001 (reported as Python reports an uncaught exception)
        _print_uncaught(error)
        return INTERRUPTED if isinstance(error, KeyboardInterrupt) else 1
    return 0


def _exit_status(code) -> int:
    """``sys.exit(code)``'s status: None is 0, an int is itself, anything else is printed and gives 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _print_uncaught(error) -> None:
    """Hand ``error`` to ``sys.excepthook`` (the script may have set its own), with the traceback from the
    script's first frame on; an error raised before the script ran (a SyntaxError in it) has none, as in Python."""
    tb = error.__traceback__
    while tb is not None and tb.tb_frame.f_globals.get("__name__") in (__name__, runpy.__name__):
        tb = tb.tb_next
    sys.excepthook(type(error), error.with_traceback(tb), tb)
