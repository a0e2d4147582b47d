"""``ipu-teach course`` fails loudly and leaves nothing running: ports, bad arguments, an installed
package without the notebooks, and stopping by signal (the server and its children end, the port is free).
It serves the learner's copy of the course (completed, never overwritten; one notebook reset on request,
the learner's kept), keeps the token on other addresses, and prints the address to open last."""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from ipu_teach.cli import course, main, workspace

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


# --- the learner's workspace: a copy JupyterLab opens; the course's own files are never written -----------


def make_course(folder, notebooks=("00_ipu_and_bsp", "01_porting_keras_to_the_ipu"), solutions=5):
    """A course folder as the repository's notebooks/ is after a run: notebooks, solutions, and what running
    writes beside them (never part of the course)."""
    for name in notebooks:
        (folder / f"{name}.ipynb").parent.mkdir(parents=True, exist_ok=True)
        (folder / f"{name}.ipynb").write_text(f'{{"course": "{name}"}}')
    (folder / "solutions").mkdir(exist_ok=True)
    for number in range(1, solutions + 1):
        (folder / "solutions" / f"00_exercise_{number}.py").write_text(f"print({number})\n")
    for generated in (".ipynb_checkpoints/00_ipu_and_bsp-checkpoint.ipynb", "ipu_executable_cache/a.json"):
        (folder / generated).parent.mkdir(parents=True, exist_ok=True)
        (folder / generated).write_text("generated")
    return folder


def snapshot(folder):
    return {path.relative_to(folder).as_posix(): path.read_bytes() for path in folder.rglob("*") if path.is_file()}


def test_the_first_start_copies_the_course_and_says_what_is_new(tmp_path):
    course_folder, mine = make_course(tmp_path / "course"), tmp_path / "mine"
    update = workspace.update_workspace(course_folder, mine)
    assert sorted(snapshot(mine)) == [
        workspace.RECORD_NAME,  # hidden: JupyterLab does not show it
        "00_ipu_and_bsp.ipynb",
        "01_porting_keras_to_the_ipu.ipynb",
        *[f"solutions/00_exercise_{n}.py" for n in range(1, 6)],
    ]  # no checkpoints, no executable cache
    assert workspace.report(update, mine).splitlines() == [
        f"ipu-teach course: your copy of the course is {mine} (JupyterLab opens and saves it there; the course's "
        "own notebooks are never changed)",
        "ipu-teach course: new in your copy: 00_ipu_and_bsp.ipynb, 01_porting_keras_to_the_ipu.ipynb, "
        "solutions/ (5 files)",
    ]


def test_an_update_copies_only_what_the_learner_lacks_and_keeps_their_edits(tmp_path):
    course_folder, mine = make_course(tmp_path / "course", solutions=2), tmp_path / "mine"
    workspace.update_workspace(course_folder, mine)
    (mine / "00_ipu_and_bsp.ipynb").write_text('{"mine": 1}')  # the learner's edit
    (mine / "01_porting_keras_to_the_ipu.ipynb").write_text('{"mine": 2}')  # edited, and updated in the course:
    (course_folder / "01_porting_keras_to_the_ipu.ipynb").write_text('{"course": "updated"}')
    (course_folder / "solutions" / "00_exercise_1.py").write_text("print('updated')\n")  # updated, not edited
    (mine / "solutions" / "00_exercise_2.py").unlink()  # deleted by the learner: copied again
    (course_folder / "02_steps_per_execution.ipynb").write_text('{"course": "new"}')  # a new notebook
    update = workspace.update_workspace(course_folder, mine)
    assert update.new == [Path("02_steps_per_execution.ipynb"), Path("solutions/00_exercise_2.py")]
    assert update.changed == [Path("00_ipu_and_bsp.ipynb")]
    assert update.updated == [Path("01_porting_keras_to_the_ipu.ipynb"), Path("solutions/00_exercise_1.py")]
    assert update.unchanged == 0
    assert (mine / "00_ipu_and_bsp.ipynb").read_text() == '{"mine": 1}'
    assert (mine / "01_porting_keras_to_the_ipu.ipynb").read_text() == '{"mine": 2}'
    assert (mine / "solutions" / "00_exercise_1.py").read_text() == "print(1)\n"  # never overwritten
    assert workspace.report(update, mine).splitlines()[1:] == [
        "ipu-teach course: new in your copy: 02_steps_per_execution.ipynb, solutions/00_exercise_2.py",
        "ipu-teach course: kept as you changed them: 00_ipu_and_bsp.ipynb",
        "ipu-teach course: the course has another version of these, yours are kept: 01_porting_keras_to_the_ipu.ipynb, "
        "solutions/00_exercise_1.py; `ipu-teach course --reset NAME` takes the course's and keeps yours as a backup",
    ]
    assert workspace.update_workspace(course_folder, mine).updated == update.updated  # said again until reset
    workspace.reset(course_folder, mine, "01")
    (mine / "01_porting_keras_to_the_ipu.ipynb").write_text('{"mine": 3}')  # edited after the reset: the learner's
    assert workspace.update_workspace(course_folder, mine).changed == [
        Path("00_ipu_and_bsp.ipynb"),
        Path("01_porting_keras_to_the_ipu.ipynb"),
    ]


