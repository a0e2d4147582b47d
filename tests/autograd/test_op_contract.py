"""The op contract (issue 26): every op has one function in ``ops`` that layers apply it through, an op states what
``Function.apply`` does with it as a property (never found by its class name), and every op's backward cost is
the formula its docstring (or the default rule of ``Function.backward_cost``) states, checked here in numbers."""

import ast
import inspect
import pathlib
import re

import numpy as np
import pytest
from autograd_cases import CASE_IDS, CASES, every_op

import ipu_teach
from ipu_teach.autograd import Function, Tensor, ops, precision
from ipu_teach.autograd.cost import MatrixProduct, Reduction, VectorPass
from ipu_teach.autograd.function import record

PACKAGE = pathlib.Path(ipu_teach.__file__).parent


def functional_forms() -> dict:
    """``{op name: [names in ops/__init__ that apply it]}``: an op's own ``apply`` (``relu = ReLUOp.apply``)
    or a function of the module calling it (read from its source)."""
    forms = {}
    for name, value in vars(ops).items():
        if name.startswith("_"):
            continue
        if inspect.ismethod(value) and value.__name__ == "apply":
            forms.setdefault(value.__self__.op_name, []).append(name)
        elif inspect.isfunction(value) and value.__module__ == ops.__name__:
            for applied in re.findall(r"(\w+)\.apply\(", inspect.getsource(value)):
                op = getattr(ops, applied, None) or getattr(ops._losses, applied)
                forms.setdefault(op.op_name, []).append(name)
    return forms


def test_every_op_has_exactly_one_function_in_ops():
    forms = functional_forms()
    assert forms["ReLU"] == ["relu"] and forms["MatMul"] == ["matmul"] and forms["Sum"] == ["reduce_sum"]
    for name in every_op():
        assert len(forms.get(name, [])) == 1, f"{name}: functions in ops/__init__ that apply it: {forms.get(name)}"


def test_the_cases_apply_every_op_through_its_function():
    """The shared cases call each op as layers do: no ``.apply`` in them."""
    source = pathlib.Path(__file__).with_name("autograd_cases.py").read_text()
    assert ".apply(" not in source
    assert {case_id.split("(")[0] for case_id in CASE_IDS} == set(every_op())


def test_layers_and_front_ends_never_apply_an_op_class():
    """Outside ``autograd/ops`` an op runs through its function (``ops.relu(x)``, not ``ops.ReLUOp.apply(x)``).
    torch/ keeps its own Functions (``torch/functions.py``), applied by its generic wrapper."""
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative.startswith(("autograd/ops/", "torch/")):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr == "apply":
                offenders.append(f"{relative}:{node.lineno}")
    assert offenders == []


def test_autocasting_follows_the_ops_declared_property_not_its_class_name():
    """Under a compute dtype an op's floating inputs are cast first unless the op says ``autocast = False``
    (``CastOp`` does: it is what autocasting applies). A class merely named Cast gets no exemption."""

    class Cast(Function):  # the name alone must not matter
        @staticmethod
        def forward(ctx, x):
            return x

    class Uncast(Function):
        autocast = False

        @staticmethod
        def forward(ctx, x):
            return x

    x = Tensor(np.ones(3, np.float32), requires_grad=True)
    with precision.autocast(np.float16):
        assert Cast.apply(x).dtype == np.float16
        assert Uncast.apply(x).dtype == np.float32
        assert ops.cast(x, "float32").dtype == np.float32
    assert ops.CastOp.autocast is False
    assert [name for name, op in every_op().items() if not op.autocast] == ["Cast"]


def add(n, broadcast=0):
    return VectorPass("add", n, broadcast)


