"""An autograd op class is its op's name with ``Op`` appended (``ReLUOp``), so that it never takes the name of the
Keras layer or torch.nn module of the same name (issue 26); the op's name (``Function.op_name``), what TensorFlow and
PopVision show, is what it is recorded and shown under."""

import numpy as np
from autograd_cases import every_op

import ipu_teach.torch as torch
from ipu_teach.autograd import Function, Tensor, ops, record


def test_every_op_class_is_its_op_name_with_op_appended():
    for op_name, op in every_op().items():
        assert op.__name__ == f"{op_name}Op", f"{op.__module__}.{op.__name__} records as {op_name!r}"
    assert ops.ReLUOp.op_name == "ReLU" and ops.Conv2DOp.op_name == "Conv2D" and "ReLU" not in vars(ops)


def test_an_op_is_recorded_and_shown_under_its_op_name_not_its_class_name():
    x = Tensor(np.array([-1.0, 2.0], np.float32), requires_grad=True)
    with record() as tape:
        ops.relu(x)
    assert [r.op for r in tape] == ["ReLU"]
    assert repr(torch.relu(torch.tensor([1.0], requires_grad=True))).endswith("grad_fn=<ReLUBackward>)")


def test_an_op_may_declare_its_own_name():
    class Doubled(Function):
        op_name = "Double"

        @staticmethod
        def forward(ctx, x):
            return 2 * x

    with record() as tape:
        Doubled.apply(np.ones(2, np.float32))
    assert [r.op for r in tape] == ["Double"] and Function.op_name == "Function"
