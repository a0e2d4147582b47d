"""``overwrite=False``: an existing file is replaced only when a person says yes.

Keras asks with ``input()`` and keeps the file unless the answer is "y" (tf-keras
``keras/utils/io_utils.py``, ``ask_to_proceed_with_overwrite``; the same prompt, loop and tip here).
Someone can answer in a terminal (standard input is a TTY) and in Jupyter, whose kernel answers
``input()`` with a box in the notebook, as it does for Keras. Where nobody can answer (a script in a
batch job or a pipe, a notebook run by nbval or nbconvert, whose kernel refuses to read input), Keras
would fail inside ``input()`` or wait for ever; here the file is kept and the save refused with an
error that says what to change.
"""

import builtins
import os
import sys


def _someone_can_answer() -> bool:
    """Standard input is a terminal, or a front end (Jupyter's kernel) has put its own ``input`` in place."""
    stdin = sys.stdin
    if stdin is not None and getattr(stdin, "isatty", lambda: False)():
        return True
    return getattr(builtins.input, "__module__", "builtins") != "builtins"


def _kept(filepath, caller: str, why: str) -> FileExistsError:
    return FileExistsError(
        f"{caller}: {filepath!r} already exists and overwrite=False, but {why}, so the file is kept and "
        "nothing was saved. Pass overwrite=True to replace it, or save under another name"
    )


def proceed_with_overwrite(filepath, caller: str) -> bool:
    """True when ``filepath`` may be written: it does not exist, or the user answered "y"; False for "n"
    (the file is kept, nothing is saved, as in Keras). FileExistsError when nobody can be asked."""
    filepath = os.fspath(filepath)
    if not os.path.exists(filepath):
        return True
    if not _someone_can_answer():
        raise _kept(filepath, caller, "no one can be asked (standard input is not a terminal)")
    try:
        answer = input(f"[WARNING] {filepath} already exists - overwrite? [y/n]").strip().lower()
        while answer not in ("y", "n"):
            answer = input('Enter "y" (overwrite) or "n" (cancel).').strip().lower()
    except (EOFError, NotImplementedError):  # input closed; a kernel that may not ask (StdinNotImplementedError)
        raise _kept(filepath, caller, "no answer could be read from standard input") from None
    if answer == "n":
        return False
    print("[TIP] Next time specify overwrite=True!")
    return True
