"""``record()`` and the costs ops state for the IPU model, against hand-counted FLOPs, bytes and grains."""

import numpy as np
import pytest
from autograd_cases import CASE_IDS, CASES, every_op

from ipu_teach.autograd import OpCost, Tensor, no_grad, ops, record, scope
from ipu_teach.autograd.cost import MatrixProduct, Reduction, VectorPass
from ipu_teach.autograd.ops import elementwise_losses
from ipu_teach.autograd.ops.gelu import GELUOp

F32 = 4


def _one_record(fn, *inputs):
    with record() as tape:
        fn(*inputs)
    assert len(tape) == 1
    return tape[0]


def test_matmul_cost_is_2mkn():
    m, k, n = 3, 4, 5
    rec = _one_record(ops.MatMulOp.apply, np.ones((m, k), np.float32), np.ones((k, n), np.float32))
    assert rec.forward == OpCost(
        flops=2 * m * k * n,
        bytes_in=(m * k + k * n) * F32,
        bytes_out=m * n * F32,
        grains=m * n,
        products=(MatrixProduct(m, k, n, k, left_laid_out=True, right_laid_out=True),),  # the step's data, both
    )


def test_matmul_backward_is_the_two_transposed_products():
    m, k, n = 3, 4, 5
    rec = _one_record(
        ops.MatMulOp.apply,
        Tensor(np.ones((m, k), np.float32), requires_grad=True),
        Tensor(np.ones((k, n), np.float32), requires_grad=True),
    )
    # grad @ w.T and x.T @ grad: the transposed views are regrouped before the products
    assert rec.backward.products == (
        MatrixProduct(m, n, k, n, right_transposed=True),
        MatrixProduct(k, m, n, m, left_transposed=True),
    )
    assert rec.backward.flops == 2 * (2 * m * k * n) and rec.backward.vector_flops == 0


def test_matmul_cost_counts_leading_axes_as_rows():
    rec = _one_record(ops.MatMulOp.apply, np.ones((2, 3, 4), np.float32), np.ones((4, 5), np.float32))
    assert rec.forward.flops == 2 * (2 * 3) * 4 * 5


@pytest.mark.parametrize(
    "strides, padding, out_hw", [((1, 1), "valid", (4, 4)), ((2, 2), "same", (3, 3)), ((1, 2), "same", (6, 3))]
)
def test_conv2d_cost_is_2_n_ho_wo_cout_kh_kw_cin(strides, padding, out_hw):
    n, h, w, cin, kh, kw, cout = 2, 6, 6, 3, 3, 3, 4
    x, kernel, bias = (
        np.ones((n, h, w, cin), np.float32),
        np.ones((kh, kw, cin, cout), np.float32),
        np.zeros(cout, np.float32),
    )
    rec = _one_record(lambda *a: ops.Conv2DOp.apply(*a, strides=strides, padding=padding), x, kernel, bias)
    ho, wo = out_hw
    assert rec.output_shape == (n, ho, wo, cout)
    outputs = n * ho * wo * cout
    product = MatrixProduct(n * ho * wo, kh * kw * cin, cout, cin, "conv", kh * kw, True, True)  # data, both
    assert rec.forward == OpCost(
        flops=2 * n * ho * wo * cout * kh * kw * cin + outputs,
        bytes_in=(x.size + kernel.size + bias.size) * F32,
        bytes_out=outputs * F32,
        grains=outputs,
        products=(product,),
        vector=(VectorPass("add", outputs, cout, bias=True),),  # poplin's addBias, the bias laid out for it
    )
    assert rec.forward.vector_flops == outputs  # the bias add runs on the vector units


def test_conv2d_backward_of_a_first_layer_has_no_input_gradient():
    n, h, w, cin, k, cout = 2, 6, 6, 1, 3, 4
    args = (
        np.ones((n, h, w, cin), np.float32),
        Tensor(np.ones((k, k, cin, cout), np.float32), requires_grad=True),
        Tensor(np.zeros(cout, np.float32), requires_grad=True),
    )
    rec = _one_record(ops.Conv2DOp.apply, *args)
    positions = n * 4 * 4
    windows_transposed = MatrixProduct(k * k * cin, positions, cout, positions, "conv", k * k, left_transposed=True)
    assert rec.backward.products == (windows_transposed,)
    assert rec.backward.vector_flops == positions * cout  # the bias gradient's reduction
    assert rec.backward.vector == (Reduction(positions * cout, cout),)


