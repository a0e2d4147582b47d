"""Atomic file writes: caches, reports, weights and data are never left half-written.

The file is written under a temporary name in the same folder and renamed into place only when
the ``with`` block ends without an error; on any error the temporary file is removed.
"""
import contextlib
import os
import tempfile


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_write(path, mode: str = "w", encoding: str = "utf-8"):
    """``with atomic_write(path, "wb") as f: ...`` writes ``path`` all at once or not at all."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(path)}.", suffix=".tmp")
    os.close(handle)
    try:
        with open(temporary, mode, encoding=None if "b" in mode else encoding) as stream:
            yield stream  # stream.name is the temporary path, for checks that read the file back
        os.chmod(temporary, 0o666 & ~_umask())  # mkstemp makes files private; give them the usual permissions
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
