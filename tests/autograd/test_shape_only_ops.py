"""A shape-only trace (inputs that are ShapedArrays, ``autograd.symbolic``) records for every op exactly what a real
run records: its shapes, dtype, params and forward and backward costs, which is all the IPU's lowering reads."""

import dataclasses

import numpy as np
import pytest
from autograd_cases import CASE_IDS, CASES

from ipu_teach.autograd import Tensor, record
from ipu_teach.autograd.symbolic import ShapedArray, SymbolicValueError, is_symbolic
from ipu_teach.torch import functions


def _inputs(arrays, wrt, symbolic, half):
    """The case's inputs as Tensors: real arrays, or ShapedArrays of their shapes and dtypes; floats in fp16 if
    ``half`` is "all", only the first input in fp16 if it is "first" (an fp16 prediction against fp32 labels)."""
    tensors = []
    for i, array in enumerate(arrays):
        in_half = half == "all" or (half == "first" and i == 0)
        array = array.astype(np.float16) if in_half and array.dtype.kind == "f" else array
        data = ShapedArray(array.shape, array.dtype) if symbolic else array
        tensors.append(Tensor(data, requires_grad=i in wrt))
    return tensors


def _trace(fn, arrays, wrt, symbolic, half):
    with record() as tape:
        out = fn(*_inputs(arrays, wrt, symbolic, half))
    return out, tape


@pytest.mark.filterwarnings("ignore:overflow encountered")
@pytest.mark.parametrize("half", [None, "all", "first"], ids=["fp32", "fp16", "mixed"])
@pytest.mark.parametrize("name, fn, arrays, wrt", CASES, ids=CASE_IDS)
def test_every_op_records_the_same_costs_from_shapes_alone(name, fn, arrays, wrt, half):
    real, real_tape = _trace(fn, arrays, wrt, False, half)
    shaped, shaped_tape = _trace(fn, arrays, wrt, True, half)
    assert is_symbolic(shaped.data)
    assert (shaped.shape, shaped.dtype) == (real.shape, real.dtype)
    # as text: a record's params may hold an array (an index), which == does not compare to one truth value
    assert [repr(dataclasses.asdict(r)) for r in shaped_tape] == [repr(dataclasses.asdict(r)) for r in real_tape]
    assert real_tape  # every case records at least its op


_x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
TORCH_CASES = [
    ("Index", lambda x: functions.Index.apply(x, key=(slice(None), np.array([0, 2, 2]))), [_x], (0,)),
    ("Clamp", lambda x: functions.Clamp.apply(x, low=1.0, high=5.0), [_x], (0,)),
    ("Power", lambda x: functions.Power.apply(x, exponent=3.0), [_x], (0,)),
    ("MaxAlong", lambda x: functions.MaxAlong.apply(x, axis=1), [_x], (0,)),
    ("MaxAlong(keepdims)", lambda x: functions.MaxAlong.apply(x, axis=-1, keepdims=True), [_x], (0,)),
    ("Transpose", lambda x: functions.Transpose.apply(x, perm=(2, 0, 1)), [_x], (0,)),
]


@pytest.mark.parametrize("name, fn, arrays, wrt", TORCH_CASES, ids=[case[0] for case in TORCH_CASES])
def test_the_torch_front_ends_own_ops_record_the_same_from_shapes_alone(name, fn, arrays, wrt):
    test_every_op_records_the_same_costs_from_shapes_alone(name, fn, arrays, wrt, None)


def test_a_shaped_array_refuses_to_give_values():
    x = Tensor(ShapedArray((2, 3), np.float32))
    with pytest.raises(SymbolicValueError, match=r"ShapedArray\(shape=\(2, 3\), dtype=float32\) has a shape"):
        np.asarray(x)
    with pytest.raises(SymbolicValueError):
        x.numpy() + 1
    with pytest.raises(SymbolicValueError):
        float(Tensor(ShapedArray((), np.float32)))
    with pytest.raises(SymbolicValueError):
        x.data + 1