def test_pool_cost_is_one_flop_per_window_cell():
    rec = _one_record(
        lambda x: ops.MaxPool2DOp.apply(x, pool_size=(3, 2), strides=(1, 1)), np.ones((2, 5, 4, 3), np.float32)
    )
    outputs = 2 * 3 * 3 * 3
    inputs = 2 * 5 * 4 * 3  # received in popnn's pooling layout before the pass
    window_pass = (VectorPass("add", outputs * 6, gathered=inputs),)
    assert rec.forward == OpCost(outputs * 6, inputs * F32, outputs * F32, outputs, (), window_pass)


def test_elementwise_cost_is_one_flop_per_output():
    rec = _one_record(ops.AddOp.apply, np.ones((3, 4), np.float32), np.ones(4, np.float32))
    assert rec.forward == OpCost(12, (12 + 4) * F32, 12 * F32, 12, (), (VectorPass("add", 12, 4),))


def test_a_vector_pass_names_a_codelet_the_ipu_model_prices():
    with pytest.raises(ValueError, match="VectorPass: no vector codelet 'sine': use one of cast, add, scaled_add"):
        VectorPass("sine", 8)


def test_a_broadcast_inputs_gradient_is_a_reduction():
    """numpy broadcast the bias over the rows: its gradient sums them (a Dense bias gradient); the other
    input's gradient is the incoming one, with no pass of its own."""
    rec = _one_record(
        ops.AddOp.apply, Tensor(np.ones((3, 4), np.float32), requires_grad=True), Tensor(np.ones(4), requires_grad=True)
    )
    assert rec.backward.vector == (Reduction(12, 4),)
    product = _one_record(ops.MulOp.apply, Tensor(np.ones((3, 4), np.float32), requires_grad=True), np.ones(4))
    assert product.backward.vector == (VectorPass("add", 12),)  # the same shape: a pass, nothing to reduce


def test_reductions_and_their_gradients():
    """A mean is a reduction (its scale fused into it); its gradient a broadcast pass back over the input."""
    rec = _one_record(lambda x: ops.MeanOp.apply(x, axis=0), Tensor(np.ones((8, 3), np.float32), requires_grad=True))
    assert rec.forward.vector == (Reduction(24, 3),)
    assert rec.backward.vector == (VectorPass("add", 24, 3),)


def test_softmax_is_popnns_five_steps():
    rec = _one_record(ops.SoftmaxOp.apply, np.ones((6, 10), np.float32))
    assert rec.forward.vector == (
        Reduction(60, 6),
        VectorPass("add", 60, 6),
        VectorPass("exp", 60),
        Reduction(60, 6),
        VectorPass("divide", 60, 6),
    )


@pytest.mark.parametrize("training, statistics", [(True, (Reduction(2 * 24, 2 * 3),)), (False, ())])
def test_batch_norm_reduces_its_statistics_only_in_training(training, statistics):
    """In training the batch's sums of x and x^2 per channel (one reduceMany), then four per-channel passes;
    in inference the moving statistics are given."""
    channel = np.ones(3, np.float32)
    rec = _one_record(
        lambda x: ops.BatchNormOp.apply(x, channel, channel, channel, channel, training=training),
        np.ones((8, 3), np.float32),
    )
    assert rec.forward.vector == statistics + (VectorPass("add", 24, 3),) * 4


def test_softmax_splits_into_one_grain_per_row():
    rec = _one_record(ops.SoftmaxOp.apply, np.ones((6, 10), np.float32))
    assert rec.forward.grains == 6 and rec.forward.flops == 4 * 60


