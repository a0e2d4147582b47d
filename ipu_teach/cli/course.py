"""``ipu-teach course``: JupyterLab on the course notebooks, bound to 127.0.0.1.

The notebooks are the repository's ``notebooks/`` folder, used in place: the course is meant to be
edited and run, and it writes files beside the notebooks (reports, the executable cache). An
installed copy of the package (``pip install`` without ``-e``) carries only the library, not the
notebooks, and copying them into site-packages would give the learner files that are neither
writable nor theirs; so there the command refuses to start and says how to get the course (clone and
install editable, or pass ``--notebooks``).

JupyterLab runs as a child in its own process group. Stopping ``ipu-teach course`` (Ctrl-C,
Ctrl-\\: SIGQUIT, SIGTERM, closing the terminal: SIGHUP) stops JupyterLab, which shuts its kernels down;
a server that does not stop within ``STOP_SECONDS`` is killed, and what is left of its process group too,
so no server is left on the port. The port is checked first: a busy ``--port`` is an error that suggests a
free one (JupyterLab is told never to move to another port on its own); without ``--port`` the next free
port is used and announced, and if another program takes it before JupyterLab listens (two courses
started at the same moment both find 8888 free), JupyterLab is started again on the next free port.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

from ..notebook_environment import notebook_environment

DEFAULT_PORT = 8888
PORTS_TRIED = 20
STOP_SECONDS = 10
REPOSITORY = Path(__file__).resolve().parents[2]
STOP_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT") if hasattr(signal, name)
)


def _is_checkout(folder: Path) -> bool:
    pyproject = folder / "pyproject.toml"
    return pyproject.is_file() and 'name = "ipu-teach"' in pyproject.read_text(encoding="utf-8")


def notebooks_folder(given=None) -> Path:
    """The course's notebooks: the folder given, else the checkout's ``notebooks/`` beside the package."""
    if given is None and not _is_checkout(REPOSITORY):
        raise SystemExit(
            "ipu-teach course: this ipu-teach is an installed package, which holds the library but "
            "not the course notebooks. Get the course with `git clone` of the repository and "
            '`pip install -e ".[notebooks]"` in it, or pass the folder that holds the notebooks '
            "with --notebooks"
        )
    folder = Path(given) if given else REPOSITORY / "notebooks"
    if not (folder / "00_ipu_and_bsp.ipynb").exists():
        raise SystemExit(
            f"ipu-teach course: no course notebooks in {folder}; pass the folder that holds them "
            "with --notebooks (they are in the repository's notebooks/ folder)"
        )
    return folder


def port_number(text: str) -> int:
    """argparse type: a TCP port, 1 to 65535."""
    try:
        port = int(text)
    except ValueError:
        port = 0
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port: give a number from 1 to 65535, e.g. --port 8890")
    return port


def port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port_from(start: int) -> int | None:
    return next((p for p in range(start, min(start + PORTS_TRIED, 65536)) if port_is_free(p)), None)


def choose_port(asked: int | None) -> int:
    """``asked`` if it is free (else an error suggesting a free one); without ``asked``, the first free
    port from 8888, announced when it is not 8888."""
    start = asked or DEFAULT_PORT
    if port_is_free(start):
        return start
    other = free_port_from(start + 1)
    if asked is not None or other is None:
        hint = f"; choose another with --port {other}" if other else "; choose a free one with --port"
        raise SystemExit(
            f"ipu-teach course: port {start} on 127.0.0.1 is already in use (another JupyterLab or "
            f"ipu-teach course?){hint}"
        )
    print(
        f"ipu-teach course: port {start} is in use, so JupyterLab listens on port {other} (choose one with --port)",
        flush=True,
    )
    return other


def add_parser(commands):
    parser = commands.add_parser(
        "course",
        help="start JupyterLab on the course notebooks (127.0.0.1)",
        description="Start JupyterLab on the course notebooks, listening on 127.0.0.1 only.",
    )
    parser.add_argument("--notebooks", help="folder holding the notebooks (default: the repository's notebooks/)")
    parser.add_argument(
        "--port",
        type=port_number,
        default=None,
        help=f"port to listen on (default {DEFAULT_PORT}, or the next free one)",
    )
    parser.add_argument("--no-browser", action="store_true", help="do not open a web browser")
    parser.set_defaults(run=run)


def command(args, port: int) -> list:
    cmd = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--ServerApp.root_dir={notebooks_folder(args.notebooks)}",
    ]
    if args.no_browser:
        cmd.append("--no-browser")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")
    return cmd


def stop(server: subprocess.Popen) -> None:
    """Ask JupyterLab to stop (it shuts its kernels down), kill it if it has not within ``STOP_SECONDS``,
    then kill whatever of its process group is left."""
    if server.poll() is None:
        server.terminate()
        try:
            server.wait(STOP_SECONDS)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    if hasattr(os, "killpg"):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(server.pid, signal.SIGKILL)


class _Stopped(Exception):
    """Raised by the signal handler, so the server is stopped once ``wait`` has been left (stopping it
    inside the handler would wait for the process while the interrupted ``wait`` still holds it)."""


def _raise_stopped(signum, frame):
    raise _Stopped(signum)


def serve(cmd: list, env=None) -> int:
    """Run ``cmd`` as the server until it ends or this process is told to stop (then 128 + the signal)."""
    group = {"start_new_session": True} if os.name == "posix" else {}
    previous = {sig: signal.signal(sig, _raise_stopped) for sig in STOP_SIGNALS}
    server = None
    try:
        server = subprocess.Popen(cmd, env=env, **group)
        return server.wait()
    except _Stopped as stopped:
        return 128 + stopped.args[0]
    finally:
        for sig in STOP_SIGNALS:  # a second Ctrl-C must not cut the shutdown short
            signal.signal(sig, signal.SIG_IGN)
        if server is not None:
            stop(server)
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def serve_on(port: int, command_for, move_if_taken: bool, env=None) -> int:
    """``serve(command_for(port))``; when the server fails (exits by itself with an error) and another program
    holds ``port`` now, so that it could not listen there, start it again on the next free port, saying so, if
    ``move_if_taken`` (the port was chosen here, not given with --port)."""
    status = serve(command_for(port), env=env)
    for _ in range(PORTS_TRIED):
        if not (move_if_taken and 0 < status < 128 and not port_is_free(port)):
            break
        taken, port = port, free_port_from(port + 1)
        if port is None:
            break
        print(
            f"ipu-teach course: port {taken} was taken while JupyterLab started (another course starting at the "
            f"same moment?), so JupyterLab listens on port {port} (choose one with --port)",
            flush=True,
        )
        status = serve(command_for(port), env=env)
    return status


def run(args) -> int:
    try:
        import jupyterlab  # noqa: F401  (only checking it is installed)
    except ImportError:
        print("ipu-teach course needs JupyterLab: pip install -e '.[notebooks]'", file=sys.stderr)
        return 1
    # the kernels compute as the committed notebooks were computed, so a learner sees the same numbers
    return serve_on(
        choose_port(args.port), lambda port: command(args, port), args.port is None, env=notebook_environment()
    )
