"""``ipu-teach run``: a script runs as ``python SCRIPT.py`` would run it, with TensorFlow imports mapped."""

import json
import sys

from ipu_teach.cli import main
from ipu_teach.tensorflow.runner import run_script


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
    assert main.main(["run", str(script), "--epochs", "3", "x"]) == 0
    assert json.loads(out.read_text()) == [[str(script), "--epochs", "3", "x"], "__main__", "2.6.3", 42]
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
