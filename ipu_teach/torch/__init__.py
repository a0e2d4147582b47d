"""A PyTorch-compatible front end on ipu-teach's autograd: ``torch`` for ``ipu-teach run`` and PopTorch.

No PyTorch runs here: tensors, modules, losses and optimizers are numpy, on the same autograd ops as the
Keras layers, so a PyTorch model is costed on the simulated IPU by the same machinery (see
:mod:`ipu_teach.poptorch`). What exists follows PyTorch's documented behaviour (names, defaults, NCHW layout,
initialisations, optimizer updates); what does not raises an error naming it. Random draws are seeded by
``torch.manual_seed`` but are numpy's, not PyTorch's numbers.

Example:

>>> from ipu_teach import torch
>>> _ = torch.manual_seed(0)
>>> model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
>>> loss = torch.nn.CrossEntropyLoss()(model(torch.randn(5, 4)), torch.tensor([0, 1, 2, 0, 1]))
>>> loss.backward()
>>> model[0].weight.grad.shape
torch.Size([8, 4])
"""

import contextlib

from ..autograd import no_grad as _no_grad
from . import nn, optim, utils
from .dtype import bool_ as bool  # noqa: A001 (PyTorch's name)
from .dtype import dtype, float16, float32, float64, int8, int16, int32, int64, uint8
from .random import Generator, default_generator, initial_seed, manual_seed, seed
from .serialization import load, save
from .tensor import (
    Size,
    Tensor,
    allclose,
    arange,
    as_tensor,
    cat,
    concat,
    empty,
    equal,
    eye,
    from_numpy,
    full,
    full_like,
    is_tensor,
    linspace,
    numel,
    ones,
    ones_like,
    rand,
    randint,
    randn,
    randperm,
    stack,
    tensor,
    where,
    zeros,
    zeros_like,
)

float = float32  # noqa: A001
double = float64
half = float16
long = int64
int = int32  # noqa: A001
__version__ = "2.0.0+ipu_teach"


def no_grad():
    """A context (and decorator) in which ops record no graph: ``with torch.no_grad():``.

    Example:

    >>> from ipu_teach import torch
    >>> w = torch.ones(2, requires_grad=True)
    >>> with torch.no_grad():
    ...     y = w * 2
    >>> y.requires_grad
    False
    """
    return _no_grad()


inference_mode = no_grad


def set_grad_enabled(mode):
    """``with torch.set_grad_enabled(False):`` records no graph; ``True`` changes nothing."""
    return _no_grad() if not mode else contextlib.nullcontext()


class device:  # noqa: N801 (PyTorch's name)
    """A device name; the simulator's tensors are on the host whatever it says (PopTorch moves them)."""

    def __init__(self, type="cpu", index=None):  # noqa: A002
        self.type, self.index = str(type), index

    def __repr__(self):
        return f"device(type='{self.type}')"


class cuda:  # noqa: N801
    """No GPU here: ``torch.cuda.is_available()`` is False, so scripts pick the CPU."""

    @staticmethod
    def is_available():
        return False

    @staticmethod
    def device_count():
        return 0


def _method(name):
    def function(input, *args, **kwargs):  # noqa: A002
        return getattr(input, name)(*args, **kwargs)

    function.__name__ = name
    function.__doc__ = f"``torch.{name}(t, ...)`` is ``t.{name}(...)``."
    return function


for _name in (
    "sum mean max min argmax argmin exp log sqrt abs relu sigmoid tanh softmax log_softmax flatten matmul mm "
    "eq ne lt le gt ge clamp clip reshape squeeze unsqueeze transpose permute t var std pow all any "
    "add sub mul div count_nonzero"
).split():
    globals()[_name] = _method(_name)
del _name

__all__ = [
    "Generator",
    "Size",
    "Tensor",
    "allclose",
    "arange",
    "as_tensor",
    "bool",
    "cat",
    "cuda",
    "default_generator",
    "device",
    "double",
    "dtype",
    "empty",
    "equal",
    "eye",
    "float",
    "float16",
    "float32",
    "float64",
    "from_numpy",
    "full",
    "full_like",
    "half",
    "initial_seed",
    "int",
    "int16",
    "int32",
    "int64",
    "int8",
    "is_tensor",
    "linspace",
    "load",
    "long",
    "manual_seed",
    "nn",
    "no_grad",
    "numel",
    "ones",
    "ones_like",
    "optim",
    "rand",
    "randint",
    "randn",
    "randperm",
    "save",
    "seed",
    "set_grad_enabled",
    "stack",
    "tensor",
    "uint8",
    "utils",
    "where",
    "zeros",
    "zeros_like",
]
