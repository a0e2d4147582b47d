"""Every Keras layer (each case of ``LAYER_CASES``), called on a Tensor of a ShapedArray (``autograd.symbolic``: a
shape and a dtype, no values), records the same ops, shapes, params and costs as on real data, in training and in
inference, and gives an output of the same shape and dtype: what lets the IPU's lowering trace a model's step from
shapes alone (ipu/shape_only.py)."""

import dataclasses

import pytest
from test_symbolic_build import CASES, sample

from ipu_teach.autograd import Tensor, record
from ipu_teach.autograd.symbolic import ShapedArray, is_symbolic


def _records(tape) -> list:
    return [repr(dataclasses.asdict(r)) for r in tape]  # as text: params may hold arrays


@pytest.mark.parametrize("training", [False, True], ids=["inference", "training"])
@pytest.mark.parametrize("cls, arguments, shape", CASES, ids=[f"{c.__name__}-{i}" for i, (c, _, _) in enumerate(CASES)])
def test_every_layer_records_the_same_from_shapes_alone(cls, arguments, shape, training):
    multi = isinstance(shape, list)
    data = [sample(cls, arguments, s, seed=i) for i, s in enumerate(shape)] if multi else sample(cls, arguments, shape)

    def inputs(make):
        return [make(d) for d in data] if multi else make(data)

    layer = cls(**arguments)
    with record() as real_tape:
        real = layer(inputs(Tensor), training=training)
    with record() as shaped_tape:
        shaped = layer(inputs(lambda d: Tensor(ShapedArray(d.shape, d.dtype))), training=training)
    real, shaped = (real[0], shaped[0]) if isinstance(real, list) else (real, shaped)  # an RNN's with its states
    assert is_symbolic(shaped.data)
    assert (shaped.shape, shaped.dtype) == (real.shape, real.dtype)
    assert _records(shaped_tape) == _records(real_tape)
