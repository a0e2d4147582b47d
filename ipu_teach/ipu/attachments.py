"""Which simulated IPUs each ipu-teach process holds, where another process can read it (``gc-monitor``).

On a real system the IPU driver knows which process attached which IPUs, and ``gc-monitor`` asks it. Here a
process that attaches simulated IPUs (``configure_ipu_system`` with a connection that runs programs) writes a
small JSON file, ``<pid>.json``, into a run folder, atomically; it removes the file when it detaches
(``ipu.system.reset()``, or a configuration that does not attach, PRE_COMPILE / NEVER) and when it exits. So a
``gc-monitor`` in a terminal sees what a notebook's kernel holds.

The run folder is ``$IPU_TEACH_RUN_DIR`` when set, else ``ipu-teach`` in the user's runtime folder
(``$XDG_RUNTIME_DIR``), else ``ipu-teach-run-<user>`` in ``/dev/shm`` or, where there is none, the temporary
folder: in memory where the system offers it, as a process's record need not survive a reboot and files on disk
cost milliseconds to replace. It is made private to its user (mode 0700): other users can neither read it nor
plant files in it, and a default folder that is not a private directory of this user is not used.

A process killed before it could remove its file leaves it behind: readers skip (and delete) a file whose process
no longer runs, or whose process id now belongs to a process started later (Linux), so ``gc-monitor`` never shows
a dead process. Nothing here can stop a run: when the folder cannot be written, one warning says so and the IPUs
are attached all the same.

Example:

>>> config = ipu.config.IPUConfig()
>>> config.auto_select_ipus = 2
>>> config.configure_ipu_system()
>>> mine = [p for p in attached_processes() if p.pid == os.getpid()]
>>> [(p.device_id, p.ipus, p.system) for p in mine]
[(16, (0, 1), 'IPU-POD16')]
>>> ipu.system.reset()
>>> [p for p in attached_processes() if p.pid == os.getpid()]
[]
"""

from __future__ import annotations

import atexit
import contextlib
import getpass
import json
import os
import re
import stat
import sys
import tempfile
import time
from dataclasses import asdict, dataclass

from ..atomic import atomic_write, process_running
from ..untrusted import read_json
from ..validation import BadFileError
from . import messages

ENV_VAR = "IPU_TEACH_RUN_DIR"
RECORD_LIMIT = 64 * 1024
"""The most bytes a record may have: a command line of a few KiB fits many times over."""
SHARED_MEMORY = "/dev/shm"
"""Linux' in-memory folder for all users, used when the user has no runtime folder of their own."""
_RECORD_NAME = re.compile(r"(?P<pid>[0-9]+)\.json")
_warned: list = [False]
_exit_hook: list = [False]


@dataclass(frozen=True)
class Attachment:
    """One process's simulated IPUs: who holds them, since when (Unix time), and which they are."""

    pid: int
    user: str
    command: str
    attached_at: float
    system: str
    device_id: int
    ipus: tuple
    """The single IPUs the device is made of, as ``gc-info -l`` numbers them (device 16 is IPUs 0 and 1)."""
    ipu_name: str
    clock_hz: float
    start_ticks: int | None = None
    """When the process started, in clock ticks since boot (Linux' /proc; None elsewhere): a process id
    reused by a later process is not taken for the one that wrote the record."""


def run_folder() -> str:
    """The folder the records are in: ``$IPU_TEACH_RUN_DIR``, else one in ``$XDG_RUNTIME_DIR``, ``/dev/shm`` or
    the temporary folder."""
    chosen, runtime = os.environ.get(ENV_VAR), os.environ.get("XDG_RUNTIME_DIR")
    if chosen:
        return os.path.abspath(chosen)
    if runtime and os.path.isabs(runtime):
        return os.path.join(runtime, "ipu-teach")
    shared = SHARED_MEMORY if os.path.isdir(SHARED_MEMORY) else tempfile.gettempdir()
    return os.path.join(shared, f"ipu-teach-run-{_user()}")


