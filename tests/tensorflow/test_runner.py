"""``ipu-teach run``: a script runs as ``python SCRIPT.py`` would run it, with TensorFlow imports mapped."""

import json
import os
import re
import signal
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from ipu_teach.tensorflow.runner import run_script

REPOSITORY = Path(__file__).resolve().parents[2]
posix_only = pytest.mark.skipif(os.name != "posix", reason="signals, process groups and forkserver are POSIX")


def ipu_teach_run(*args, timeout=120):
    """``python -m ipu_teach run ARGS`` from the repository (where its children find ipu_teach); a run that
    outlives ``timeout`` (a hang) is killed with everything it started and fails the test."""
    command = [sys.executable, "-m", "ipu_teach", "run", *map(str, args)]
    group = {"start_new_session": True} if os.name == "posix" else {}
    process = subprocess.Popen(
        command, cwd=REPOSITORY, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **group
    )
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        if group:
            os.killpg(process.pid, signal.SIGKILL)
        else:
            process.kill()
        process.communicate()
        pytest.fail(f"`ipu-teach run {' '.join(map(str, args))}` still running after {timeout} s: it hangs")
    return process.returncode, out, err


def _script(tmp_path, text, name="script.py"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_the_script_runs_as_main_with_its_arguments_and_its_folder_on_the_path(tmp_path):
    (tmp_path / "helper_module_for_run.py").write_text("VALUE = 42\n")
    out = tmp_path / "seen.json"
    script = _script(
        tmp_path,
        "import json, sys, tensorflow as tf\nimport helper_module_for_run\n"
        f"json.dump([sys.argv, __name__, tf.__version__, helper_module_for_run.VALUE], "
        f"open({str(out)!r}, 'w'))\n",
    )
    argv, path = list(sys.argv), list(sys.path)
    assert run_script(script, ["--epochs", "3", "x"]) == 0
    assert json.loads(out.read_text()) == [[str(script), "--epochs", "3", "x"], "__main__", "2.6.3", 42]
    # called in a process that goes on, the run puts back what it changed
    assert sys.argv == argv and sys.path == path and "tensorflow" not in sys.modules
    sys.modules.pop("helper_module_for_run", None)


def test_exit_statuses_are_pythons(tmp_path, capsys):
    assert run_script(_script(tmp_path, "import sys\nsys.exit(3)\n")) == 3
    assert run_script(_script(tmp_path, "import sys\nsys.exit()\n")) == 0
    assert run_script(_script(tmp_path, "import sys\nsys.exit('stopped: bad input')\n")) == 1
    assert capsys.readouterr().err == "stopped: bad input\n"
    assert run_script(tmp_path / "missing.py") == 2
    assert "can't open file" in capsys.readouterr().err


def test_an_uncaught_error_prints_pythons_traceback_from_the_script_on(tmp_path, capsys):
    script = _script(tmp_path, "def f():\n    raise KeyError('k')\n\nf()\n")
    assert run_script(script) == 1
    err = capsys.readouterr().err
    assert err.startswith(f'Traceback (most recent call last):\n  File "{script}", line 4, in <module>\n')
    assert "runpy" not in err and "runner.py" not in err and err.endswith("KeyError: 'k'\n")


def test_a_syntax_error_is_reported_without_the_runners_frames(tmp_path, capsys):
    assert run_script(_script(tmp_path, "x = (\n")) == 1
    err = capsys.readouterr().err
    assert "SyntaxError" in err and "Traceback" not in err and str(tmp_path / "script.py") in err


def test_a_not_simulated_name_stops_the_script_naming_it(tmp_path, capsys):
    script = _script(tmp_path, "import tensorflow as tf\nprint('started')\ntf.linalg.svd([[1.0]])\n")
    assert run_script(script) == 1
    captured = capsys.readouterr()
    assert captured.out == "started\n"
    assert captured.err.splitlines()[-1].startswith(
        "ipu_teach.not_simulated.NotSimulatedError: tf.linalg.svd is not simulated by ipu-teach"
    )


POOL_SCRIPT = """\
import multiprocessing
import sys

import tensorflow as tf


def double(i):
    from tensorflow.keras import layers  # imported in the worker, after the script's own imports

    return f"{layers.Dense.__name__} {int(tf.reduce_sum(tf.constant([i, i])).numpy())}"


if __name__ == "__main__":
    with multiprocessing.get_context(sys.argv[1]).Pool(2) as pool:
        print(pool.map(double, range(3)))
"""


@pytest.mark.parametrize(
    "start_method", ["spawn", pytest.param("forkserver", marks=posix_only)], ids=["spawn", "forkserver"]
)
def test_the_workers_of_a_multiprocessing_pool_import_tensorflow_as_the_script_does(tmp_path, start_method):
    status, out, err = ipu_teach_run(_script(tmp_path, POOL_SCRIPT), start_method)
    assert (status, out) == (0, "['Dense 0', 'Dense 2', 'Dense 4']\n"), err


AFTER_THE_MAIN_CODE = """\
import atexit
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

script = sys.modules["__main__"]


def later():
    while sys.modules["__main__"] is script:  # until the main code has ended
        time.sleep(0.01)
    time.sleep(0.2)
    import tensorflow as tf

    print("thread:", tf.__version__, sys.argv[1:], flush=True)


def at_exit():
    import tensorflow as tf

    print("atexit:", tf.keras.layers.Dense.__name__)


threading.Thread(target=later).start()
atexit.register(at_exit)
ThreadPoolExecutor(1).submit(print, "executor", flush=True).result()  # never shut down: Python's exit ends it
"""


def test_threads_and_atexit_functions_still_running_as_the_program_ends_import_tensorflow(tmp_path):
    status, out, err = ipu_teach_run(_script(tmp_path, AFTER_THE_MAIN_CODE), "--epochs", "3")
    assert (status, out, err) == (0, "executor\nthread: 2.6.3 ['--epochs', '3']\natexit: Dense\n", "")


@pytest.mark.parametrize("kind", ["folder", "zip"])
def test_a_folder_or_zip_file_with_main_runs_as_python_runs_it(tmp_path, kind):
    out = tmp_path / "seen.json"
    main_code = (
        "import json, sys, tensorflow as tf\n"
        f"json.dump([sys.argv[1:], __name__, sys.path[0], tf.__version__], open({str(out)!r}, 'w'))\n"
    )
    app = tmp_path / "app"
    app.mkdir()
    (app / "__main__.py").write_text(main_code)
    if kind == "zip":
        with zipfile.ZipFile(tmp_path / "app.zip", "w") as archive:
            archive.write(app / "__main__.py", "__main__.py")
        app = tmp_path / "app.zip"
    argv, path = list(sys.argv), list(sys.path)
    assert run_script(app, ["--epochs", "3"]) == 0
    assert json.loads(out.read_text()) == [["--epochs", "3"], "__main__", str(app), "2.6.3"]
    assert sys.argv == argv and sys.path == path and "tensorflow" not in sys.modules


def test_a_folder_without_main_gets_pythons_message(tmp_path, capsys):
    assert run_script(tmp_path) == 1
    assert capsys.readouterr().err == f"ipu-teach run: can't find '__main__' module in {str(tmp_path)!r}\n"


def _pythons_own(script):
    """What ``python SCRIPT`` prints on stderr and its exit status."""
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    return result.returncode, result.stderr


@pytest.mark.parametrize(
    "code, status",
    [
        ("raise KeyboardInterrupt\n", 130),
        ("class Stop(BaseException):\n    pass\n\n\ndef f():\n    raise Stop('at once')\n\n\nf()\n", 1),
        ("import sys\nsys.exit(3)\n", 3),
    ],
    ids=["KeyboardInterrupt", "a BaseException", "sys.exit"],
)
def test_a_base_exception_prints_what_python_prints_without_the_runners_frames(tmp_path, capsys, code, status):
    script = _script(tmp_path, code)
    assert run_script(script) == status
    assert capsys.readouterr().err == _pythons_own(script)[1]


@posix_only
def test_ctrl_c_prints_pythons_keyboard_interrupt_and_exits_with_130(tmp_path):
    script = _script(tmp_path, "import time\nprint('ready', flush=True)\ntime.sleep(600)\n")
    traces = []
    for command in ([sys.executable, str(script)], [sys.executable, "-m", "ipu_teach", "run", str(script)]):
        process = subprocess.Popen(command, cwd=REPOSITORY, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert process.stdout.readline() == "ready\n"
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
        traces.append((process.returncode, err))
    (python_status, python_trace), (status, trace) = traces
    assert python_status == -signal.SIGINT and status == 130  # a shell shows both as 130
    # the script's one frame (the line depends on when the signal lands: the print or the sleep)
    frame = rf'  File "{re.escape(str(script))}", line [23], in <module>\n(    .*\n)+'
    pythons = rf"Traceback \(most recent call last\):\n{frame}KeyboardInterrupt\n"
    assert re.fullmatch(pythons, python_trace) and re.fullmatch(pythons, trace), trace