@pytest.mark.parametrize("record", ["{not json", "[1, 2]", '{"00_ipu_and_bsp.ipynb": 7}'])
def test_a_damaged_or_missing_record_of_the_copies_loses_nothing(tmp_path, record):
    course_folder, mine = make_course(tmp_path / "course"), tmp_path / "mine"
    workspace.update_workspace(course_folder, mine)
    (mine / "00_ipu_and_bsp.ipynb").write_text('{"mine": 1}')
    (mine / workspace.RECORD_NAME).write_text(record)
    update = workspace.update_workspace(course_folder, mine)  # what it cannot tell apart is named as updated
    assert update.updated == [Path("00_ipu_and_bsp.ipynb")] and update.new == [] and update.unchanged == 6
    assert (mine / "00_ipu_and_bsp.ipynb").read_text() == '{"mine": 1}'
    assert json.loads((mine / workspace.RECORD_NAME).read_text())["solutions/00_exercise_1.py"]  # written anew


def test_a_read_only_course_gives_the_learner_writable_copies(tmp_path):
    course_folder, mine = make_course(tmp_path / "course"), tmp_path / "mine"
    (course_folder / "00_ipu_and_bsp.ipynb").chmod(0o444)  # as in a read-only install
    workspace.update_workspace(course_folder, mine)
    assert (mine / "00_ipu_and_bsp.ipynb").stat().st_mode & 0o200


def test_jupyterlab_opens_the_workspace_and_the_course_files_are_never_written(tmp_path, monkeypatch, capsys):
    course_folder, mine = make_course(tmp_path / "course"), tmp_path / "mine"
    before = snapshot(course_folder)
    served = {}
    monkeypatch.setattr(
        course, "serve_on", lambda port, command_for, *args, **kwargs: served.update(command=command_for(port)) or 0
    )
    common = ["course", "--notebooks", str(course_folder), "--workspace", str(mine), "--no-browser"]
    assert main.main(common) == 0
    assert f"--ServerApp.root_dir={mine.resolve()}" in served["command"]
    (mine / "00_ipu_and_bsp.ipynb").write_text('{"autosaved": 1}')  # what JupyterLab's autosave does
    assert main.main([*common, "--reset", "00_ipu_and_bsp"]) == 0
    assert main.main([*common, "--copy-only"]) == 0
    assert snapshot(course_folder) == before


def test_reset_puts_the_course_version_back_and_keeps_the_learners_as_a_backup(tmp_path, capsys):
    course_folder, mine = make_course(tmp_path / "course"), tmp_path / "mine"
    workspace.update_workspace(course_folder, mine)
    notebook = mine / "01_porting_keras_to_the_ipu.ipynb"
    for attempt in (1, 2):  # a second reset never overwrites the first backup
        notebook.write_text(f'{{"mine": {attempt}}}')
        assert main.main(["course", "--notebooks", str(course_folder), "--workspace", str(mine), "--reset", "01"]) == 0
        assert capsys.readouterr().out == (
            f"ipu-teach course: {mine.resolve() / notebook.name} is the course's version again; yours is kept as "
            f"01_porting_keras_to_the_ipu.backup-{attempt}.ipynb (in JupyterLab, close its tab without saving, "
            f"or use File > Reload Notebook from Disk)\n"
        )
        assert notebook.read_text() == '{"course": "01_porting_keras_to_the_ipu"}'
    assert (mine / "01_porting_keras_to_the_ipu.backup-1.ipynb").read_text() == '{"mine": 1}'
    assert (mine / "01_porting_keras_to_the_ipu.backup-2.ipynb").read_text() == '{"mine": 2}'


