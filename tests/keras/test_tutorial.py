"""The tutorial's vanilla Keras script runs with only the import changed (on a slice of MNIST, for speed)."""

import re

import numpy as np
import pytest
from keras_helpers import run_tutorial_script
from test_summary import TUTORIAL_SUMMARY

import ipu_teach.keras as keras

TRAIN, TEST = 320, 100  # 5 batches of 64; the test split ends in a partial batch of 36


@pytest.fixture
def small_mnist(monkeypatch):
    load = keras.datasets.mnist.load_data

    def first_samples(*args, **kwargs):
        (x_train, y_train), (x_test, y_test) = load(*args, **kwargs)
        return (x_train[:TRAIN], y_train[:TRAIN]), (x_test[:TEST], y_test[:TEST])

    monkeypatch.setattr(keras.datasets.mnist, "load_data", first_samples)


def test_vanilla_script_runs_and_prints_like_keras(small_mnist, capsys):
    namespace = run_tutorial_script()
    out = capsys.readouterr().out
    assert "Keras MNIST example, running on CPU\n" + TUTORIAL_SUMMARY + "\nTraining\nEpoch 1/3\n" in out
    bar = r" \[={30}\] - \d+s \d+(us|ms|s)/step - loss: \d\.\d{4} - accuracy: \d\.\d{4}\n"
    epochs = re.findall(r"Epoch (\d)/3\n5/5" + bar, out)
    assert [e[0] for e in epochs] == ["1", "2", "3"]
    assert re.search(r"\n2/2" + bar + "$", out)
    history, (loss, accuracy) = namespace["history"], namespace["result"]
    assert sorted(history.history) == ["accuracy", "loss"] and len(history.history["loss"]) == 3
    assert history.history["loss"][2] < history.history["loss"][0]  # it learns, even on 320 images
    probs = namespace["model"].predict(namespace["x_test"], verbose=0)
    y_test = namespace["y_test"]
    assert accuracy == pytest.approx(np.mean(probs.argmax(-1) == y_test.argmax(-1)))
    per_sample = -np.log(np.clip(probs[y_test.astype(bool)].astype(np.float64), 1e-7, 1))
    assert loss == pytest.approx(per_sample.mean(), rel=1e-4)
