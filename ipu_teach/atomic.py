"""Atomic file writes: caches, reports, weights and data are never left half-written, nor littered.

The file is written under a hidden temporary name in the same folder (``.name.<pid>.<random>.ipu-teach.tmp``),
flushed to disk (fsync), and renamed into place only when the ``with`` block ends without an error;
on any error the temporary file is removed.

Replacing a file keeps what its owner set: the new file gets the old one's permission bits (a private
0600 file stays private; a new file gets the usual ones, from the umask), and a symbolic link is
written through: its target is replaced and the link kept. A file with other hard links is replaced,
not rewritten in place: the path given gets the new contents, the other names keep the old ones (as
with any atomic save; save to each name, or use symbolic links, to change them all).

A process killed mid-write cannot remove its temporary file, so each write first removes the stale
temporary files in its folder, whatever file they were for (a checkpoint named from a pattern such as
``ckpt-{epoch:02d}.keras`` may never be saved under that name again): those whose writer's process no
longer runs, and those nobody has written to for an hour (where processes cannot be checked, or a
process id was reused). Names are read from their end (``<pid>.<random>.ipu-teach.tmp``), so a
target named ``m.50000`` is never taken for a writer with process id 50000.
"""

import contextlib
import os
import re
import secrets
import stat
import time

STALE_AFTER_SECONDS = 3600
TEMPORARY_SUFFIX = ".ipu-teach.tmp"
_TEMPORARY_NAME = re.compile(r"\.(?P<target>.+)\.(?P<pid>[0-9]+)\.[0-9a-f]+" + re.escape(TEMPORARY_SUFFIX))


def temporary_name(target_name: str, pid: int, tag: str) -> str:
    """The hidden name under which the process ``pid`` writes ``target_name``; ``tag`` keeps writers apart."""
    return f".{target_name}.{pid}.{tag}{TEMPORARY_SUFFIX}"


def process_running(pid: int) -> bool:
    """Whether a process with this id runs (POSIX; another user's counts as running)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return False
    except OSError:  # exists but is someone else's
        return True
    return True


def _is_stale(path: str, pid: int) -> bool:
    try:
        untouched = time.time() - os.path.getmtime(path)
    except OSError:  # already gone
        return False
    if os.name == "posix" and not process_running(pid):  # os.kill(pid, 0) would end the process on Windows
        return True
    return untouched > STALE_AFTER_SECONDS


def remove_stale_temporaries(folder) -> list:
    """Remove the temporary files that dead or long-silent writers left in ``folder``; return their paths."""
    folder = os.path.abspath(os.fspath(folder))
    removed = []
    with contextlib.suppress(OSError):
        for entry in os.listdir(folder):
            match = _TEMPORARY_NAME.fullmatch(entry)
            path = os.path.join(folder, entry)
            if match and _is_stale(path, int(match["pid"])):
                with contextlib.suppress(OSError):
                    os.unlink(path)
                    removed.append(path)
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


def _create_temporary(target: str, permissions: int) -> str:
    """A new, empty temporary file next to ``target``, created with ``permissions`` (less the umask)."""
    folder, name = os.path.split(target)
    while True:
        path = os.path.join(folder, temporary_name(name, os.getpid(), secrets.token_hex(4)))
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), permissions))
            return path
        except FileExistsError:  # another writer drew the same tag: draw again
            continue


@contextlib.contextmanager
def atomic_write(path, mode: str = "w", encoding: str = "utf-8", durable: bool = True):
    """``with atomic_write(path, "wb") as f: ...`` writes ``path`` all at once or not at all.

    ``durable=False`` skips the flushes to disk (fsync) for a file that need not outlive a crash of the machine,
    only be whole when read (a running process's record): it is still replaced at once, never seen half-written.
    """
    path = os.fspath(path)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    target = os.path.realpath(path)  # through symbolic links: the link stays, its target gets the data
    folder = os.path.dirname(target)
    if not os.path.isdir(folder):  # only a link can lead here: the folder of ``path`` was just made
        raise FileNotFoundError(f"cannot write {path}: it is a symbolic link to {target}, whose folder does not exist")
    remove_stale_temporaries(folder)
    try:
        kept_permissions = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        kept_permissions = None
    # A replaced file's contents stay private while written; a new file gets the umask's permissions.
    temporary = _create_temporary(target, 0o600 if kept_permissions is not None else 0o666)
    try:
        with open(temporary, mode, encoding=None if "b" in mode else encoding) as stream:
            yield stream  # stream.name is the temporary path, for checks that read the file back
            stream.flush()
            if durable:
                os.fsync(stream.fileno())
        if kept_permissions is not None:
            os.chmod(temporary, kept_permissions)
        os.replace(temporary, target)
        if durable:
            _sync_folder(folder)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
