"""The shape-only trace of a model's step: its ops recorded from shapes and dtypes, with no numerics.

Lowering needs each op's record (shapes, dtype, params, forward and backward cost), and every op states
those from shapes alone: given a ShapedArray (``autograd.symbolic``) it infers its output instead of computing
it (``Function.infer``). So the step is traced on ShapedArrays of the micro-batch's shapes: the forward and the
loss, with gradients enabled so each op's backward cost is recorded as a real backward would need it, and no
backward run (its costs are the records'). The records equal a real run's op for op (tests/ipu/test_shape_only.py),
so everything downstream, the BSP Engine's cycles, the memory layout, the compile time and the profile, is the
same figure; no weight, moving statistic or random generator is touched. A ResNet-50 micro-batch of 20 is traced
in about a second instead of minutes, and a model built with :func:`~ipu_teach.keras.engine.shape_only_weights`
(too big for the host's memory) can be lowered at all.

A step that needs values (a ``train_step`` of the model's own, a layer that reads its input's numbers) cannot be
traced so: :func:`trace_step` returns None and the lowering runs the step once on the real micro-batch, as before.
"""

from __future__ import annotations

import numpy as np

from ..autograd import Tensor, no_grad, record
from ..autograd.symbolic import ShapedArray, SymbolicValueError
from ..keras.engine import step_overrides
from ..keras.layers.base import input_value_dtype


def placeholder(shape, dtype=np.float32) -> np.ndarray:
    """A read-only array of ``shape`` and ``dtype`` that takes one value's memory (every element is the same
    zero): a micro-batch to size a model with, whatever its size (``ipu.utils.estimate``)."""
    return np.broadcast_to(np.zeros((), dtype), tuple(shape))


def _traced_inputs(x, dtypes=()):
    """The model's inputs as Tensors of ShapedArrays, in the dtypes ``Model.call`` holds numpy inputs in
    (``dtypes``, one per input; float32 for the rest)."""
    if isinstance(x, dict):
        return {name: _traced_inputs(value) for name, value in x.items()}
    if isinstance(x, (list, tuple)):
        return [_traced_inputs(value, dtypes[i : i + 1]) for i, value in enumerate(x)]
    return Tensor(ShapedArray(np.shape(x), dtypes[0] if dtypes else np.float32))


def trace_step(model, mode, x, y):
    """The ops of one step of ``model``'s ``mode`` at the micro-batch of ``x``, traced from shapes (labels ``y``
    are read as they are: a loss takes their dtype); None if the step cannot be traced without values."""
    if step_overrides.overridden(model, mode):
        return None
    inputs = _traced_inputs(x, [input_value_dtype(t) for t in getattr(model, "inputs", None) or ()])
    try:
        with record() as tape:
            if mode == "train":  # gradients on: each op records the backward cost a real backward pays
                model.loss_and_parts(y, model(inputs, training=True))
            else:
                with no_grad():
                    output = model(inputs, training=False)
                    if mode == "test":
                        model.loss_and_parts(y, output)
    except SymbolicValueError:
        return None
    return tape
