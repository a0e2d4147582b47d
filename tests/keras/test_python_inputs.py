"""Python generators and keras.utils.Sequence in fit / evaluate / predict follow Keras' rules."""

import numpy as np
import pytest

import ipu_teach.keras as keras
from ipu_teach import ipu
from ipu_teach.data import Dataset

X = np.random.default_rng(0).uniform(size=(64, 4)).astype(np.float32)
Y = (X.sum(axis=1) > 2).astype(np.int64)


def _model():
    model = keras.Sequential([keras.layers.Dense(2, input_shape=(4,))])
    model.compile("sgd", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def _batches(served=None, forever=False):
    while True:
        for start in range(0, 64, 16):
            if served is not None:
                served.append(start)
            yield X[start : start + 16], Y[start : start + 16]
        if not forever:
            return


class _Batches(keras.utils.Sequence):
    def __init__(self):
        self.visited, self.epochs_ended = [], 0

    def __len__(self):
        return 4

    def __getitem__(self, index):
        self.visited.append(index)
        return X[index * 16 : (index + 1) * 16], Y[index * 16 : (index + 1) * 16]

    def on_epoch_end(self):
        self.epochs_ended += 1


def test_a_finite_generator_trains_one_epoch_as_on_arrays_then_runs_out():
    on_generator, on_arrays = _model(), _model()
    on_arrays.set_weights(on_generator.get_weights())
    with pytest.warns(UserWarning, match="Your input ran out of data"):
        history = on_generator.fit(_batches(), epochs=3, verbose=0)
    assert len(history.history["loss"]) == 1
    on_arrays.fit(X, Y, batch_size=16, epochs=1, shuffle=False, verbose=0)
    for a, b in zip(on_generator.get_weights(), on_arrays.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_with_steps_per_epoch_epochs_continue_the_generator():
    served = []
    _model().fit(_batches(served, forever=True), steps_per_epoch=3, epochs=2, verbose=0)
    assert served == [0, 16, 32, 48, 0, 16]


def test_a_sequence_is_reshuffled_each_epoch_and_told_when_one_ends():
    sequence = _Batches()
    _model().fit(sequence, epochs=3, verbose=0)
    assert sequence.visited[0] == 0  # batch 0 is read first, to check the data against the model
    epochs = [sequence.visited[i : i + 4] for i in range(1, 13, 4)]
    assert all(sorted(e) == [0, 1, 2, 3] for e in epochs) and len({tuple(e) for e in epochs}) > 1
    assert sequence.epochs_ended == 3
    sequence.visited.clear()
    _model().fit(sequence, epochs=1, shuffle=False, verbose=0)
    assert sequence.visited == [0, 0, 1, 2, 3]


def test_evaluate_and_predict_take_them_too():
    model = _model()
    assert model.predict(_batches(), verbose=0).shape == (64, 2)
    assert model.evaluate(_Batches(), verbose=0) == pytest.approx(model.evaluate(X, Y, batch_size=16, verbose=0))


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"y": Y}, "`y` argument is not supported when using python generator"),
        ({"validation_split": 0.2}, "validation_split is only supported for numpy arrays"),
    ],
)
def test_keras_refuses_what_a_generator_cannot_take(kwargs, message):
    with pytest.raises(ValueError, match=message):
        _model().fit(_batches(), verbose=0, **kwargs)


@pytest.mark.parametrize(
    "data, message",
    [
        (lambda: Dataset.from_tensor_slices((X, Y)).batch(16), "when using dataset as input"),
        (_batches, "when using python generator as input"),
        (_Batches, "when using `keras.utils.Sequence` as input"),
    ],
    ids=["Dataset", "generator", "Sequence"],
)
def test_a_sample_weight_beside_batches_that_bring_their_own_is_refused_as_keras_does(data, message):
    """tf-keras' DatasetAdapter, GeneratorDataAdapter and KerasSequenceAdapter refuse it rather than drop it."""
    model = _model()
    with pytest.raises(ValueError, match=r"`sample_weight` argument is not supported " + message):
        model.fit(data(), sample_weight=np.ones(len(X)), verbose=0)
    assert model.optimizer.iterations == 0


@pytest.mark.parametrize("data", [_batches, _Batches], ids=["generator", "Sequence"])
def test_a_batch_size_beside_a_generator_or_sequence_is_ignored_as_keras_2_6_does(data):
    """Keras 2.6's GeneratorDataAdapter and KerasSequenceAdapter check y and sample_weight, not batch_size
    (tf-keras 2.21 too): the batches are the input's own."""
    model = _model()
    model.fit(data(), batch_size=8, epochs=1, verbose=0)
    assert model.optimizer.iterations == len(X) // 16


def test_the_ipu_refuses_python_inputs_as_graphcores_keras_does(monkeypatch):
    monkeypatch.delenv("TF_POPLAR_FLAGS", raising=False)
    config = ipu.config.IPUConfig()
    config.auto_select_ipus = 1
    config.configure_ipu_system()
    try:
        with ipu.ipu_strategy.IPUStrategy().scope():
            model = _model()
            for data in (_batches(), _Batches()):
                with pytest.raises(
                    ValueError,
                    match="not compatible with the IPU's requirement to know the data "
                    r"shape ahead of time. Please use `tf.data.Dataset.from_generator",
                ):
                    model.fit(data, verbose=0)
    finally:
        ipu.system.reset()