def attach(system: str, device_id: int, ipus, ipu_name: str, clock_hz: float) -> None:
    """Record that this process holds ``ipus`` (device ``device_id`` of the simulated ``system``)."""
    record = Attachment(
        os.getpid(),
        _user(),
        _command(),
        time.time(),
        system,
        int(device_id),
        tuple(int(i) for i in ipus),
        ipu_name,
        float(clock_hz),
        _start_ticks(os.getpid()),
    )
    try:
        folder = _private_folder()
        # whole when read, but not worth a flush to disk: it describes a running process, not data to keep
        with atomic_write(os.path.join(folder, f"{record.pid}.json"), durable=False) as stream:
            json.dump(asdict(record), stream)
    except OSError as error:
        _warn_once(error)
        return
    if not _exit_hook[0]:
        atexit.register(detach)
        _exit_hook[0] = True


def detach() -> None:
    """Remove this process's record, if it has one (the IPUs are released)."""
    with contextlib.suppress(OSError):
        os.unlink(os.path.join(run_folder(), f"{os.getpid()}.json"))


def attached_processes() -> list:
    """The :class:`Attachment` of every running process that holds simulated IPUs, by process id.

    Records of processes that no longer run are deleted and skipped; unreadable or malformed ones are skipped.
    """
    folder = run_folder()
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    found = []
    for name in names:
        match = _RECORD_NAME.fullmatch(name)
        if match is None:
            continue
        path = os.path.join(folder, name)
        record = _read(path, int(match["pid"]))
        if record is not None and _alive(record):
            found.append(record)
        elif record is not None or (os.name == "posix" and not process_running(int(match["pid"]))):
            with contextlib.suppress(OSError):
                os.unlink(path)
    return sorted(found, key=lambda record: record.pid)


def _read(path: str, pid: int) -> Attachment | None:
    try:
        data = read_json(path, "a gc-monitor record", "it is rewritten when its process attaches again", RECORD_LIMIT)
        record = Attachment(**{**data, "ipus": tuple(data["ipus"])})
    except (BadFileError, OSError, TypeError, KeyError):
        return None
    fields_ok = (
        record.pid == pid
        and all(isinstance(getattr(record, name), str) for name in ("user", "command", "system", "ipu_name"))
        and all(isinstance(i, int) and not isinstance(i, bool) for i in (record.device_id, *record.ipus))
        and all(isinstance(x, (int, float)) for x in (record.attached_at, record.clock_hz))
    )
    return record if fields_ok else None


def _alive(record: Attachment) -> bool:
    if os.name != "posix":  # os.kill(pid, 0) would interrupt the process on Windows: a record is taken as it is
        return True
    if not process_running(record.pid):
        return False
    now = _start_ticks(record.pid)
    return record.start_ticks is None or now is None or now == record.start_ticks


def _private_folder() -> str:
    """The run folder, made if missing; a default folder must be a directory of this user that only it can
    write (else an OSError): in a shared temporary folder anyone may have made that name first."""
    folder = run_folder()
    os.makedirs(folder, mode=0o700, exist_ok=True)
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode):
        raise NotADirectoryError(f"{folder} is not a directory")
    if os.environ.get(ENV_VAR) is None and hasattr(os, "getuid"):
        if info.st_uid != os.getuid() or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            raise PermissionError(f"{folder} is not a private folder of this user")
    return folder


def _warn_once(error: OSError) -> None:
    if not _warned[0]:
        _warned[0] = True
        messages.warning(
            f"gc-monitor cannot see this process's simulated IPUs: {error}. Set {ENV_VAR} to a folder "
            "you own to let it; the IPUs are attached all the same."
        )


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no name for this user id (a container)
        return str(os.getuid()) if hasattr(os, "getuid") else "unknown"


def _command() -> str:
    """The process's command line as gc-monitor shows it: the program's name, then its arguments; for a Jupyter
    kernel, the notebook it runs (``JPY_SESSION_NAME``, set by Jupyter Server), which says more in a room."""
    notebook = os.environ.get("JPY_SESSION_NAME")
    if notebook:
        return f"{os.path.basename(notebook)} (Jupyter kernel)"
    argv = list(sys.argv) or [sys.executable]
    return " ".join([os.path.basename(argv[0]) or os.path.basename(sys.executable), *argv[1:]])


def _start_ticks(pid: int) -> int | None:
    """Field 22 of /proc/<pid>/stat (the start time since boot), or None where there is no /proc."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as stream:
            text = stream.read()
        return int(text.rsplit(")", 1)[1].split()[19])  # after the command's closing parenthesis: field 3 on
    except (OSError, IndexError, ValueError):
        return None
