"""``torch.save`` / ``torch.load`` of state dicts, in an npz file of ipu-teach's own, without pickle.

PyTorch pickles what it saves; unpickling runs code chosen by the file, so ipu-teach never does. It saves
what a training script saves (a model's or an optimizer's ``state_dict``, or a dict of them with numbers
and strings: a checkpoint) as numpy arrays in an ``.npz`` (itself a zip) beside a JSON description of the
nesting, written atomically. A real PyTorch checkpoint is recognised and refused with what to do instead.

Example:

>>> import os, tempfile
>>> from ipu_teach import torch
>>> net = torch.nn.Linear(2, 1)
>>> path = os.path.join(tempfile.mkdtemp(), "model.pt")
>>> torch.save({"model": net.state_dict(), "epoch": 3}, path)
>>> loaded = torch.load(path)
>>> loaded["epoch"], bool((loaded["model"]["weight"] == net.weight).all())
(3, True)
"""

import io
import json
import os
import zipfile

import numpy as np

from ..atomic import atomic_write
from .tensor import Tensor

MARKER = "__ipu_teach_torch__"
"""The name of the JSON description inside the npz: how ipu-teach recognises its own files."""


def _describe(value, arrays):
    """A JSON-able description of ``value``; its tensors and arrays go to ``arrays`` under their index."""
    if isinstance(value, Tensor):
        arrays[f"t{len(arrays)}"] = value.array
        return {"tensor": f"t{len(arrays) - 1}"}
    if isinstance(value, np.ndarray):
        arrays[f"t{len(arrays)}"] = value
        return {"ndarray": f"t{len(arrays) - 1}"}
    if isinstance(value, dict):
        if not all(isinstance(k, (str, int)) for k in value):
            raise TypeError("torch.save (ipu-teach): dict keys must be strings or integers")
        return {"dict": [[k, _describe(v, arrays)] for k, v in value.items()]}
    if isinstance(value, (list, tuple)):
        return {"tuple" if isinstance(value, tuple) else "list": [_describe(v, arrays) for v in value]}
    if value is None or isinstance(value, (bool, int, float, str)):
        return {"value": value}
    if isinstance(value, np.generic):
        return {"value": value.item()}
    raise TypeError(
        f"torch.save (ipu-teach) saves tensors, arrays, numbers, strings and dicts or lists of them (a state_dict, a "
        f"checkpoint dict), not {type(value).__name__}: ipu-teach does not pickle objects; save obj.state_dict() "
        "instead"
    )


def _rebuild(description, arrays):
    kind, payload = next(iter(description.items()))
    if kind == "tensor":
        return Tensor(arrays[payload])
    if kind == "ndarray":
        return arrays[payload]
    if kind == "dict":
        return {key: _rebuild(value, arrays) for key, value in payload}
    if kind in ("list", "tuple"):
        items = [_rebuild(value, arrays) for value in payload]
        return tuple(items) if kind == "tuple" else items
    return payload


def save(obj, f, pickle_module=None, pickle_protocol=None, _use_new_zipfile_serialization=True) -> None:
    """Save ``obj`` (see the module docstring) to the path or binary file ``f``."""
    arrays = {}
    description = _describe(obj, arrays)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays, **{MARKER: np.frombuffer(json.dumps(description).encode(), np.uint8)})
    if hasattr(f, "write"):
        f.write(buffer.getvalue())
        return
    with atomic_write(os.fspath(f), "wb") as out:
        out.write(buffer.getvalue())


def load(f, map_location=None, pickle_module=None, weights_only=None, mmap=None, **kwargs):
    """Load what :func:`save` saved. ``map_location`` is accepted and ignored (everything is on the host)."""
    source = f if hasattr(f, "read") else open(os.fspath(f), "rb")  # noqa: SIM115 (closed below)
    try:
        raw = source.read()
    finally:
        if source is not f:
            source.close()
    name = getattr(f, "name", f)
    if not zipfile.is_zipfile(io.BytesIO(raw)):
        raise _not_ours(name, "it is not a zip file: a PyTorch file of the legacy format (a plain pickle)")
    with zipfile.ZipFile(io.BytesIO(raw)) as archive:
        names = archive.namelist()
    if MARKER + ".npy" not in names:
        if any(n.endswith("data.pkl") for n in names):
            raise _not_ours(name, "it is a PyTorch checkpoint (a pickle with tensor data in a zip)")
        raise _not_ours(name, f"it is a zip file without ipu-teach's description ({MARKER})")
    with np.load(io.BytesIO(raw), allow_pickle=False) as stored:
        arrays = {key: stored[key] for key in stored.files}
    description = json.loads(arrays.pop(MARKER).tobytes().decode())
    return _rebuild(description, arrays)


def _not_ours(name, why) -> ValueError:
    return ValueError(
        f"torch.load (ipu-teach) cannot read {name!r}: {why}. ipu-teach reads only files its own torch.save wrote, "
        "because loading a PyTorch file means unpickling it, which can run any code. With real PyTorch, convert "
        "the state dict to plain arrays: `np.savez('weights.npz', **{k: v.numpy() for k, v in "
        "torch.load(path, weights_only=True).items()})`, then here `model.load_state_dict({k: torch.from_numpy(v) "
        "for k, v in np.load('weights.npz').items()})`"
    )
