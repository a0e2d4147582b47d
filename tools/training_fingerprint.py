"""The numerics engine's fingerprint: every weight, loss and prediction of a few short trainings, to tell whether a
change to the engine (a speed-up, issue 27) changed any number the course prints. It must not: the gradient checks,
the Keras golden trajectories and the notebooks' outputs are compared exactly.

``models`` trains the tutorial's CNN, a CNN with strides, 'same' padding, average and overlapping max pooling, tanh
and sigmoid, and a Conv1D model, with SGD and Adam, without and with portable numerics, and the tutorial's CNN inside
IPUStrategy. ``notebook01`` is notebook 01's training (8,064 samples, two epochs, portable numerics as the notebooks
run, on the CPU and inside IPUStrategy, then its evaluation). Two fingerprints are compared byte for byte, so even a
zero's sign counts. Not a test (it takes a minute or two). Run, before and after a change:
    PYTHONPATH=. python tools/training_fingerprint.py before.npz [--suite models|notebook01]
    PYTHONPATH=. python tools/training_fingerprint.py --compare before.npz after.npz
"""

import argparse
import sys

import numpy as np

from ipu_teach.atomic import atomic_write


def differences(first: dict, second: dict) -> list:
    """Names of the arrays that differ in shape, type or any byte, or that only one of the two has."""
    names = sorted(set(first) | set(second))
    return [
        name
        for name in names
        if name not in first
        or name not in second
        or first[name].dtype != second[name].dtype
        or first[name].shape != second[name].shape
        or first[name].tobytes() != second[name].tobytes()
    ]


def _mnist(samples: int, tests: int):
    from ipu_teach import keras

    (x, y), (x_test, y_test) = keras.datasets.mnist.load_data()
    x, x_test = (np.expand_dims(a.astype("float32") / 255, -1) for a in (x[:samples], x_test[:tests]))
    return (x, keras.utils.to_categorical(y[:samples], 10)), (x_test, keras.utils.to_categorical(y_test[:tests], 10))


def _strided_model():
    from ipu_teach import keras

    inputs = keras.Input((28, 28, 1))
    x = keras.layers.Conv2D(8, 3, strides=2, padding="same", activation="relu")(inputs)
    x = keras.layers.AveragePooling2D(2, padding="same")(x)
    x = keras.layers.Conv2D(16, 3, padding="same", activation="tanh")(x)
    x = keras.layers.MaxPooling2D(3, strides=2, padding="same")(x)
    x = keras.layers.Conv2D(16, 2, activation="relu")(x)
    x = keras.layers.MaxPooling2D(2, padding="same")(x)
    x = keras.layers.Dense(32, activation="sigmoid")(keras.layers.Flatten()(x))
    return inputs, keras.layers.Dense(10, activation="softmax")(x)


def _conv1d_model():
    from ipu_teach import keras

    inputs = keras.Input((28, 28))
    x = keras.layers.Flatten()(keras.layers.Conv1D(16, 3, activation="relu")(inputs))
    return inputs, keras.layers.Dense(10, activation="softmax")(x)


def _train(key, model_fn, optimizer, train, test, epochs, strategy=None) -> dict:
    """``key``'s weights, history, evaluation and predictions after ``epochs`` epochs from seed 0."""
    import contextlib

    from ipu_teach import keras

    keras.utils.set_random_seed(0)
    with strategy.scope() if strategy is not None else contextlib.nullcontext():
        model = keras.Model(*model_fn())
        model.compile(optimizer, "categorical_crossentropy", metrics=["accuracy"])
        history = model.fit(*train, epochs=epochs, batch_size=64, verbose=0)
        found = {f"{key}/evaluate": np.array(model.evaluate(*test, batch_size=64, verbose=0))}
        found[f"{key}/predict"] = model.predict(test[0], batch_size=64, verbose=0)
    found.update({f"{key}/history/{name}": np.array(values) for name, values in history.history.items()})
    found.update({f"{key}/weight{index}": weight for index, weight in enumerate(model.get_weights())})
    return found


def _strategy():
    from ipu_teach import ipu

    config = ipu.config.IPUConfig()
    config.auto_select_ipus = 1
    config.configure_ipu_system()
    return ipu.ipu_strategy.IPUStrategy()


def fingerprint(suite: str, samples: int = 1280) -> dict:
    """The arrays of ``suite`` ("models" or "notebook01"); ``samples`` training samples for "models"."""
    from ipu_teach.autograd.ops import portable
    from ipu_teach.examples import tutorial_model_fn

    was = portable.portable_numerics()
    found = {}
    try:
        if suite == "notebook01":
            portable.set_portable_numerics(True)
            train, test = _mnist(8_064, 2_560)
            for where, strategy in (("cpu", None), ("ipu", _strategy())):
                found.update(_train(f"notebook01/{where}", tutorial_model_fn, "sgd", train, test, 2, strategy))
            return found
        train, test = _mnist(samples, 256)
        flat = ((train[0][..., 0], train[1]), (test[0][..., 0], test[1]))
        models = (
            ("tutorial", tutorial_model_fn, False),
            ("strided", _strided_model, False),
            ("conv1d", _conv1d_model, True),
        )
        for portable_numerics in (False, True):
            portable.set_portable_numerics(portable_numerics)
            for name, model_fn, sequence in models:
                for optimizer in ("sgd", "adam"):
                    key = f"{name}/{optimizer}/portable={portable_numerics}"
                    data = flat if sequence else (train, test)
                    found.update(_train(key, model_fn, optimizer, *data, 2))
            key = f"tutorial/ipu/portable={portable_numerics}"
            found.update(_train(key, tutorial_model_fn, "sgd", train, test, 2, _strategy()))
        return found
    finally:
        portable.set_portable_numerics(was)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", nargs="?", help="the .npz to write the fingerprint to")
    parser.add_argument("--suite", choices=("models", "notebook01"), default="models")
    parser.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"), help="two fingerprints to compare")
    args = parser.parse_args(argv)
    if args.compare:
        first, second = (dict(np.load(path, allow_pickle=False)) for path in args.compare)
        changed = differences(first, second)
        print(f"identical: {len(first)} arrays, byte for byte" if not changed else f"differ: {', '.join(changed)}")
        return 1 if changed else 0
    if not args.output:
        parser.error("give the .npz to write, or --compare BEFORE AFTER")
    found = fingerprint(args.suite)
    with atomic_write(args.output, "wb") as stream:
        np.savez(stream, **found)
    print(f"{len(found)} arrays written to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