@pytest.mark.parametrize(
    "name", ["00_ipu_and_bsp", "00_ipu_and_bsp.ipynb", "00", "solutions/00_exercise_3.py", "solutions/00_exercise_3"]
)
def test_reset_knows_a_notebook_by_its_name_its_file_or_its_number(tmp_path, name):
    course_folder, mine = make_course(tmp_path / "course"), tmp_path / "mine"
    workspace.update_workspace(course_folder, mine)
    found = workspace.find_course_file(course_folder, name)
    assert found == (Path("solutions/00_exercise_3.py") if "solutions" in name else Path("00_ipu_and_bsp.ipynb"))
    (mine / found).unlink()  # a deleted file comes back, with no backup to make
    assert workspace.reset(course_folder, mine, name).endswith(
        "is the course's version again (in JupyterLab, "
        "close its tab without saving, or use File > Reload "
        "Notebook from Disk)"
    )
    assert workspace.reset(course_folder, mine, name).endswith("is already the course's version; nothing to reset")


@pytest.mark.parametrize("name, why", [("08", "is none of"), ("0", "is in more than one of")])
def test_reset_of_an_unknown_or_ambiguous_name_lists_the_notebooks(tmp_path, name, why):
    course_folder = make_course(tmp_path / "course")
    with pytest.raises(SystemExit) as refused:
        workspace.find_course_file(course_folder, name)
    assert str(refused.value) == (
        f"ipu-teach course: {name!r} {why} the course's notebooks; give one of 00_ipu_and_bsp, "
        "01_porting_keras_to_the_ipu (or a solution, e.g. solutions/02_exercise_1.py)"
    )


def test_the_default_workspace_is_in_the_home_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert workspace.workspace_folder(None, tmp_path / "course") == tmp_path / "home" / "ipu-teach-workspace"


@pytest.mark.parametrize("inside", [".", "mine"])
def test_a_workspace_in_the_course_folder_is_refused(tmp_path, inside):
    course_folder = make_course(tmp_path / "course")
    with pytest.raises(
        SystemExit,
        match=r"is inside the course's own folder .* so JupyterLab would save into the "
        r"course's notebooks; choose a folder outside it with --workspace",
    ):
        workspace.workspace_folder(course_folder / inside, course_folder)


def test_a_workspace_that_is_a_file_is_refused(tmp_path):
    (tmp_path / "mine").write_text("a file")
    with pytest.raises(SystemExit, match=r"the workspace .*mine is a file; give a folder with --workspace"):
        workspace.workspace_folder(tmp_path / "mine", tmp_path / "course")


# --- --ip: the token stays, a warning when other machines can connect, the address printed last ----------


