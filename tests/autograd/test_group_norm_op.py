"""popnn's group norm as one op (issue 20): its numbers are the composite's, bit for bit, and what the IPU sees is
one GroupNorm costed as popnn lowers it, for torch's GroupNorm (PopART's GroupNormOpx) and Graphcore's Keras
GroupNormalization; Keras' own layer stays the composite TensorFlow runs, op by op."""

import numpy as np
import pytest

import ipu_teach.keras as keras
from ipu_teach import torch
from ipu_teach.autograd import Tensor, ops, precision
from ipu_teach.autograd.cost import OpCost, Reduction, VectorPass
from ipu_teach.autograd.function import record
from ipu_teach.autograd.ops.group_normalization import composite
from ipu_teach.ipu.ipu_tensorflow_addons.keras import layers as ipu_layers

RNG = np.random.default_rng(11)


def _run(fn, arrays, dtype):
    """fn's output and the gradients of its inputs for a seeded upstream gradient, as bytes-exact arrays."""
    tensors = [Tensor(a.astype(dtype), requires_grad=True) for a in arrays]
    out = fn(*tensors)
    out.backward(np.random.default_rng(5).normal(size=out.shape).astype(out.data.dtype))
    return [out.data] + [t.grad for t in tensors]


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize(
    "channels_last, strided, scale, center",
    [(True, False, True, True), (True, True, True, True), (False, False, True, True), (False, False, False, False)],
)
def test_the_op_gives_the_composites_numbers_bit_for_bit(dtype, channels_last, strided, scale, center):
    shape = (4, 5, 3, 12) if channels_last else (4, 12, 5, 3)
    arrays = [RNG.normal(size=shape), RNG.normal(size=12), RNG.normal(size=12)]
    options = dict(groups=3, epsilon=1e-5, channels_last=channels_last, strided=strided)

    def as_op(x, g, b):
        return ops.group_norm(x, g, b, scale=scale, center=center, **options)

    def as_ops(x, g, b):
        row_dtype = np.float32 if channels_last else x.dtype
        kept = (g if scale else None, b if center else None)
        return composite(x, *kept, options["groups"], 1e-5, channels_last, strided, row_dtype)

    op, ops_ = _run(as_op, arrays, dtype), _run(as_ops, arrays, dtype)
    for got, want in zip(op, ops_):
        if want is None:  # a scale or shift left out takes no gradient, as in the composite
            assert got is None or not np.any(got)
            continue
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes()


def test_under_a_mixed_precision_policy_the_op_casts_as_the_composite_did():
    x = RNG.normal(size=(2, 4, 4, 6)).astype(np.float32)
    results = []
    for layer_class in (ipu_layers.GroupNormalization, keras.layers.GroupNormalization):
        keras.mixed_precision.set_global_policy("mixed_float16")
        try:
            layer = layer_class(groups=3, gamma_initializer="ones", beta_initializer="zeros")
            if layer_class is ipu_layers.GroupNormalization:
                layer.strided_grouping = False  # Keras' grouping, to compare with Keras' layer
            results.append(_run(layer, [x], np.float32))
        finally:
            keras.mixed_precision.set_global_policy("float32")
    (op_out, op_grad), (keras_out, keras_grad) = results
    assert op_out.dtype == np.float16 and op_out.tobytes() == keras_out.tobytes()
    assert op_grad.tobytes() == keras_grad.tobytes()
    assert precision.compute_dtype() is None


def _recorded(fn, *arrays):
    with record() as tape:
        fn(*[Tensor(a, requires_grad=True) for a in arrays])
    return [rec.op for rec in tape], tape


def test_torch_and_graphcores_keras_layer_record_one_group_norm_keras_its_composite():
    nchw = RNG.normal(size=(2, 6, 4, 4)).astype(np.float32)
    torch_ops, (rec,) = _recorded(lambda x: torch.nn.GroupNorm(3, 6)(torch.Tensor(x)), nchw)
    assert torch_ops == ["GroupNorm"] and rec.input_shapes == ((2, 6, 4, 4), (6,), (6,))
    nhwc = np.moveaxis(nchw, 1, -1)
    assert _recorded(ipu_layers.GroupNormalization(3), nhwc)[0] == ["GroupNorm"]
    keras_ops = _recorded(keras.layers.GroupNormalization(3), nhwc)[0]
    assert keras_ops == [
        "Reshape",
        "Transpose",
        "Reshape",
        "LayerNorm",
        "Reshape",
        "Transpose",
        "Reshape",
        "Mul",
        "Add",
    ]


def test_its_cost_is_popnns_lowering_statistics_per_sample_and_group():
    """4 samples x 6 channels x 16 positions in 3 groups: 12 statistics (a mean and a 1/std each), 384 elements."""
    _, (rec,) = _recorded(lambda x: torch.nn.GroupNorm(3, 6)(torch.Tensor(x)), RNG.normal(size=(4, 6, 4, 4)))
    n, statistics, channels = 384, 12, 6
    assert rec.forward == OpCost(
        6 * n,
        n * 4,
        n * 4,
        n,
        (),
        (
            Reduction(2 * n, 2 * statistics),  # the sums of x and x^2 (one reduceMany)
            VectorPass("divide", statistics),  # iStdDev
            VectorPass("add", n, statistics),  # whiten: - mean
            VectorPass("add", n, statistics),  # whiten: x 1/std
            VectorPass("add", n, channels),  # x gamma
            VectorPass("add", n, channels),  # + beta
        ),
    )
    reductions = [work for work in rec.backward.vector if isinstance(work, Reduction)]
    assert reductions == [Reduction(2 * n, 2 * statistics), Reduction(2 * n, 2 * channels)]