# Each case's backward work, from the formula stated in each op's ``backward_cost`` docstring, or the default
# rule of ``Function.backward_cost`` (the forward's work once per input needing a gradient) for the ops
# without one: (FLOPs, matrix products, vector passes and reductions), which are what the IPU model times.
# The cases' shapes (autograd_cases.py): m (4, 3), x (2, 5, 5, 3), a channel vector (3,).
SAVED_GRADIENT = (12, (), (VectorPass("nonlinearity_grad", 12),))  # popnn's NonLinearityGrad, one pass
PER_SAMPLE_LOSS = (5 * 12, (), (VectorPass("exp", 12), VectorPass("divide", 12, 4), add(12), add(12, 4)))
BATCH_NORM = (18 * 150, (), (add(150), Reduction(300, 6), add(150, 3), add(150, 3), add(150, 3)))
# popnn's group norm gradient over x (2, 5, 5, 3) in 3 groups: 6 statistics (a mean and 1/std per sample and
# group), 3 channels: whitening again, the input's gradient, then gamma's and beta's
GROUP_NORM = (
    18 * 150,
    (),
    (add(150, 6), add(150, 6), add(150, 3), add(150), Reduction(300, 12), add(150, 6), add(6), add(150, 6))
    + (VectorPass("scaled_add", 150), add(150, 6), add(150), Reduction(300, 6)),
)
EXPECTED_BACKWARD = {
    # _Broadcasting: the forward's FLOPs per input, each gradient's codelet pass, a broadcast one reduced
    "Add": (2 * 12, (), (Reduction(12, 3),)),
    "Sub": (2 * 12, (), (add(12), Reduction(12, 3))),
    "Mul": (2 * 12, (), (add(12), add(12), Reduction(12, 3))),
    "Div": (2 * 12, (), (VectorPass("divide", 12), VectorPass("divide", 12))),
    # the default rule: the forward (one FLOP and one pass of the op's codelet per output) once more
    "Neg": (12, (), (add(12),)),
    "Abs": (12, (), (add(12),)),
    "Log": (12, (), (VectorPass("log", 12),)),
    "Softplus": (12, (), (VectorPass("log", 12),)),
    "ELU": (12, (), (VectorPass("exp", 12),)),
    "Cast": (12, (), (VectorPass("cast", 12),)),
    "Transpose": (150, (), (VectorPass("transpose", 150),)),
    "Pad": (2 * 8 * 6 * 3, (), (add(288),)),
    "Upsample": (2 * 10 * 15 * 3, (), (add(900),)),
    "Gather": (12, (), (add(12),)),  # its forward again: one add per gathered element into the table
    # 2x3x3x3 outputs, a 3x3 window each; popnn's pass reads in its plan's layout the input (2x5x5x3) and the
    # output's gradient (max pooling), or the output's gradient alone (average)
    "GroupNorm": GROUP_NORM,
    "MaxPool2D": (54 * 9, (), (VectorPass("add", 486, gathered=150 + 54),)),
    "AvgPool2D": (54 * 4, (), (VectorPass("add", 216, gathered=54),)),
    **{view: (0, (), ()) for view in ("Slice", "StridedSlice", "Concatenate", "Reverse", "Reshape", "CaptureGradient")},
    # the gradient from the saved output (or input): one NonLinearityGrad pass
    **{name: SAVED_GRADIENT for name in ("ReLU", "Sigmoid", "Tanh", "Exp", "GeneralReLU")},
    "Softmax": (4 * 12, (), (add(12), Reduction(12, 4), add(12, 4), add(12))),
    "GELU": (11 * 12, (), (VectorPass("gelu", 12),)),
    "GELU(approximate=True)": (13 * 12, (), (VectorPass("gelu", 12),)),
    # grad @ w.T (rows 4, depth cols 4, cols depth 3) and x.T @ grad (rows 3, depth 4, cols 4): each reads one
    # operand as a transposed view
    "MatMul": (
        2 * 4 * 4 * 3 + 2 * 3 * 4 * 4,
        (MatrixProduct(4, 4, 3, 4, right_transposed=True), MatrixProduct(3, 4, 4, 4, left_transposed=True)),
        (),
    ),
    # 10 groups of (5 x 3) @ (3 x 2): grad @ b^T and a^T @ grad, grouped
    "BatchMatMul": (
        2 * 50 * 2 * 3 + 2 * 30 * 5 * 2,
        (MatrixProduct(50, 2, 3, 2, right_transposed=True), MatrixProduct(30, 5, 2, 5, left_transposed=True)),
        (),
    ),
    "BatchMatMul(einsum of attention scores: transposes around it)": (
        2 * 20 * 3 * 4 + 2 * 16 * 5 * 3,  # 4 groups of (5 x 4) @ (4 x 3)
        (MatrixProduct(20, 3, 4, 3, right_transposed=True), MatrixProduct(16, 5, 3, 5, left_transposed=True)),
        (),
    ),
    # the kernel's gradient (depth: the 30 output positions), the input's (a transposed convolution), the bias';
    # each operand stored once, not once per kernel position (6: a 2 x 3 kernel; MatrixProduct.kernel_positions)
    "Conv2D": (
        2 * 18 * 30 * 4 + 2 * 50 * 24 * 3 + 120,
        (
            MatrixProduct(18, 30, 4, 30, "conv", kernel_positions=6, left_transposed=True),
            MatrixProduct(50, 24, 3, 4, "conv", kernel_positions=6, right_transposed=True),
        ),
        (Reduction(120, 4),),
    ),
    "Conv2DTranspose": (
        2 * 50 * 24 * 3 + 2 * 24 * 50 * 3 + 400,
        (
            MatrixProduct(50, 24, 3, 4, "conv", kernel_positions=6),
            MatrixProduct(24, 50, 3, 50, "conv", kernel_positions=6, left_transposed=True),
        ),
        (Reduction(400, 4),),
    ),
    # a multiply-add per tap (6) and output (300) for each of the two gradients; the kernel's reduced
    "DepthwiseConv2D": (
        2 * 6 * 300 * 2,
        (),
        (VectorPass("scaled_add", 1800), add(1800), Reduction(1800, 36)),
    ),
    "Sum": (12, (), (add(12, 4),)),  # the gradient broadcast back over the reduced axis
    "Mean": (12, (), (add(12, 1),)),
    **{
        name: PER_SAMPLE_LOSS
        for name in (
            "SoftmaxCrossEntropy",
            "SparseSoftmaxCrossEntropy",
            "CategoricalCrossentropyProbs",
            "SparseCategoricalCrossentropyProbs",
            "SigmoidBinaryCrossentropy",
            "BinaryCrossentropyProbs",
        )
    },
    "BatchNorm(training=True)": BATCH_NORM,
    "BatchNorm(training=False)": BATCH_NORM,
    "LayerNorm": (
        18 * 150,
        (),
        (add(150), Reduction(300, 100), add(150, 50), add(150, 50), add(150, 50), Reduction(300, 6)),
    ),
    # Keras' other losses: one FLOP per prediction (12) for each of their backward codelet passes
    "MeanAbsolutePercentageError": (3 * 12, (), (add(12), VectorPass("divide", 12), add(12))),
    "MeanSquaredLogarithmicError": (4 * 12, (), (add(12), VectorPass("divide", 12), add(12), add(12))),
    "Huber": (3 * 12, (), (add(12),) * 3),
    "LogCosh": (2 * 12, (), (VectorPass("tanh", 12), add(12))),
    "Poisson": (3 * 12, (), (VectorPass("divide", 12), add(12), add(12))),
    "KLDivergence": (3 * 12, (), (VectorPass("divide", 12), add(12), add(12))),
    "Hinge": (2 * 12, (), (add(12),) * 2),
    "SquaredHinge": (3 * 12, (), (add(12),) * 3),
    "CategoricalHinge": (12, (), (add(12),)),
    "CosineSimilarity": (4 * 12, (), (add(12),) * 4),
}
# Conv2DReLU is recorded as the two ops it fuses: Conv2D's backward (50 positions, a stride of 1), then ReLU's
FUSED = {
    "Conv2DReLU": [
        (
            "Conv2D",
            2 * 18 * 50 * 4 + 2 * 50 * 24 * 3 + 200,
            (
                MatrixProduct(18, 50, 4, 50, "conv", kernel_positions=6, left_transposed=True),
                MatrixProduct(50, 24, 3, 4, "conv", kernel_positions=6, right_transposed=True),
            ),
            (Reduction(200, 4),),
        ),
        ("ReLU", 200, (), (VectorPass("nonlinearity_grad", 200),)),
    ]
}


