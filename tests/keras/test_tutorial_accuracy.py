"""The tutorial's accuracy on full MNIST with its settings (SGD, batch 64, 3 epochs): minutes, so marked slow."""

import time
from pathlib import Path

import pytest
from keras_helpers import run_tutorial_script

FULL_MNIST = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "mnist.npz"


@pytest.mark.slow
@pytest.mark.skipif(not FULL_MNIST.is_file(), reason=f"full MNIST not found at {FULL_MNIST}")
def test_tutorial_reaches_keras_accuracy_on_full_mnist(monkeypatch, capsys):
    monkeypatch.setenv("IPU_TEACH_MNIST", str(FULL_MNIST))
    monkeypatch.setenv("KERAS_HOME", str(Path(__file__).parent / "no-keras-cache"))  # not a cached copy
    start = time.perf_counter()
    namespace = run_tutorial_script()
    seconds = time.perf_counter() - start
    out = capsys.readouterr().out
    assert "full MNIST from" in out and "(60,000 train / 10,000 test)" in out
    assert "938/938 [" in out and "157/157 [" in out
    loss, accuracy = namespace["result"]
    with capsys.disabled():
        print(f"\ntutorial on full MNIST: test loss {loss:.4f}, accuracy {accuracy:.4f}, {seconds:.0f} s")
    assert accuracy >= 0.95  # the seed reports 0.9609 on Keras
