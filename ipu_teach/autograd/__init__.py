"""A minimal autograd on numpy: Tensors, Functions with forward / backward / cost, and the ops.

Every op states its cost (FLOPs, bytes, grains) so that the simulated IPU can place and time it;
``record()`` collects those statements while a model runs.

Example:

>>> from ipu_teach.autograd import Tensor, ops
>>> x = Tensor(np.array([[1.0, -2.0]], np.float32), requires_grad=True)
>>> y = ops.reduce_sum(ops.matmul(x, Tensor(np.ones((2, 3), np.float32))))
>>> y.backward()
>>> float(y.data), x.grad
(-3.0, array([[3., 3.]], dtype=float32))
"""

from . import gradients, ops
from .cost import OpCost
from .function import Context, Function, OpRecord, record, scope, unrecorded
from .ops.portable import portable_numerics, set_portable_numerics
from .tensor import DEFAULT_FLOAT, Tensor, as_tensor, is_grad_enabled, no_grad

__all__ = [
    "Context",
    "DEFAULT_FLOAT",
    "Function",
    "OpCost",
    "OpRecord",
    "Tensor",
    "as_tensor",
    "gradients",
    "is_grad_enabled",
    "no_grad",
    "ops",
    "portable_numerics",
    "record",
    "scope",
    "set_portable_numerics",
]