@pytest.mark.parametrize("approximate, forward, backward", [(False, 5, 11), (True, 9, 13)])
def test_gelu_runs_on_the_vector_units_at_its_stated_flops(approximate, forward, backward):
    rec = _one_record(
        lambda x: GELUOp.apply(x, approximate=approximate), Tensor(np.ones((6, 10), np.float32), requires_grad=True)
    )
    gelu = (VectorPass("gelu", 60),)  # popnn's GELU non-linearity and its gradient, one pass each
    assert rec.forward == OpCost(forward * 60, 60 * F32, 60 * F32, 60, (), gelu) and rec.forward.products == ()
    assert rec.backward == OpCost(backward * 60, 60 * F32, 60 * F32, 60, (), gelu)


@pytest.mark.parametrize(
    "approximate, expected",
    [
        (False, [-0.00404951, -0.15865529, 0.0, 0.8413447, 2.9959507]),
        (True, [-0.00363752, -0.15880796, 0.0, 0.841192, 2.9963627]),
    ],
)
def test_gelu_gives_keras_documented_values(approximate, expected):
    """The examples of Keras' ``activations.gelu`` docstring, exact (erf) and tanh-approximated. At -3 Keras
    prints -0.00404951, TensorFlow's float32 erf being 2e-7 off: -3 * Phi(-3) is -0.00404969."""
    y = GELUOp.apply(np.array([-3, -1, 0, 1, 3], np.float32), approximate=approximate)
    assert y.dtype == np.float32
    np.testing.assert_allclose(y.data, expected, rtol=1e-6, atol=2e-7)


def test_reshape_is_free():
    assert _one_record(lambda x: ops.ReshapeOp.apply(x, shape=(-1,)), np.ones((2, 3))).forward == OpCost(0, 0, 0, 1)


def test_itemsize_follows_the_dtype():
    rec = _one_record(ops.AddOp.apply, np.ones(3), np.ones(3))
    assert rec.itemsize == 8 and rec.forward.bytes_out == 3 * 8


def test_backward_cost_scales_with_the_inputs_that_need_gradients():
    """Conv2D's backward has one product per gradient wanted (kernel, input)."""
    x = np.ones((1, 5, 5, 2), np.float32)
    kernel, bias = Tensor(np.ones((3, 3, 2, 4), np.float32), requires_grad=True), np.zeros(4, np.float32)
    first_layer = _one_record(ops.Conv2DOp.apply, x, kernel, bias)  # the image needs no gradient
    inner_layer = _one_record(ops.Conv2DOp.apply, Tensor(x, requires_grad=True), kernel, bias)
    products = sum(p.flops for p in first_layer.forward.products)
    assert sum(p.flops for p in first_layer.backward.products) == products  # bias needs no gradient here
    transposed = 2 * (5 * 5) * (3 * 3 * 4) * 2  # the input gradient: a convolution over every input position
    assert sum(p.flops for p in inner_layer.backward.products) == products + transposed
    matmul = _one_record(
        ops.MatMulOp.apply, Tensor(np.ones((2, 3)), requires_grad=True), Tensor(np.ones((3, 4)), requires_grad=True)
    )
    assert matmul.backward.flops == 2 * matmul.forward.flops


def test_record_notes_every_op_in_order_with_scope_shapes_and_params():
    x = Tensor(np.ones((2, 4, 4, 1), np.float32))
    kernel = Tensor(np.ones((3, 3, 1, 2), np.float32), requires_grad=True)
    with record() as tape:
        with scope("conv2d"):
            y = ops.ReLUOp.apply(ops.Conv2DOp.apply(x, kernel, np.zeros(2, np.float32), padding="same"))
        with scope("max_pooling2d"):
            y = ops.MaxPool2DOp.apply(y, pool_size=(2, 2))
        y.sum()
    assert [r.op for r in tape] == ["Conv2D", "ReLU", "MaxPool2D", "Sum"]
    assert [r.scope for r in tape] == ["conv2d", "conv2d", "max_pooling2d", ""]
    assert tape[0].input_shapes == ((2, 4, 4, 1), (3, 3, 1, 2), (2,)) and tape[0].output_shape == (2, 4, 4, 2)
    assert tape[0].params == {"padding": "same"}
    assert tape[2].params == {"pool_size": (2, 2)} and tape[2].output_shape == (2, 2, 2, 2)


