"""``ipu-teach course``: JupyterLab on the learner's copy of the course notebooks, on 127.0.0.1 by default.

The course's notebooks are the repository's ``notebooks/`` folder. JupyterLab never opens them: it opens
the learner's workspace (``~/ipu-teach-workspace`` unless ``--workspace``), a copy that each start
completes with what is new in the course and never overwrites (``workspace.py``), so JupyterLab's
autosave leaves the tracked notebooks alone and a course update never conflicts with a learner's edits;
``--reset NOTEBOOK`` puts the course's version of one notebook back, keeping the learner's as a backup.
An installed copy of the package (``pip install`` without ``-e``) carries only the library, not the
notebooks, so there the command refuses to start and says how to get the course (clone and install
editable, or pass ``--notebooks``).

``--ip`` makes JupyterLab listen elsewhere than on 127.0.0.1 (a lab server reached from a laptop): the
token stays required (it is made here and given to JupyterLab in its environment, not on its command line,
where other users of the machine could read it), and a warning says who can then connect. When JupyterLab
answers, the address to open, with its token, is printed last, alone on its line.

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
import http.client
import ipaddress
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from ..notebook_environment import notebook_environment
from . import workspace

LOOPBACK = "127.0.0.1"
DEFAULT_PORT = 8888
READY_SECONDS = 120  # how long to wait for JupyterLab to answer before giving up printing its address
QUIET_SECONDS = 1.5  # JupyterLab's start-up log is over when it has answered and then logged nothing this long
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


def _bind(host: str, port: int) -> None:
    """Bind a probe socket to ``host``:``port`` and close it; raises OSError (socket.gaierror for an unknown
    name) when that is not possible."""
    family, kind, _, _, address = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM)[0]
    with socket.socket(family, kind) as probe:
        probe.bind(address)


def port_is_free(port: int, host: str = LOOPBACK) -> bool:
    try:
        _bind(host, port)
    except OSError:
        return False
    return True


def check_address(host: str) -> None:
    """Refuse an ``--ip`` this machine cannot listen on, before any port is tried on it."""
    try:
        _bind(host, 0)
    except OSError as error:
        raise SystemExit(
            f"ipu-teach course: cannot listen on --ip {host} ({error.strerror or error}); give an address of "
            f"this machine (`hostname -I` lists them), 0.0.0.0 for all of them, or leave --ip out for "
            f"{LOOPBACK} (this machine only)"
        ) from None


def is_loopback(host: str) -> bool:
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def free_port_from(start: int, host: str = LOOPBACK) -> int | None:
    return next((p for p in range(start, min(start + PORTS_TRIED, 65536)) if port_is_free(p, host)), None)


def choose_port(asked: int | None, host: str = LOOPBACK) -> int:
    """``asked`` if it is free (else an error suggesting a free one); without ``asked``, the first free
    port from 8888, announced when it is not 8888."""
    start = asked or DEFAULT_PORT
    if port_is_free(start, host):
        return start
    other = free_port_from(start + 1, host)
    if asked is not None or other is None:
        hint = f"; choose another with --port {other}" if other else "; choose a free one with --port"
        raise SystemExit(
            f"ipu-teach course: port {start} on {host} is already in use (another JupyterLab or "
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
        help="start JupyterLab on your copy of the course notebooks (127.0.0.1)",
        description="Start JupyterLab on your copy of the course notebooks (made or completed first, never "
        "overwritten), listening on 127.0.0.1 unless --ip says otherwise.",
    )
    parser.add_argument(
        "--notebooks", metavar="DIR", help="the course's notebooks to copy (default: the repository's notebooks/)"
    )
    parser.add_argument(
        "--workspace",
        metavar="DIR",
        help=f"your copy of the course, which JupyterLab opens (default: ~/{workspace.WORKSPACE_NAME})",
    )
    parser.add_argument(
        "--reset",
        nargs="+",
        metavar="NOTEBOOK",
        help="put the course's version of NOTEBOOK (e.g. 02_steps_per_execution, or 02) back in your copy, "
        "keeping yours as NAME.backup-N.ipynb, then exit",
    )
    parser.add_argument(
        "--copy-only",
        action="store_true",
        help="make or complete your copy, then exit without starting JupyterLab (e.g. in JupyterHub's start hook)",
    )
    parser.add_argument(
        "--ip",
        default=LOOPBACK,
        metavar="ADDRESS",
        help=f"address to listen on (default {LOOPBACK}: this machine only; 0.0.0.0: every network, token required)",
    )
    parser.add_argument(
        "--port",
        type=port_number,
        default=None,
        help=f"port to listen on (default {DEFAULT_PORT}, or the next free one)",
    )
    parser.add_argument("--no-browser", action="store_true", help="do not open a web browser")
    parser.set_defaults(run=run)


def command(root: Path, port: int, host: str = LOOPBACK, no_browser: bool = False) -> list:
    """JupyterLab on ``root``; its token comes from the environment (``JUPYTER_TOKEN``), never this line."""
    cmd = [
        sys.executable,
        "-m",
        "jupyterlab",
        f"--ServerApp.ip={host}",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--ServerApp.root_dir={root}",
    ]
    if no_browser:
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


def serve(cmd: list, env=None, watch=None) -> int:
    """Run ``cmd`` as the server until it ends or this process is told to stop (then 128 + the signal).
    With ``watch``, the server's error output (JupyterLab's log) is a pipe that ``watch(server)`` reads to its
    end, and passes on, in a thread beside it (waited for once the server has stopped, so no line is lost)."""
    group = {"start_new_session": True} if os.name == "posix" else {}
    previous = {sig: signal.signal(sig, _raise_stopped) for sig in STOP_SIGNALS}
    server = watcher = None
    try:
        server = subprocess.Popen(cmd, env=env, stderr=None if watch is None else subprocess.PIPE, **group)
        if watch is not None:
            watcher = threading.Thread(target=watch, args=(server,), daemon=True)
            watcher.start()
        return server.wait()
    except _Stopped as stopped:
        return 128 + stopped.args[0]
    finally:
        for sig in STOP_SIGNALS:  # a second Ctrl-C must not cut the shutdown short
            signal.signal(sig, signal.SIG_IGN)
        if server is not None:
            stop(server)
        if watcher is not None:
            watcher.join(STOP_SECONDS)
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def serve_on(port: int, command_for, move_if_taken: bool, env=None, host: str = LOOPBACK, url_for=None) -> int:
    """``serve(command_for(port))``; when the server fails (exits by itself with an error) and another program
    holds ``port`` now, so that it could not listen there, start it again on the next free port, saying so, if
    ``move_if_taken`` (the port was chosen here, not given with --port). With ``url_for``, the address
    ``url_for(port)`` is printed once the server answers on ``port``."""

    def start(port):
        announce = None if url_for is None else lambda server: announce_when_ready(server, host, port, url_for(port))
        return serve(command_for(port), env=env, watch=announce)

    status = start(port)
    for _ in range(PORTS_TRIED):
        if not (move_if_taken and 0 < status < 128 and not port_is_free(port, host)):
            break
        taken, port = port, free_port_from(port + 1, host)
        if port is None:
            break
        print(
            f"ipu-teach course: port {taken} was taken while JupyterLab started (another course starting at the "
            f"same moment?), so JupyterLab listens on port {port} (choose one with --port)",
            flush=True,
        )
        status = start(port)
    return status


def answers(host: str, port: int) -> bool:
    """Whether a Jupyter server answers on ``host``:``port`` (its ``/api``, which needs no token). JupyterLab
    prints its own addresses before it starts answering, so an address printed after this comes last."""
    connection = http.client.HTTPConnection(host, port, timeout=1)
    try:
        connection.request("GET", "/api")
        return connection.getresponse().status == 200
    except OSError:
        return False
    finally:
        connection.close()


def announce_when_ready(server: subprocess.Popen, host: str, port: int, url: str) -> None:
    """Pass the server's log on to this process's error output, to its end; beside it, print ``url`` once the
    server answers and its start-up log is over."""
    last_line_at = [time.monotonic()]
    announcer = threading.Thread(target=_announce, args=(server, host, port, url, last_line_at), daemon=True)
    announcer.start()
    for line in server.stderr:
        sys.stderr.buffer.write(line)
        sys.stderr.buffer.flush()
        last_line_at[0] = time.monotonic()
    # the log ends with the server; the announcer ends within a probe of it. Waited for, so that it is never
    # left holding the output's lock as this process exits (Python then aborts: "could not acquire lock for
    # <stdout> at interpreter shutdown, possibly due to daemon threads")
    announcer.join()


def _announce(server: subprocess.Popen, host: str, port: int, url: str, last_line_at: list) -> None:
    """Print ``url`` alone on its line, the last thing a learner sees of the start (not if the server ends
    first or never answers)."""
    probe = {"0.0.0.0": LOOPBACK, "::": "::1", "localhost": LOOPBACK}.get(host, host)
    deadline = time.monotonic() + READY_SECONDS
    ready = False
    while server.poll() is None and time.monotonic() < deadline:
        ready = ready or answers(probe, port)
        if ready and time.monotonic() - last_line_at[0] >= QUIET_SECONDS:
            print(
                f"\nipu-teach course: JupyterLab is ready; open this address (Ctrl-C here stops it):\n{url}\n",
                flush=True,
            )
            return
        time.sleep(0.2)


def course_url(host: str, port: int, token: str) -> str:
    """The address a learner opens: this machine's name when JupyterLab listens on every address."""
    name = socket.gethostname() if host in ("0.0.0.0", "::") else host
    if ":" in name and not name.startswith("["):
        name = f"[{name}]"  # an IPv6 address in a URL
    return f"http://{name}:{port}/lab?token={token}"


