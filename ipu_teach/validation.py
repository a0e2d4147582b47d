"""One checker per kind of user input, so every bad setting or file fails the same clear way.

- :func:`known_names`: keyword arguments or option keys against the names that exist, with the
  closest one suggested (a misspelling is an error, never silently ignored).
- :func:`boolean`: a switch given as ``True``/``False`` (or, from an environment variable, the
  words ``"true"``/``"false"``); ``"no"`` or ``"0"`` are errors rather than read as true.
- :func:`positive_count` and :func:`seconds`: a count (of workers, batches, ...) and a duration.
- :class:`BadFileError` and :func:`bad_file`: a file that cannot be what it claims, named in the
  message with what to do about it; :func:`few` lists a few of its bad entries, not 20,000.
- :func:`safe_file_name`: a name from user data (a model name) made safe as one path component.

Imports nothing of ours, so every layer may use it.
"""

from __future__ import annotations

import difflib
import math
import numbers
import os
import re


class BadFileError(ValueError):
    """A file that is missing pieces, corrupt or of another kind; the message names the file, and
    ``problem`` says what is wrong with it in a few words."""

    def __init__(self, message: str, problem: str = ""):
        super().__init__(message)
        self.problem = problem or message


def bad_file(path, what: str, problem: str, remedy: str) -> BadFileError:
    """``BadFileError("<path> is not a valid <what>: <problem>; <remedy>")``."""
    return BadFileError(f"{os.fspath(path)} is not a valid {what}: {problem}; {remedy}", problem)


def few(names, shown: int = 5) -> str:
    """``'a', 'b', 'c' and 19,997 more``: names for a message, which stays short however many there are."""
    names = list(names)
    listed = ", ".join(repr(name)[:80] for name in names[:shown]) or "none"
    return listed + (f" and {len(names) - shown:,} more" if len(names) > shown else "")


def closest(name: str, names) -> str:
    """`` (did you mean 'x'?)`` for the closest of ``names``, or an empty string."""
    match = difflib.get_close_matches(str(name), [str(n) for n in names], n=1)
    return f" (did you mean {match[0]!r}?)" if match else ""


def known_names(owner: str, given, allowed, exception=TypeError, noun="option") -> None:
    """Raise ``exception`` naming the first of ``given`` that is not in ``allowed``, with a suggestion."""
    unknown = [name for name in given if name not in allowed]
    if unknown:
        raise exception(
            f"{owner}: unknown {noun} {unknown[0]!r}{closest(unknown[0], allowed)}; "
            f"the {noun}s are {', '.join(sorted(allowed))}"
        )


_WORDS = {"true": True, "false": False}


def boolean(what: str, value, words: bool = False) -> bool:
    """``value`` as a bool: True/False, or with ``words`` the strings "true"/"false" (any case)."""
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return bool(value)
    if words and isinstance(value, str) and value.strip().lower() in _WORDS:
        return _WORDS[value.strip().lower()]
    expected = 'true or false (JSON true/false, or the strings "true"/"false")' if words else "True or False"
    raise ValueError(f"{what} must be {expected}, got {value!r}")


def positive_count(count, what: str) -> int:
    """``count`` as an int if it is a positive integer (a Python or numpy integer, not a bool), else a ValueError
    naming ``what``: the settings' twin of ``bsp.mapping.check_positive_count``, whose GraphError is a Poplar
    graph's.

    Example:

    >>> positive_count(4, "workers")
    4
    >>> positive_count(0, "workers")
    Traceback (most recent call last):
    ValueError: workers must be a positive integer, got 0
    """
    if isinstance(count, bool) or not isinstance(count, numbers.Integral) or count < 1:
        raise ValueError(f"{what} must be a positive integer, got {count!r}")
    return int(count)


def seconds(value, what: str):
    """``value`` if it is a finite number of seconds >= 0 (not a bool), else a ValueError naming ``what``.

    Example:

    >>> seconds(0.5, "call_seconds")
    0.5
    >>> seconds(-1, "call_seconds")
    Traceback (most recent call last):
    ValueError: call_seconds must be a number of seconds >= 0, got -1
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < math.inf:
        raise ValueError(f"{what} must be a number of seconds >= 0, got {value!r}")
    return value


def safe_file_name(name: str) -> str:
    """``name`` as one path component: characters other than letters, digits, ``_ - .`` become ``_``,
    and no leading dot, so ``../x`` or ``a/b`` can never leave the folder it is joined to."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", str(name)).lstrip(".")
    return safe or "_"
