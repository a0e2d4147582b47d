"""The TF2 Keras scripts of tests/tf_scripts run unchanged with ``ipu-teach run`` (each in a new process)."""

from pathlib import Path

import pytest
from script_runner import run_script

SCRIPTS = Path(__file__).parent / "tf_scripts"


def _run(name, *args, cwd):
    return run_script(SCRIPTS / name, *args, cwd=cwd, timeout=120)


@pytest.mark.parametrize(
    "name, args, expected",
    [
        ("mnist_sequential.py", (), "IPUs visible: 16 attached: 1"),
        ("functional_pipeline.py", (), "predictions (16, 4)"),
        ("sequential_pipeline_inference.py", (), "predicted (8, 256)"),
        ("dataset_pipeline.py", (), "history ['accuracy', 'loss', 'val_accuracy', 'val_loss']"),
        ("python_inputs.py", ("--epochs", "2"), "trained 2 epoch(s)"),
        ("custom_training_loop.py", (), "accuracy above 0.6\nipu-teach: `training_loop` ran 8 call(s), 128 step(s)"),
        ("subclassed_model.py", (), "pipelined test accuracy 0.8"),
    ],
)
def test_the_script_runs_unchanged(name, args, expected, tmp_path):
    result = _run(name, *args, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert expected in result.stdout


def test_a_script_using_a_missing_name_fails_naming_it(tmp_path):
    result = _run("not_simulated.py", cwd=tmp_path)
    assert result.returncode == 1 and result.stdout == "before the missing name\n"
    assert result.stderr.startswith(f'Traceback (most recent call last):\n  File "{SCRIPTS / "not_simulated.py"}"')
    assert "NotSimulatedError: tf.linalg.svd is not simulated by ipu-teach" in result.stderr