def exposure_warning(host: str, port: int) -> str:
    return (
        f"ipu-teach course: warning: --ip {host} lets other machines connect to port {port}. JupyterLab still "
        f"requires its token (in the address printed below), and whoever has that address can run any code as "
        f"you: do not share it. For a room of learners, give each their own server (JupyterHub, see the README)."
    )


def run(args) -> int:
    course = notebooks_folder(args.notebooks)
    folder = workspace.workspace_folder(args.workspace, course)
    if args.reset:
        for name in args.reset:
            print(workspace.reset(course, folder, name))
        return 0
    print(workspace.report(workspace.update_workspace(course, folder), folder), flush=True)
    if args.copy_only:
        return 0
    try:
        import jupyterlab  # noqa: F401  (only checking it is installed)
    except ImportError:
        print("ipu-teach course needs JupyterLab: pip install -e '.[notebooks]'", file=sys.stderr)
        return 1
    check_address(args.ip)
    port = choose_port(args.port, args.ip)
    if not is_loopback(args.ip):
        print(exposure_warning(args.ip, port), flush=True)
    # the kernels compute as the committed notebooks were computed, so a learner sees the same numbers
    env = notebook_environment()
    env["JUPYTER_TOKEN"] = env.get("JUPYTER_TOKEN") or secrets.token_hex(24)  # an instructor's own token is kept
    return serve_on(
        port,
        lambda port: command(folder, port, args.ip, args.no_browser),
        args.port is None,
        env=env,
        host=args.ip,
        url_for=lambda port: course_url(args.ip, port, env["JUPYTER_TOKEN"]),
    )