def test_every_case_has_its_backward_cost_written_out():
    assert set(EXPECTED_BACKWARD) | set(FUSED) == set(CASE_IDS)


@pytest.mark.parametrize("name, fn, inputs, wrt", CASES, ids=CASE_IDS)
def test_every_ops_backward_cost_is_its_stated_formula(name, fn, inputs, wrt):
    tensors = [Tensor(a, requires_grad=i in wrt) for i, a in enumerate(inputs)]
    with record() as tape:
        fn(*tensors)
    if name in FUSED:
        seen = [(r.op, r.backward.flops, r.backward.products, r.backward.vector) for r in tape]
        assert seen == FUSED[name]
        return
    (rec,) = [r for r in tape if r.op == name.split("(")[0]]
    assert (rec.backward.flops, rec.backward.products, rec.backward.vector) == EXPECTED_BACKWARD[name]


def _op_classes(cls=Function):
    for sub in cls.__subclasses__():
        yield sub
        yield from _op_classes(sub)


def test_an_op_that_ends_in_relu_says_so_and_gives_its_gradient_before_relu_itself():
    """The tape routes a max pooling's gradient through such an op's ReLU (``backward_through``): a subclass with
    another function must not inherit the flag and the method silently."""
    ending = [cls for cls in _op_classes() if cls.ends_in_relu]
    assert {cls.__name__ for cls in ending} >= {"ReLUOp", "Conv2DReLUOp"}
    for cls in ending:
        assert {"ends_in_relu", "backward_before_relu"} <= set(vars(cls)), cls.__name__
