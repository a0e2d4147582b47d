"""The PyTorch and PopTorch scripts of tests/torch_scripts run unchanged with ``ipu-teach run`` (each in a new
process) and train MNIST (the bundled subset: 10,000 training images) to the accuracy one epoch gives."""

import re
from pathlib import Path

import pytest
from script_runner import run_script

SCRIPTS = Path(__file__).parent / "torch_scripts"


def _run(name, *args, cwd):
    return run_script(SCRIPTS / name, *args, cwd=cwd, timeout=240)


@pytest.mark.parametrize(
    "name, args, programs",
    [
        ("mnist_pytorch.py", ("--epochs", "1"), []),
        (
            "mnist_workshop_poptorch.py",
            ("--epochs", "1"),
            ["poptorch.trainingModel(TrainingModelWithLoss)` ran 25 call(s), 1250 step(s)", "inferenceModel(Network)"],
        ),
        (
            "mnist_poptorch.py",
            ("--epochs", "1"),
            ["poptorch.trainingModel(TrainingModelWithLoss)` ran 25 call(s), 1250 step(s)", "inferenceModel(Network)"],
        ),
    ],
)
def test_the_mnist_script_runs_unchanged_and_learns(name, args, programs, tmp_path):
    result = _run(name, *args, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    accuracy = float(re.search(r"Accuracy on test set: ([\d.]+)%", result.stdout).group(1))
    assert accuracy > 88, result.stdout
    for program in programs:
        assert program in result.stdout
    if programs:
        assert "Graph compilation: 100%" in result.stderr


def test_a_torch_name_ipu_teach_lacks_fails_naming_it(tmp_path):
    script = tmp_path / "uses_fft.py"
    script.write_text(
        "import torch\nimport torch.nn.functional as F\nprint('imported', torch.__version__)\ntorch.fft\n"
    )
    result = run_script(script, cwd=tmp_path, timeout=60)
    assert result.returncode == 1 and result.stdout.startswith("imported 2.0.0+ipu_teach")
    assert "NotSimulatedError: torch.fft is not simulated by ipu-teach: ipu-teach simulates the part of PyTorch" in (
        result.stderr
    )