def test_record_sees_only_its_block_and_nested_tapes_both_record():
    x = np.ones(3, np.float32)
    ops.NegOp.apply(x)
    with record() as outer:
        ops.NegOp.apply(x)
        with record() as inner:
            ops.AbsOp.apply(x)
    ops.NegOp.apply(x)
    assert [r.op for r in outer] == ["Neg", "Abs"] and [r.op for r in inner] == ["Abs"]


def test_record_works_under_no_grad_and_marks_no_gradient_work():
    w = Tensor(np.ones((3, 2), np.float32), requires_grad=True)
    with no_grad(), record() as tape:
        ops.MatMulOp.apply(np.ones((4, 3), np.float32), w)
    assert tape[0].op == "MatMul" and tape[0].backward.flops == tape[0].forward.flops  # max(1, 0) passes


@pytest.mark.parametrize("name, fn, inputs, wrt", CASES, ids=CASE_IDS)
def test_every_op_states_a_consistent_cost(name, fn, inputs, wrt):
    tensors = [Tensor(a, requires_grad=i in wrt) for i, a in enumerate(inputs)]
    with record() as tape:
        out = fn(*tensors)
    rec = tape[-1]
    assert rec.output_shape == out.shape and rec.itemsize == F32
    cost = rec.forward
    assert cost.grains >= 1 and cost.flops >= 0
    if (
        every_op()[rec.op].__module__ == elementwise_losses.__name__
    ):  # the losses compute their derivative in the forward pass
        assert rec.backward.flops >= inputs[0].size  # and the backward scales it: one FLOP per prediction
    else:
        assert rec.backward.flops >= cost.flops
    if rec.op not in ("Reshape", "Slice", "StridedSlice", "Concatenate", "Reverse", "CaptureGradient"):  # a view
        assert cost.bytes_out == max(1, out.data.size) * F32
        assert cost.bytes_in >= inputs[0].size * F32
        assert cost.flops >= out.data.size
        assert cost.grains <= max(1, out.data.size)


@pytest.mark.parametrize(
    "fn, shapes",
    [
        (lambda x: ops.SliceOp.apply(x, axis=0, start=1, stop=2), [(3, 4)]),
        (lambda a, b: ops.ConcatenateOp.apply(a, b, axis=1), [(3, 4), (3, 2)]),
        (lambda x: ops.ReverseOp.apply(x, axis=1), [(3, 4)]),
    ],
)
def test_slice_and_concatenate_are_free_views(fn, shapes):
    assert _one_record(fn, *[np.ones(s, np.float32) for s in shapes]).forward == OpCost(0, 0, 0, 1)


@pytest.mark.parametrize(
    "fn, out_shape",
    [
        (lambda x: ops.TransposeOp.apply(x, perm=(0, 2, 1)), (2, 4, 3)),
        (lambda x: ops.PadOp.apply(x, pads=((0, 0), (1, 1), (2, 0))), (2, 5, 6)),
    ],
)
def test_transpose_and_pad_are_copies_one_flop_per_output(fn, out_shape):
    n = int(np.prod(out_shape))
    cost = _one_record(fn, np.ones((2, 3, 4), np.float32)).forward
    assert cost.flops == n and (cost.bytes_in, cost.bytes_out, cost.grains) == (24 * F32, n * F32, n)
    assert len(cost.vector) == 1 and cost.vector[0].elements == n and not cost.vector[0].broadcast


def test_gather_moves_one_row_per_index():
    rec = _one_record(ops.GatherOp.apply, np.ones((10, 4), np.float32), np.zeros((2, 3), np.int64))
    assert rec.forward == OpCost(24, (6 + 24) * F32, 24 * F32, 6) and rec.backward == rec.forward


def test_layer_norm_reduces_each_rows_statistics():
    rec = _one_record(
        ops.LayerNormOp.apply, np.ones((2, 5), np.float32), np.ones(5, np.float32), np.ones(5, np.float32)
    )
    assert rec.forward == OpCost(60, 40, 40, 10, (), (Reduction(20, 4),) + (VectorPass("add", 10, 2),) * 4)
