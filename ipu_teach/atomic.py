"""Atomic file writes: caches, reports, weights and data are never left half-written, nor littered.

The file is written under a hidden temporary name in the same folder (``.name.<pid>.XXXX.tmp``),
flushed to disk (fsync), and renamed into place only when the ``with`` block ends without an error;
on any error the temporary file is removed. A process killed mid-write cannot remove its own, so
each write first removes the temporary files of the same name left by writers that are gone (their
process no longer runs, or the file is over an hour old where processes cannot be checked).
"""

import contextlib
import os
import tempfile
import time

STALE_AFTER_SECONDS = 3600


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _running(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return False
    except OSError:  # exists but is someone else's
        return True
    return True


def _is_stale(path: str, prefix: str) -> bool:
    pid = os.path.basename(path)[len(prefix) :].split(".", 1)[0]
    if os.name == "posix" and pid.isdigit():  # os.kill(pid, 0) would end the process on Windows
        return not _running(int(pid))
    try:
        return time.time() - os.path.getmtime(path) > STALE_AFTER_SECONDS
    except OSError:
        return False


def remove_stale_temporaries(path) -> list:
    """Remove the temporary files other, dead writers of ``path`` left behind; return their paths."""
    folder, name = os.path.split(os.path.abspath(os.fspath(path)))
    prefix = f".{name}."
    removed = []
    with contextlib.suppress(OSError):
        for entry in os.listdir(folder):
            if entry.startswith(prefix) and entry.endswith(".tmp") and _is_stale(os.path.join(folder, entry), prefix):
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(folder, entry))
                    removed.append(os.path.join(folder, entry))
    return removed


def _sync_folder(folder: str) -> None:
    """Make the rename itself durable (POSIX); harmless to skip where folders cannot be opened."""
    if os.name != "posix":
        return
    with contextlib.suppress(OSError):
        handle = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(handle)
        finally:
            os.close(handle)


@contextlib.contextmanager
def atomic_write(path, mode: str = "w", encoding: str = "utf-8"):
    """``with atomic_write(path, "wb") as f: ...`` writes ``path`` all at once or not at all."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    remove_stale_temporaries(path)
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(path)}.{os.getpid()}.", suffix=".tmp")
    os.close(handle)
    try:
        with open(temporary, mode, encoding=None if "b" in mode else encoding) as stream:
            yield stream  # stream.name is the temporary path, for checks that read the file back
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, 0o666 & ~_umask())  # mkstemp makes files private; give them the usual permissions
        os.replace(temporary, path)
        _sync_folder(folder)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