@pytest.mark.parametrize(
    "host, loopback",
    [
        ("127.0.0.1", True),
        ("::1", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("10.1.2.3", False),
        ("lab-server", False),
    ],
)
def test_loopback_addresses(host, loopback):
    assert course.is_loopback(host) is loopback


def test_an_address_this_machine_does_not_have_is_refused_clearly():
    with pytest.raises(
        SystemExit,
        match=r"cannot listen on --ip 192.0.2.1 \(.*\); give an address of this machine "
        r"\(`hostname -I` lists them\), 0.0.0.0 for all of them, or leave --ip out",
    ):
        course.check_address("192.0.2.1")  # TEST-NET-1 (RFC 5737): never a local address


@pytest.mark.parametrize("preset", [None, "the-instructors-token"])
def test_on_every_address_the_token_is_kept_off_the_command_line_and_a_warning_says_who_can_connect(
    tmp_path, monkeypatch, capsys, preset
):
    if preset:
        monkeypatch.setenv("JUPYTER_TOKEN", preset)
    else:
        monkeypatch.delenv("JUPYTER_TOKEN", raising=False)
    served = {}
    monkeypatch.setattr(
        course,
        "serve_on",
        lambda port, command_for, *args, **kwargs: served.update(kwargs, command=command_for(port), port=port) or 0,
    )
    course_folder = make_course(tmp_path / "course")
    argv = ["course", "--notebooks", str(course_folder), "--workspace", str(tmp_path / "mine"), "--ip", "0.0.0.0"]
    assert main.main(argv) == 0
    token = served["env"]["JUPYTER_TOKEN"]
    assert token == preset or re.fullmatch(r"[0-9a-f]{48}", token)
    assert "--ServerApp.ip=0.0.0.0" in served["command"] and not any(token in part for part in served["command"])
    assert served["url_for"](served["port"]) == f"http://{socket.gethostname()}:{served['port']}/lab?token={token}"
    assert capsys.readouterr().out.splitlines()[-1] == (
        f"ipu-teach course: warning: --ip 0.0.0.0 lets other machines connect to port {served['port']}. JupyterLab "
        "still requires its token (in the address printed below), and whoever has that address can run any code as "
        "you: do not share it. For a room of learners, give each their own server (JupyterHub, see the README)."
    )


def test_on_loopback_there_is_no_warning(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(course, "serve_on", lambda *args, **kwargs: 0)
    course_folder = make_course(tmp_path / "course")
    assert main.main(["course", "--notebooks", str(course_folder), "--workspace", str(tmp_path / "mine")]) == 0
    assert "warning" not in capsys.readouterr().out


# As JupyterLab: logs its start, answers /api once listening, and logs a last start-up line a moment later
# (jupyter-lsp's "Skipped non-installed server(s)").
HTTP_SERVER = textwrap.dedent("""
    import http.server, sys, threading, time
    class Api(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200 if self.path == "/api" else 404)
            self.end_headers()
        def log_message(self, *args):
            pass
    print("[I ServerApp] starting", file=sys.stderr, flush=True)
    if sys.argv[2] == "fails":
        raise SystemExit(1)
    server = http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Api)
    print("[I ServerApp] http://127.0.0.1:" + sys.argv[1] + "/lab?token=...", file=sys.stderr, flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    time.sleep(0.5)
    print("[I ServerApp] Skipped non-installed server(s)", file=sys.stderr, flush=True)
    time.sleep(600)
""")


def launch_announced(tmp_path, behaviour):
    fake = tmp_path / "http_server.py"
    fake.write_text(HTTP_SERVER)
    port = course.free_port_from(20000)
    launcher = (
        f"from ipu_teach.cli import course; "
        f"raise SystemExit(course.serve_on({port}, lambda port: [{sys.executable!r}, {str(fake)!r}, str(port), "
        f"{behaviour!r}], move_if_taken=False, url_for=lambda port: f'http://127.0.0.1:{{port}}/lab?token=abc'))"
    )
    return port, subprocess.Popen(
        [sys.executable, "-c", launcher], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


@posix_only
def test_the_address_to_open_is_printed_last_alone_on_its_line(tmp_path):
    port, parent = launch_announced(tmp_path, "serves")
    lines = []
    while not lines or lines[-1] != f"http://127.0.0.1:{port}/lab?token=abc\n":
        lines.append(parent.stdout.readline())
        assert lines[-1], f"ended without printing the address: {lines}"
    parent.send_signal(signal.SIGTERM)
    assert parent.wait(timeout=30) == 128 + signal.SIGTERM
    assert lines == [
        "[I ServerApp] starting\n",
        f"[I ServerApp] http://127.0.0.1:{port}/lab?token=...\n",
        "[I ServerApp] Skipped non-installed server(s)\n",
        "\n",
        "ipu-teach course: JupyterLab is ready; open this address (Ctrl-C here stops it):\n",
        f"http://127.0.0.1:{port}/lab?token=abc\n",
    ]


@posix_only
def test_a_server_that_fails_to_start_prints_no_address(tmp_path):
    _, parent = launch_announced(tmp_path, "fails")
    output, _ = parent.communicate(timeout=30)
    assert parent.returncode == 1 and output == "[I ServerApp] starting\n"


def test_the_log_is_passed_on_until_the_announcer_has_finished(monkeypatch):
    # A daemon thread still printing as the process exits makes Python abort ("could not acquire lock for
    # <stdout> at interpreter shutdown"): announce_when_ready, which `serve` waits for, waits for its announcer.
    finished = []
    monkeypatch.setattr(course, "_announce", lambda *args: time.sleep(0.5) or finished.append(True))

    class EndedServer:
        stderr = []

    course.announce_when_ready(EndedServer(), course.LOOPBACK, 1, "http://127.0.0.1:1/lab")
    assert finished == [True]
