"""Run an unchanged TensorFlow 2 script on the simulator, as ``python SCRIPT.py ARGS`` would run it.

The script runs as ``__main__`` with ``sys.argv`` set to its path and arguments and its folder first
on ``sys.path``, inside ``TensorFlowImports`` so its TensorFlow imports give ipu-teach. The exit
status and the traceback of an uncaught exception are Python's (the frames of this runner are left
out of the traceback); ``sys.argv``, ``sys.path`` and the imports are restored afterwards.
"""

import os
import runpy
import sys
import traceback

from .import_map import TensorFlowImports


def run_script(path, args=()) -> int:
    """Run the script at ``path`` with ``args``; return the exit status Python would give."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        print(f"ipu-teach run: can't open file {os.path.abspath(path)!r}: no such file", file=sys.stderr)
        return 2
    script = os.path.abspath(path)
    saved_argv, saved_path = sys.argv, list(sys.path)
    sys.argv = [path, *map(str, args)]
    sys.path.insert(0, os.path.dirname(script))
    try:
        with TensorFlowImports():
            runpy.run_path(script, run_name="__main__")
    except SystemExit as exit_:
        return _exit_status(exit_.code)
    except Exception as error:  # noqa: BLE001 (reported as Python reports an uncaught exception)
        traceback.print_exception(type(error), error, _from_script(error.__traceback__, script))
        return 1
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
    return 0


def _exit_status(code) -> int:
    """``sys.exit(code)``'s status: None is 0, an int is itself, anything else is printed and gives 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _from_script(tb, script):
    """The traceback from the script's own first frame on (None for errors raised before it ran, such as a
    SyntaxError, which Python prints without a traceback)."""
    while tb is not None and tb.tb_frame.f_code.co_filename != script:
        tb = tb.tb_next
    return tb
