"""PyTorch's layers (``torch.nn.Linear``, ``Conv2d``...): Modules holding parameters, computing with
``nn.functional``, initialised as PyTorch initialises them.

Example:

>>> from ipu_teach import torch
>>> conv = torch.nn.Conv2d(1, 4, kernel_size=3)
>>> conv(torch.zeros(2, 1, 8, 8)).shape, conv.weight.shape
(torch.Size([2, 4, 6, 6]), torch.Size([4, 1, 3, 3]))
"""

import numpy as np

from .. import dtype as dtypes
from ..tensor import Tensor
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter


def _parameter(*shape, dtype=None):
    return Parameter(np.zeros(shape, dtype=dtypes.to_numpy(dtype or dtypes.float32)))


class Identity(Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):  # noqa: A002
        return input


class Linear(Module):
    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = _parameter(out_features, in_features, dtype=dtype)
        self.bias = _parameter(out_features, dtype=dtype) if bias else None
        init.default_reset(self.weight, self.bias)

    def forward(self, input):  # noqa: A002
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Conv2d(Module):
    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups=1,
        bias=True,
        padding_mode="zeros",
        device=None,
        dtype=None,
    ):
        super().__init__()
        if padding_mode != "zeros":
            raise NotImplementedError(f"Conv2d padding_mode={padding_mode!r} is not simulated by ipu-teach")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride = F._pair(kernel_size), F._pair(stride, "stride")
        self.padding = padding if isinstance(padding, str) else F._pair(padding, "padding")
        self.dilation, self.groups = F._pair(dilation, "dilation"), groups
        self.weight = _parameter(out_channels, in_channels // groups, *self.kernel_size, dtype=dtype)
        self.bias = _parameter(out_channels, dtype=dtype) if bias else None
        init.default_reset(self.weight, self.bias)

    def forward(self, input):  # noqa: A002
        return F.conv2d(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)

    def extra_repr(self):
        return (
            f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
            + (f", padding={self.padding}" if self.padding not in ((0, 0), "valid") else "")
            + ("" if self.bias is not None else ", bias=False")
        )


class MaxPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride or kernel_size, padding
        self.dilation, self.return_indices, self.ceil_mode = dilation, return_indices, ceil_mode

    def forward(self, input):  # noqa: A002
        return F.max_pool2d(
            input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode, self.return_indices
        )

    def extra_repr(self):
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, dilation={self.dilation}, "
            f"ceil_mode={self.ceil_mode}"
        )


class AvgPool2d(Module):
    def __init__(
        self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None
    ):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride or kernel_size, padding
        self.ceil_mode, self.count_include_pad, self.divisor_override = ceil_mode, count_include_pad, divisor_override

    def forward(self, input):  # noqa: A002
        return F.avg_pool2d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
            self.divisor_override,
        )

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool2d(Module):
    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):  # noqa: A002
        return F.adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class _Activation(Module):
    function = None

    def __init__(self, inplace=False):
        super().__init__()

    def forward(self, input):  # noqa: A002
        return type(self).function(input)


class ReLU(_Activation):
    function = staticmethod(F.relu)


class Sigmoid(_Activation):
    function = staticmethod(F.sigmoid)


class Tanh(_Activation):
    function = staticmethod(F.tanh)


class GELU(Module):
    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):  # noqa: A002
        return F.gelu(input, self.approximate)


class Softmax(Module):
    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):  # noqa: A002
        return F.softmax(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    def forward(self, input):  # noqa: A002
        return F.log_softmax(input, self.dim)


class Dropout(Module):
    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if not 0 <= p <= 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p

    def forward(self, input):  # noqa: A002
        return F.dropout(input, self.p, self.training)

    def extra_repr(self):
        return f"p={self.p}, inplace=False"


class Flatten(Module):
    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):  # noqa: A002
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class BatchNorm2d(Module):
    """Batch normalisation of NCHW inputs; buffers ``running_mean``, ``running_var``, ``num_batches_tracked``."""

    expected_dims = (4,)

    def __init__(
        self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None
    ):
        super().__init__()
        if momentum is None:
            raise NotImplementedError(
                "BatchNorm with momentum=None (a cumulative average) is not simulated by ipu-teach"
            )
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self.weight = Parameter(np.ones(num_features, np.float32)) if affine else None
        self.bias = Parameter(np.zeros(num_features, np.float32)) if affine else None
        if track_running_stats:
            self.register_buffer("running_mean", Tensor(np.zeros(num_features, np.float32)))
            self.register_buffer("running_var", Tensor(np.ones(num_features, np.float32)))
            self.register_buffer("num_batches_tracked", Tensor(np.zeros((), np.int64)))

    def forward(self, input):  # noqa: A002
        if input.ndim not in self.expected_dims:
            raise ValueError(
                f"expected {' or '.join(f'{d}D' for d in self.expected_dims)} input (got {input.ndim}D input)"
            )
        use_batch = self.training or not self.track_running_stats
        if self.training and self.track_running_stats:
            self.num_batches_tracked.array += 1
        running = (self.running_mean, self.running_var) if self.track_running_stats else (None, None)
        return F.batch_norm(input, *running, self.weight, self.bias, use_batch, self.momentum, self.eps)

    def extra_repr(self):
        return f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}"


class BatchNorm1d(BatchNorm2d):
    expected_dims = (2, 3)


class LayerNorm(Module):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.normalized_shape, self.eps = shape, eps
        self.weight = Parameter(np.ones(shape, np.float32)) if elementwise_affine else None
        self.bias = Parameter(np.zeros(shape, np.float32)) if elementwise_affine and bias else None

    def forward(self, input):  # noqa: A002
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.weight is not None}"


class GroupNorm(Module):
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None):
        super().__init__()
        if num_channels % num_groups:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        self.weight = Parameter(np.ones(num_channels, np.float32)) if affine else None
        self.bias = Parameter(np.zeros(num_channels, np.float32)) if affine else None

    def forward(self, input):  # noqa: A002
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}"


class Embedding(Module):
    """A table of ``num_embeddings`` rows, initialised N(0, 1) (the ``padding_idx`` row zero)."""

    def __init__(
        self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None, _weight=None, device=None, dtype=None
    ):
        super().__init__()
        if max_norm is not None:
            raise NotImplementedError("Embedding with max_norm is not simulated by ipu-teach")
        self.num_embeddings, self.embedding_dim, self.padding_idx = num_embeddings, embedding_dim, padding_idx
        self.weight = _parameter(num_embeddings, embedding_dim, dtype=dtype)
        init.normal_(self.weight)
        if padding_idx is not None:
            self.weight.array[padding_idx] = 0

    def forward(self, input):  # noqa: A002
        return F.embedding(input, self.weight, self.padding_idx)

    def extra_repr(self):
        return f"{self.num_embeddings}, {self.embedding_dim}"
