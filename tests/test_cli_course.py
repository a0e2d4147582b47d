"""``ipu-teach course`` fails loudly and leaves nothing running: ports, bad arguments, an installed
package without the notebooks, and stopping by signal (the server and its children end, the port is free)."""

import os
import signal
import socket
import subprocess
import sys
import textwrap
import time

import pytest

from ipu_teach.cli import course, main

posix_only = pytest.mark.skipif(os.name != "posix", reason="process groups and SIGHUP are POSIX")


def listening_socket():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    return server


def test_a_busy_port_given_with_port_is_an_error_that_suggests_a_free_one():
    with listening_socket() as busy:
        port = busy.getsockname()[1]
        with pytest.raises(
            SystemExit,
            match=rf"port {port} on 127.0.0.1 is already in use .*choose another with "
            r"--port \d+",
        ):
            course.choose_port(port)


def test_without_port_a_busy_default_moves_on_and_says_so(monkeypatch, capsys):
    with listening_socket() as busy:
        monkeypatch.setattr(course, "DEFAULT_PORT", busy.getsockname()[1])
        chosen = course.choose_port(None)
    assert chosen > course.DEFAULT_PORT
    assert f"port {course.DEFAULT_PORT} is in use, so JupyterLab listens on port {chosen}" in capsys.readouterr().out


@pytest.mark.parametrize("text", ["-1", "0", "65536", "eighty"])
def test_a_port_out_of_range_is_a_usage_error_not_a_traceback(text, capsys):
    with pytest.raises(SystemExit) as stop:
        main.main(["course", "--port", text])
    assert stop.value.code == 2
    assert f"argument --port: {text!r} is not a port: give a number from 1 to 65535" in capsys.readouterr().err


def test_an_installed_package_without_the_notebooks_refuses_to_start(monkeypatch, tmp_path):
    monkeypatch.setattr(course, "REPOSITORY", tmp_path)  # site-packages: no pyproject.toml of ipu-teach
    with pytest.raises(
        SystemExit,
        match=r"installed package, which holds the library but not the course "
        r"notebooks.*pip install -e.*--notebooks",
    ):
        course.notebooks_folder()


FAKE_SERVER = textwrap.dedent("""
    import signal, socket, subprocess, sys, time
    def shut_down(signum, frame):  # as JupyterLab does: stop, shutting the kernels down first
        raise SystemExit(0)
    signal.signal(signal.SIGTERM, signal.SIG_IGN if sys.argv[1] == "stubborn" else shut_down)
    kernel = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    print(listener.getsockname()[1], kernel.pid, flush=True)
    try:
        time.sleep(600)
    finally:
        kernel.terminate()
""")


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (exited, not yet reaped by its parent) counts as gone
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().split(")")[-1].split()[0] != "Z"


@posix_only
@pytest.mark.parametrize(
    "kind, signum",
    [
        ("cooperative", signal.SIGTERM),
        ("cooperative", signal.SIGHUP),
        ("cooperative", signal.SIGINT),
        ("cooperative", signal.SIGQUIT),  # Ctrl-\
        ("stubborn", signal.SIGTERM),
    ],
)
def test_stopping_the_course_stops_the_server_and_its_children(tmp_path, kind, signum):
    fake = tmp_path / "fake_server.py"
    fake.write_text(FAKE_SERVER)
    launcher = (
        f"from ipu_teach.cli import course; course.STOP_SECONDS = 1; "
        f"raise SystemExit(course.serve([{sys.executable!r}, {str(fake)!r}, {kind!r}]))"
    )
    parent = subprocess.Popen([sys.executable, "-c", launcher], stdout=subprocess.PIPE, text=True)
    port, kernel = map(int, parent.stdout.readline().split())
    assert not course.port_is_free(port) and alive(kernel)
    parent.send_signal(signum)
    assert parent.wait(timeout=30) == 128 + signum
    deadline = time.monotonic() + 10
    while (alive(kernel) or not course.port_is_free(port)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(kernel), "the server's child outlived `ipu-teach course`"
    assert course.port_is_free(port), "the server still holds its port"


# As JupyterLab with port_retries=0: listens on the port it is given, or fails with status 1 if that is taken.
PORT_SERVER = textwrap.dedent("""
    import socket, sys, time
    listener = socket.socket()
    try:
        listener.bind(("127.0.0.1", int(sys.argv[1])))
    except OSError:
        print("the port", sys.argv[1], "is not available", flush=True)
        raise SystemExit(1)
    listener.listen()
    print("serving on", sys.argv[1], flush=True)
    time.sleep(600)
""")


@posix_only
def test_a_port_taken_while_jupyterlab_starts_moves_it_to_the_next_free_port(tmp_path):
    fake = tmp_path / "port_server.py"
    fake.write_text(PORT_SERVER)
    with listening_socket() as other_course:  # took the port after `ipu-teach course` found it free
        taken = other_course.getsockname()[1]
        launcher = (
            f"from ipu_teach.cli import course; "
            f"raise SystemExit(course.serve_on({taken}, lambda port: [{sys.executable!r}, {str(fake)!r}, str(port)], "
            f"move_if_taken=True))"
        )
        parent = subprocess.Popen([sys.executable, "-c", launcher], stdout=subprocess.PIPE, text=True)
        lines = [parent.stdout.readline() for _ in range(3)]
        port = int(lines[2].split()[-1])
        assert lines == [
            f"the port {taken} is not available\n",
            f"ipu-teach course: port {taken} was taken while JupyterLab started (another course starting at the "
            f"same moment?), so JupyterLab listens on port {port} (choose one with --port)\n",
            f"serving on {port}\n",
        ]
        assert port != taken and not course.port_is_free(port)
        parent.send_signal(signal.SIGTERM)
        assert parent.wait(timeout=30) == 128 + signal.SIGTERM
    assert course.port_is_free(port)


@posix_only
def test_a_port_given_with_port_and_taken_while_jupyterlab_starts_is_not_changed(tmp_path, capfd):
    fake = tmp_path / "port_server.py"
    fake.write_text(PORT_SERVER)
    with listening_socket() as other_program:
        taken = other_program.getsockname()[1]
        status = course.serve_on(taken, lambda port: [sys.executable, str(fake), str(port)], move_if_taken=False)
    assert status == 1 and capfd.readouterr().out == f"the port {taken} is not available\n"
