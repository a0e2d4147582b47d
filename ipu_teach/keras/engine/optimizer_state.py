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


# ----- a ``.keras`` file's ``optimizer/vars`` --------------------------------------------------------
VARIABLE_ORDER = {
    "SGD": ((0,),),
    "Adam": ((0, 1),),
    "RMSprop": ((0,), (1,), (2,)),
    "Adagrad": ((0,),),
    "Adadelta": ((0, 1),),
    "Adamax": ((0, 1),),
    "Nadam": ((0, 1),),
    "Ftrl": ((0, 1),),
}
"""The order of tf-keras' newer optimizers' variables after the step count (their ``build``): per run of
ipu-teach slot indices, those slots of each weight in turn (Adam: m and v of the first weight, then of the
second...), a run left out where the optimizer keeps no such slot (RMSprop's momentum, its centred mean)."""


def _file_slots(optimizer) -> set:
    """The slot indices whose variables a newer tf-keras optimizer of this configuration keeps (SGD its
    momentum even at 0, RMSprop its momentum and centred mean only when it uses them)."""
    kind = type(optimizer).__name__
    if kind == "SGD":
        return {0}
    if kind == "RMSprop":
        return {0} | ({1} if optimizer.momentum > 0 else set()) | ({2} if optimizer.centered else set())
    return set(range(optimizer.slots_per_weight))


def _variable_order(optimizer, weights) -> list:
    """(weight, slot index) of each variable after the step count, in the newer optimizers' order."""
    kept = _file_slots(optimizer)
    runs = [[index for index in run if index in kept] for run in VARIABLE_ORDER[type(optimizer).__name__]]
    return [(weight, index) for run in runs for weight in weights for index in run]


def write_variables(store, model) -> None:
    """``optimizer/vars`` as a newer tf-keras optimizer saves its own: ``0`` the step count, then its slots
    (zeros for one not made yet); nothing before the first step. Keras itself saves no state for its legacy
    optimizers, the kind ipu-teach's are and its ``.keras`` files declare, and reads none back: this is for
    ipu-teach's own loading, so training resumes where it stopped."""
    optimizer = model.optimizer
    if type(optimizer).__name__ not in VARIABLE_ORDER or not (optimizer.iterations or optimizer._slots):
        return
    group = store.create_group("optimizer/vars")
    group.create_dataset("0", data=np.array(optimizer.iterations, dtype=np.int64))
    for k, (weight, index) in enumerate(_variable_order(optimizer, model.trainable_weights), start=1):
        group.create_dataset(str(k), data=optimizer._slots.get((id(weight), index), np.zeros_like(weight.data)))


def read_variables(group, model, label) -> None:
    """Restore the step count and slots of a ``.keras`` file's ``optimizer/vars`` (tf-keras' newer optimizers
    write them; ipu-teach's files too), each checked before any is kept; one that does not fit is skipped with
    Keras' warning, as tf-keras ``load_own_variables`` does, and training starts from a fresh optimizer."""
    optimizer = model.optimizer
    kind = type(optimizer).__name__
    if kind not in VARIABLE_ORDER:
        print(_FRESH)
        return
    order = _variable_order(optimizer, model.trainable_weights)
    stored = sorted(group.keys(), key=lambda n: (len(n), n))
    if stored != [str(k) for k in range(len(order) + 1)]:
        print(
            f"WARNING:tensorflow:Skipping variable loading for optimizer '{optimizer.name}', because it has "
            f"{len(order) + 1} variables whereas the saved optimizer has {len(stored)} variables."
        )
        return
    found = [hdf5_format.dataset(group, name, label) for name in stored]
    for dataset, wanted in zip(found, [()] + [tuple(weight.shape) for weight, _ in order]):
        hdf5_format.check_real(dataset, label)
        if dataset.shape != wanted:
            print(_FRESH)
            return
    iterations = found[0][()]
    if found[0].dtype.kind not in "iuf" or iterations < 0 or iterations != int(iterations):
        print(_FRESH)
        return
    kept = _used_slots(optimizer)
    arrays = [dataset[()] for dataset in found[1:]]
    optimizer.iterations = int(iterations)
    for (weight, index), array in zip(order, arrays):
        if index in kept:
            optimizer._slots[(id(weight), index)] = np.asarray(array, dtype=weight.dtype)


def _used_slots(optimizer) -> set:
    """The slot indices ipu-teach's optimizer computes with (SGD's momentum only when it has one)."""
    if type(optimizer).__name__ == "SGD":
        return {0} if optimizer.momentum else set()
    return _file_slots(optimizer)
