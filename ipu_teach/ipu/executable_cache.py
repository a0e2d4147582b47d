"""The executable cache: compiled (simulated) executables kept on disk, as Poplar keeps them.

Turned on as on the real system, with ``TF_POPLAR_FLAGS="--executable_cache_path=/some/dir"``, or
from Python with :func:`enable`. One JSON file per executable, named by the hash of what forces a
recompile (model graph, micro-batch, steps per execution, replication, accumulation...); written
atomically, so the folder is always safe to delete.
"""
from __future__ import annotations

import hashlib
import json
import os
import re

from ..atomic import atomic_write

FORMAT = "ipu-teach-executable/1"
_python_path: list = [None]


def enable(path) -> None:
    """Cache executables in ``path`` (created when first written)."""
    _python_path[0] = os.fspath(path)


def disable() -> None:
    _python_path[0] = None


def cache_path() -> str | None:
    """The folder in use: the Python setting, else ``--executable_cache_path`` in TF_POPLAR_FLAGS."""
    if _python_path[0]:
        return _python_path[0]
    match = re.search(r"--executable_cache_path=(\S+)", os.environ.get("TF_POPLAR_FLAGS", ""))
    return match.group(1) if match else None


def key_of(description: dict) -> str:
    return hashlib.sha256(json.dumps(description, sort_keys=True, default=str).encode()).hexdigest()[:32]


def load(key: str) -> dict | None:
    """The cached entry for ``key``, or None (also for an unreadable or foreign file)."""
    folder = cache_path()
    if not folder:
        return None
    path = os.path.join(folder, f"{key}.json")
    try:
        with open(path, encoding="utf-8") as f:
            entry = json.load(f)
    except (OSError, ValueError):
        return None
    return entry if entry.get("format") == FORMAT and entry.get("key") == key else None


def store(key: str, entry: dict) -> str | None:
    folder = cache_path()
    if not folder:
        return None
    path = os.path.join(folder, f"{key}.json")
    with atomic_write(path) as f:
        json.dump({"format": FORMAT, "key": key, **entry}, f, indent=1, sort_keys=True)
    return path
