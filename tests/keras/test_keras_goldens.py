"""ipu-teach against real Keras (tf-keras), from the same inputs and weights.

The fixtures in ``golden/`` were written by ``tools/make_keras_goldens.py`` in a separate environment
with TensorFlow and tf-keras (see that script for how to make them again); these tests need neither.
"""

import json
import pathlib

import numpy as np
import pytest

import ipu_teach.keras as keras
from ipu_teach.autograd import Tensor

GOLDEN = pathlib.Path(__file__).parent / "golden"


def golden(name) -> dict:
    return json.loads((GOLDEN / f"{name}.json").read_text())


LOSSES = golden("losses")


def _case_id(case):
    logits = "" if case["from_logits"] is None else f", from_logits={case['from_logits']}"
    return f"{case['loss']}({case['labels']}, {case['y_pred']}{logits})"


@pytest.mark.parametrize("case", LOSSES["cases"], ids=_case_id)
def test_loss_functions_give_keras_values_and_gradients(case):
    """Keras' backend formulas (clip, log, normalise...) and TensorFlow's gradients of them, on
    probabilities, on values that are not probabilities (a ReLU's outputs) and on logits."""
    y_true = np.asarray(LOSSES["labels"][case["labels"]])
    y_pred = Tensor(np.asarray(LOSSES["inputs"][case["y_pred"]], np.float32), requires_grad=True)
    function = getattr(keras.losses, case["loss"])
    kwargs = {} if case["from_logits"] is None else {"from_logits": case["from_logits"]}
    per_sample = function(y_true, y_pred, **kwargs)
    np.testing.assert_allclose(per_sample.data, case["per_sample"], rtol=2e-5, atol=1e-6)
    per_sample.backward(np.asarray(LOSSES["upstream"], np.float32))
    np.testing.assert_allclose(y_pred.grad, case["gradient"], rtol=2e-4, atol=1e-6)


@pytest.mark.parametrize("case", LOSSES["objects"], ids=lambda c: f"{c['class']}({c['reduction']})")
def test_loss_objects_weigh_samples_and_reduce_as_keras(case):
    loss = getattr(keras.losses, case["class"])(reduction=case["reduction"])
    y_true = np.asarray(LOSSES["labels"][case["labels"]])
    y_pred = Tensor(np.asarray(LOSSES["inputs"][case["y_pred"]], np.float32))
    value = loss(y_true, y_pred, sample_weight=np.asarray(LOSSES["sample_weight"]))
    np.testing.assert_allclose(value.data, case["value"], rtol=2e-5, atol=1e-6)
