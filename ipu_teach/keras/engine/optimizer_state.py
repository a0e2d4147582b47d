"""An optimizer's state in a Keras HDF5 model file (``optimizer_weights``), by Keras' variable names.

Keras 2.6's optimizers (``optimizer_v2``, tf-keras' ``optimizers.legacy``) name their step count
``Adam/iter:0`` and a weight's slot ``Adam/dense/kernel/m:0``, slot kind by slot kind; tf-keras' newer
optimizers name them ``iteration:0`` and ``Adam/m/dense/kernel:0``. Files are written with the first
names (ipu-teach's optimizers are Keras 2.6's) and read with either. State that does not fit the model
is left out with Keras' warning, and training starts from a fresh optimizer, as Keras does.
"""

from __future__ import annotations

import numpy as np

from . import hdf5_format

SLOT_NAMES = {
    "SGD": ("momentum",),
    "Adam": ("m", "v"),
    "RMSprop": ("rms", "momentum", "mg"),
    "Adagrad": ("accumulator",),
}
"""ipu-teach's slot index -> Keras 2.6's slot name, per optimizer class."""
NEW_SLOT_NAMES = {"SGD": ("m",), "RMSprop": ("velocity", "momentum", "average_gradient")}
"""tf-keras' newer optimizers' names, where they differ."""

_FRESH = (
    "WARNING:tensorflow:Error in loading the saved optimizer state. As a result, your model is starting with "
    "a freshly initialized optimizer."
)


def _variable(weight) -> str:
    return weight.name.removesuffix(":0")


def write(f, model) -> None:
    """``optimizer_weights`` as Keras 2.6 writes it: nothing before the first step, as its slots do not exist yet."""
    optimizer = model.optimizer
    slot_names = SLOT_NAMES.get(type(optimizer).__name__)
    if slot_names is None or not (optimizer.iterations or optimizer._slots):
        return
    weights = model.trainable_weights
    used = sorted({index for (_, index) in optimizer._slots})
    names = [f"{optimizer.name}/iter:0"]
    values = [np.array(optimizer.iterations, dtype=np.int64)]
    for index in used:
        for weight in weights:
            names.append(f"{optimizer.name}/{_variable(weight)}/{slot_names[index]}:0")
            values.append(optimizer._slots.get((id(weight), index), np.zeros_like(weight.data)))
    group = f.create_group("optimizer_weights")
    hdf5_format.write_names(group, "weight_names", names)
    for name, value in zip(names, values):
        group.create_dataset(name, data=value)


def _by_kind(names, optimizer) -> dict | None:
    """The file's slot names grouped by slot index, in file order (Keras restores them by order), from the
    style the step count's name shows; None if a name is no slot of this optimizer's."""
    kind = type(optimizer).__name__
    new_style = "iteration:0" in names
    slot_names = NEW_SLOT_NAMES.get(kind, SLOT_NAMES[kind]) if new_style else SLOT_NAMES[kind]
    grouped = {}
    for name in names:
        if name in ("iteration:0", f"{optimizer.name}/iter:0"):
            continue
        index = next(
            (
                i
                for i, slot in enumerate(slot_names)
                if (name.startswith(f"{optimizer.name}/{slot}/") if new_style else name.endswith(f"/{slot}:0"))
                and name.startswith(f"{optimizer.name}/")
            ),
            None,
        )
        if index is None:
            return None
        grouped.setdefault(index, []).append(name)
    return grouped


def read(group, model, label) -> None:
    """Restore the step count and slots of ``optimizer_weights`` (each slot kind in the order of the model's
    trainable weights, as Keras' ``set_weights``), each checked before any is kept."""
    optimizer, weights = model.optimizer, model.trainable_weights
    if type(optimizer).__name__ not in SLOT_NAMES:
        print(_FRESH)
        return
    names = hdf5_format.read_names(group, "weight_names", label)
    steps = [n for n in names if n in ("iteration:0", f"{optimizer.name}/iter:0")]
    grouped = _by_kind(names, optimizer)
    if len(steps) != 1 or grouped is None or any(len(kind) != len(weights) for kind in grouped.values()):
        print(_FRESH)
        return
    slots = {name: (weight, index) for index, kind in grouped.items() for name, weight in zip(kind, weights)}
    found = {name: hdf5_format.dataset(group, name, label) for name in names}
    for name, dataset in found.items():
        hdf5_format.check_real(dataset, label)
        wanted = () if name in steps else tuple(slots[name][0].shape)
        if dataset.shape != wanted or (name in steps and dataset.dtype.kind not in "iu"):
            print(_FRESH)
            return
    iterations = int(found[steps[0]][()])
    if iterations < 0:
        print(_FRESH)
        return
    arrays = {name: found[name][()] for name in slots}
    optimizer.iterations = iterations
    for name, array in arrays.items():
        weight, index = slots[name]
        optimizer._slots[(id(weight), index)] = np.asarray(array, dtype=weight.dtype)
