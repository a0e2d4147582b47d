"""The executable cache: compiled (simulated) executables kept on disk, as Poplar keeps them.

Turned on as on the real system, with ``TF_POPLAR_FLAGS="--executable_cache_path=/some/dir"``, or
from Python with :func:`enable`. One JSON file per executable, named by the hash of what forces a
recompile (model graph, micro-batch, steps per execution, replication, accumulation...); written
atomically, so the folder is always safe to delete.

The cache never stops training: an entry that is unreadable, ``null``, of another format or for
another key, or not a regular file of at most 16 MiB of JSON nested at most 100 deep (a FIFO, a
symlink to ``/dev/zero``) is a miss (compiled again and rewritten), and a folder that cannot be
written (read-only, full) is reported once and training goes on without caching.

Example:

>>> ipu.executable_cache.enable("cache")
>>> config = ipu.config.IPUConfig()
>>> config.auto_select_ipus = 1
>>> config.configure_ipu_system()
>>> loaded = []
>>> for attempt in range(2):
...     with ipu.ipu_strategy.IPUStrategy().scope():
...         model = keras.Sequential([keras.layers.Dense(2, input_shape=(4,))])
...         model.compile("sgd", "mse", steps_per_execution=2)
...         history = model.fit(np.ones((8, 4), np.float32), np.ones((8, 2), np.float32), batch_size=4, verbose=0)
...     loaded.append(model.get_ipu_executable("train").from_cache)
INFO:ipu_teach:Loaded the executable of `sequential_1` (train) from the executable cache (cache): no compilation needed.
>>> loaded
[False, True]
>>> ipu.executable_cache.disable()
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import numbers
import os

from ..atomic import atomic_write
from ..session import runtime
from ..untrusted import read_json
from ..validation import BadFileError
from . import messages, poplar_flags

FORMAT = "ipu-teach-executable/1"
REQUIRED = {
    "model": str,
    "mode": str,
    "compile_seconds": numbers.Real,
    "compute_sets": numbers.Integral,
    "cycles_per_execution": numbers.Integral,
}
MAX_ENTRY_BYTES = 16 * 2**20
"""An entry describes the model's graph: about 3 KiB for the tutorial's, 0.5 MiB for 1,000 layers."""


def enable(path) -> None:
    """Caches compiled executables in the folder ``path`` (created when first written).

    The Python form of ``TF_POPLAR_FLAGS="--executable_cache_path=path"``: a model whose program was
    compiled before (same graph, micro-batch, steps per execution, replication...) loads its executable
    instead of compiling it again, and ``get_ipu_executable(...).from_cache`` says so.

    Args:
      path: A folder (string or path-like).

    Example:

    >>> ipu.executable_cache.enable("ipu_executable_cache")
    >>> ipu.executable_cache.cache_path()
    'ipu_executable_cache'
    >>> ipu.executable_cache.disable()
    """
    runtime.executable_cache_path = os.fspath(path)


def disable() -> None:
    """Stops caching executables from Python; ``TF_POPLAR_FLAGS --executable_cache_path`` still applies.

    Example:

    >>> ipu.executable_cache.enable("ipu_executable_cache")
    >>> ipu.executable_cache.disable()
    >>> ipu.executable_cache.cache_path() is None
    True
    """
    runtime.executable_cache_path = None
    runtime.unwritable_cache_folders.clear()


def cache_path() -> str | None:
    """The folder in use: the Python setting, else ``--executable_cache_path`` in TF_POPLAR_FLAGS; None when off.

    Code that turns the cache on for a while (an exercise's solution) reads it first, to put it back after.

    Example:

    >>> ipu.executable_cache.cache_path() is None
    True
    >>> ipu.executable_cache.enable("ipu_executable_cache")
    >>> ipu.executable_cache.cache_path()
    'ipu_executable_cache'
    >>> ipu.executable_cache.disable()
    """
    if runtime.executable_cache_path:
        return runtime.executable_cache_path
    path = poplar_flags.flags().get("executable_cache_path")
    return path if isinstance(path, str) and path else None


def key_of(description: dict) -> str:
    return hashlib.sha256(json.dumps(description, sort_keys=True, default=str).encode()).hexdigest()[:32]


def is_valid_entry(entry, key: str) -> bool:
    """An entry this version wrote for ``key``, with every field of the right type."""
    return (
        isinstance(entry, dict)
        and entry.get("format") == FORMAT
        and entry.get("key") == key
        and all(
            isinstance(entry.get(name), kind) and not isinstance(entry.get(name), bool)
            for name, kind in REQUIRED.items()
        )
    )


def load(key: str) -> dict | None:
    """The cached entry for ``key``, or None: no cache, no entry, or one that is not valid (a miss)."""
    folder = cache_path()
    if not folder:
        return None
    path = os.path.join(folder, f"{key}.json")
    try:
        entry = read_json(path, "executable cache entry", "compiled again", MAX_ENTRY_BYTES)
    except FileNotFoundError:
        return None
    except (OSError, BadFileError) as error:
        entry = error
    if is_valid_entry(entry, key):
        return entry
    messages.info(f"The executable cache entry {path} is not valid ({_why(entry)}): compiling again and replacing it.")
    with contextlib.suppress(OSError):
        os.unlink(path)  # a FIFO, or a symlink to a device, is removed (not written through) before the new entry
    return None


def _why(entry) -> str:
    if isinstance(entry, BadFileError):
        return entry.problem
    if isinstance(entry, Exception):
        return f"{type(entry).__name__}: {entry}"
    if not isinstance(entry, dict):
        return f"it holds {json.dumps(entry)[:40]} instead of an entry"
    return f"format {entry.get('format')!r}, or a field missing or of the wrong type"


def store(key: str, entry: dict) -> str | None:
    """Write the entry; a folder that cannot be written is reported once and skipped (returns None)."""
    folder = cache_path()
    if not folder or folder in runtime.unwritable_cache_folders:
        return None
    path = os.path.join(folder, f"{key}.json")
    try:
        with atomic_write(path) as f:
            json.dump({"format": FORMAT, "key": key, **entry}, f, indent=1, sort_keys=True)
    except OSError as error:
        runtime.unwritable_cache_folders.add(folder)
        messages.warning(
            f"Cannot write to the executable cache {folder} ({error.strerror or error}): training "
            "goes on, but executables will not be cached. Use a folder you can write to."
        )
        return None
    return path
