"""``torch.nn.functional``: PyTorch's layers and losses as functions, in NCHW, on ipu-teach's autograd ops.

Every function here applies the ops the Keras layers are made of (``ipu_teach.autograd.ops``), so both
front ends share one set of numerics and one cost model. The ops work channels-last (NHWC), as Keras and
Poplar's convolutions do; an NCHW convolution or pooling transposes its input to NHWC and its result back
(PopTorch's graphs do the same kind of layout change, which Poplar then optimises).

Example:

>>> from ipu_teach import torch
>>> import ipu_teach.torch.nn.functional as F
>>> logits = torch.tensor([[2.0, 0.0], [0.0, 2.0]], requires_grad=True)
>>> loss = F.cross_entropy(logits, torch.tensor([0, 1]))
>>> round(loss.item(), 4)
0.1269
"""

from __future__ import annotations

import numpy as np

from ...autograd import ops
from ...autograd.ops import (
    AvgPool2DOp,
    BatchNormOp,
    Conv2DOp,
    GatherOp,
    LayerNormOp,
    MaxPool2DOp,
    PadOp,
    SigmoidBinaryCrossentropyOp,
    SoftmaxCrossEntropyOp,
    SparseSoftmaxCrossEntropyOp,
)
from ...autograd.ops.gelu import GELUOp
from ..random import numpy_generator
from ..tensor import Tensor, apply, wrap

REDUCTIONS = ("mean", "sum", "none")


def _pair(value, what="kernel_size"):
    if isinstance(value, int):
        return (value, value)
    value = tuple(value)
    if len(value) != 2 or not all(isinstance(v, int) for v in value):
        raise ValueError(f"{what} must be an int or a pair of ints, got {value!r}")
    return value


def _to_nhwc(x):
    if x.ndim != 4:
        raise ValueError(f"expected a 4-D input (N, C, H, W), got shape {list(x.shape)}")
    return x.permute(0, 2, 3, 1)


def _to_nchw(y):
    return y.permute(0, 3, 1, 2)


def _zero_pad(x_nhwc, padding):
    ph, pw = padding
    if not (ph or pw):
        return x_nhwc
    return apply(PadOp, x_nhwc, pads=((0, 0), (ph, ph), (pw, pw), (0, 0)))


# ---- layers ------------------------------------------------------------------------------------------------


def linear(input, weight, bias=None):  # noqa: A002 (PyTorch's names)
    """``input @ weight.T + bias``, weight of shape (out_features, in_features)."""
    y = wrap(ops.matmul(input, weight.t()))
    return y if bias is None else y + bias


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002
    """2-D convolution of NCHW ``input`` with OIHW ``weight`` (Keras' Conv2D op on the transposed tensors)."""
    if _pair(dilation, "dilation") != (1, 1) or groups != 1:
        raise NotImplementedError(
            f"conv2d with dilation={dilation} and groups={groups} is not simulated by ipu-teach: use dilation=1, "
            "groups=1"
        )
    if input.ndim == 4 and input.shape[1] != weight.shape[1]:
        raise RuntimeError(
            f"Given groups=1, weight of size {list(weight.shape)}, expected input{list(input.shape)} to have "
            f"{weight.shape[1]} channels, but got {input.shape[1]} channels instead"
        )
    x = _to_nhwc(input)
    if isinstance(padding, str):
        if padding not in ("valid", "same"):
            raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}")
        mode = padding
    else:
        x, mode = _zero_pad(x, _pair(padding, "padding")), "valid"
    kernel = weight.permute(2, 3, 1, 0)  # OIHW -> HWIO
    bias = bias if bias is not None else Tensor(np.zeros(weight.shape[0], weight.array.dtype))
    y = apply(Conv2DOp, x, kernel, bias, strides=_pair(stride, "stride"), padding=mode)
    return _to_nchw(y)


def _pool(op, input, kernel_size, stride, padding, pad_value_ok=True):  # noqa: A002
    kernel = _pair(kernel_size)
    strides = kernel if stride is None or stride == [] else _pair(stride, "stride")
    padding = _pair(padding, "padding")
    if any(2 * p > k for p, k in zip(padding, kernel)):
        raise RuntimeError(
            f"pad should be at most half of effective kernel size, but got pad={padding}, kernel={kernel}"
        )
    if any(padding) and not pad_value_ok:
        raise NotImplementedError("max_pool2d with padding > 0 is not simulated by ipu-teach: pad the input first")
    x = _zero_pad(_to_nhwc(input), padding)
    return _to_nchw(apply(op, x, pool_size=kernel, strides=strides, padding="valid"))


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):  # noqa: A002
    if dilation != 1 or ceil_mode or return_indices:
        raise NotImplementedError("max_pool2d with dilation, ceil_mode or return_indices is not simulated by ipu-teach")
    return _pool(MaxPool2DOp, input, kernel_size, stride, padding, pad_value_ok=False)


def avg_pool2d(
    input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None
):  # noqa: A002
    """Average pooling; zero padding counts in the average (PyTorch's default ``count_include_pad=True``)."""
    if ceil_mode or not count_include_pad or divisor_override is not None:
        raise NotImplementedError(
            "avg_pool2d with ceil_mode, count_include_pad=False or divisor_override is not simulated by ipu-teach"
        )
    return _pool(AvgPool2DOp, input, kernel_size, stride, padding)


def adaptive_avg_pool2d(input, output_size):  # noqa: A002
    """Average pooling to ``output_size``: a mean over the spatial axes for (1, 1), else windows of equal size
    (an input whose size the output divides; others are refused)."""
    out_h, out_w = _pair(output_size, "output_size")
    height, width = input.shape[2], input.shape[3]
    out_h, out_w = out_h or height, out_w or width
    if (out_h, out_w) == (1, 1):
        return input.mean((2, 3), keepdim=True)
    if height % out_h or width % out_w:
        raise NotImplementedError(
            f"adaptive_avg_pool2d from {height}x{width} to {out_h}x{out_w} (windows of unequal size) is not "
            "simulated by ipu-teach: choose an output size that divides the input's"
        )
    window = (height // out_h, width // out_w)
    return avg_pool2d(input, window, window)


def relu(input, inplace=False):  # noqa: A002
    return input.relu()


def sigmoid(input):  # noqa: A002
    return input.sigmoid()


def tanh(input):  # noqa: A002
    return input.tanh()


def gelu(input, approximate="none"):  # noqa: A002
    if approximate not in ("none", "tanh"):
        raise ValueError(f"approximate argument must be either none or tanh, got {approximate!r}")
    return apply(GELUOp, input, approximate=approximate == "tanh")


def _implicit_dim(ndim: int) -> int:
    """PyTorch's (deprecated) choice of dim when none is given: 0 for 0-, 1- and 3-D inputs, else 1."""
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, dtype=None):  # noqa: A002
    x = input if dtype is None else input.type(dtype)
    return x.softmax(_implicit_dim(x.ndim) if dim is None else dim)


def log_softmax(input, dim=None, dtype=None):  # noqa: A002
    x = input if dtype is None else input.type(dtype)
    return x.log_softmax(_implicit_dim(x.ndim) if dim is None else dim)


def dropout(input, p=0.5, training=True, inplace=False, generator=None):  # noqa: A002
    """Zero each value with probability ``p`` and scale the others by 1 / (1 - p), in training only."""
    if not 0 <= p <= 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0:
        return input
    keep = numpy_generator(generator).random(input.array.shape) >= p
    scale = 0.0 if p == 1 else 1.0 / (1.0 - p)
    return input * Tensor((keep * scale).astype(input.array.dtype))


def flatten(input, start_dim=0, end_dim=-1):  # noqa: A002
    return input.flatten(start_dim, end_dim)


def _channels_last(x):
    return x if x.ndim == 2 else x.permute(0, *range(2, x.ndim), 1)


def _channels_first(y, ndim):
    return y if ndim == 2 else y.permute(0, ndim - 1, *range(1, ndim - 1))


def batch_norm(
    input,  # noqa: A002
    running_mean,
    running_var,
    weight=None,
    bias=None,
    training=False,
    momentum=0.1,
    eps=1e-5,
):
    """Batch normalisation over every axis but 1 (channels). In training the batch's statistics normalise it
    (biased variance) and the running statistics move towards them with ``momentum`` (the unbiased variance,
    as PyTorch); in evaluation the running statistics normalise it."""
    x = _channels_last(input)
    channels = x.shape[-1]
    gamma = weight if weight is not None else Tensor(np.ones(channels, x.array.dtype))
    beta = bias if bias is not None else Tensor(np.zeros(channels, x.array.dtype))
    if training:
        axes = tuple(range(x.ndim - 1))
        count = x.array.size // channels
        if count <= 1:
            raise ValueError(
                f"Expected more than 1 value per channel when training, got input size {list(input.shape)}"
            )
        mean = x.array.mean(axis=axes)
        var = x.array.var(axis=axes)
        if running_mean is not None:
            running_mean.array[...] = (1 - momentum) * running_mean.array + momentum * mean
            running_var.array[...] = (1 - momentum) * running_var.array + momentum * var * count / (count - 1)
    else:
        mean, var = running_mean.array, running_var.array
    y = apply(
        BatchNormOp,
        x,
        gamma,
        beta,
        mean.astype(x.array.dtype),
        var.astype(x.array.dtype),
        epsilon=eps,
        training=training,
    )
    return _channels_first(y, input.ndim)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):  # noqa: A002
    """Normalisation over the last ``len(normalized_shape)`` axes (Keras' LayerNorm op on those axes flattened)."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if tuple(input.shape[-len(shape) :]) != shape:
        raise RuntimeError(
            f"Given normalized_shape={list(shape)}, expected input with shape [*, {', '.join(map(str, shape))}], "
            f"but got input of size{list(input.shape)}"
        )
    features = int(np.prod(shape))
    x = input.reshape(*input.shape[: input.ndim - len(shape)], features)
    gamma = weight.reshape(features) if weight is not None else Tensor(np.ones(features, x.array.dtype))
    beta = bias.reshape(features) if bias is not None else Tensor(np.zeros(features, x.array.dtype))
    return apply(LayerNormOp, x, gamma, beta, epsilon=eps).reshape(input.shape)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):  # noqa: A002
    """Each sample's channels in ``num_groups`` groups, each group normalised over its channels and positions,
    then a per-channel scale and shift: one popnn group norm on the IPU, as PopART runs torch's group_norm
    (``ops.group_norm``)."""
    channels = input.shape[1]
    if channels % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(input.shape)} and num_groups={num_groups}")  # fmt: skip
    unit = Tensor(np.ones(channels, input.array.dtype))  # in place of a weight or bias left out, unused
    return wrap(
        ops.group_norm(
            input,
            unit if weight is None else weight,
            unit if bias is None else bias,
            num_groups,
            eps,
            channels_last=False,
            scale=weight is not None,
            center=bias is not None,
        )
    )


def embedding(input, weight, padding_idx=None):  # noqa: A002
    if input.array.dtype.kind not in "iu":
        raise RuntimeError(
            f"Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got "
            f"{input.type()} instead"
        )
    out = apply(GatherOp, weight, input.array)
    if padding_idx is None:
        return out
    # PyTorch's padding_idx: the row's value is looked up as any other, but no gradient flows into it
    kept = (input.array != padding_idx % weight.shape[0])[..., None].astype(out.array.dtype)
    return out * Tensor(kept) + out.detach() * Tensor(1 - kept)


# ---- losses ------------------------------------------------------------------------------------------------


def _reduce(per_sample, reduction, weights=None):
    if reduction not in REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if weights is not None:
        weighted = per_sample * Tensor(weights.astype(per_sample.array.dtype))
        if reduction == "mean":
            return weighted.sum() / float(weights.sum())
        per_sample = weighted
    if reduction == "mean":
        return per_sample.mean()
    return per_sample.sum() if reduction == "sum" else per_sample


def _rows_last(input):
    """(N, C, d1, ...) as rows of C (class scores last), and (N, C) as it is."""
    return input if input.ndim <= 2 else _channels_last(input).reshape(-1, input.shape[1])


def _class_weights(target, weight, ignore_index):
    """Each sample's weight (its class's, 0 when ignored) and labels safe to index with; None when all are 1."""
    labels = target.array.reshape(-1).astype(np.int64)
    ignored = labels == ignore_index
    if weight is None and not ignored.any():
        return None, labels
    safe = np.where(ignored, 0, labels)
    w = np.ones(len(labels), np.float64) if weight is None else np.asarray(weight.array, np.float64)[safe]
    return np.where(ignored, 0.0, w), safe


def cross_entropy(
    input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean", label_smoothing=0.0
):  # noqa: A002
    """Softmax cross entropy of logits ``input`` (N, C) or (N, C, d...) with class indices or class
    probabilities ``target`` (PyTorch's ``cross_entropy``: Keras' fused softmax-cross-entropy ops)."""
    logits = _rows_last(input)
    classes = logits.shape[-1]
    if target.array.dtype.kind == "f":  # probabilities, as many as the logits
        probs = _rows_last(target).array
        if label_smoothing:
            probs = probs * (1 - label_smoothing) + label_smoothing / classes
        if weight is not None:
            raise NotImplementedError("cross_entropy with probability targets and class weights is not simulated")
        per = apply(SoftmaxCrossEntropyOp, logits, probs.astype(logits.array.dtype))
        return _reduce(per.reshape(input.shape[:1] + input.shape[2:]), reduction)
    labels = target.array.reshape(-1)
    if labels.size != logits.shape[0]:
        raise ValueError(f"Expected input batch_size ({logits.shape[0]}) to match target batch_size ({labels.size}).")
    weights, safe = _class_weights(target, weight, ignore_index)
    if ((safe < 0) | (safe >= classes)).any():
        raise IndexError(f"Target {int(safe[(safe < 0) | (safe >= classes)][0])} is out of bounds.")
    if label_smoothing:
        if weights is not None:
            raise NotImplementedError(
                "cross_entropy with label_smoothing and class weights or ignore_index is not simulated"
            )
        smoothed = np.full(logits.shape, label_smoothing / classes, logits.array.dtype)
        smoothed[np.arange(len(safe)), safe] += 1 - label_smoothing
        per = apply(SoftmaxCrossEntropyOp, logits, smoothed)
    else:
        per = apply(SparseSoftmaxCrossEntropyOp, logits, safe)
    if reduction == "none":
        per = per.reshape(target.shape)
        return per if weights is None else per * Tensor(weights.reshape(target.shape).astype(per.array.dtype))
    return _reduce(per, reduction, weights)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):  # noqa: A002
    """``-input[i, target[i]]`` per sample (``input`` holds log-probabilities, as ``log_softmax`` gives)."""
    rows = _rows_last(input)
    weights, safe = _class_weights(target, weight, ignore_index)
    if ((safe < 0) | (safe >= rows.shape[-1])).any():
        raise IndexError(f"Target {int(safe[(safe < 0) | (safe >= rows.shape[-1])][0])} is out of bounds.")
    per = -rows[np.arange(len(safe)), safe]
    if reduction == "none":
        per = per.reshape(target.shape)
        return per if weights is None else per * Tensor(weights.reshape(target.shape).astype(per.array.dtype))
    return _reduce(per, reduction, weights)


def _same_shape(input, target, name):  # noqa: A002
    if tuple(input.shape) != tuple(target.shape):
        raise ValueError(
            f"Using a target size ({target.shape}) that is different to the input size ({input.shape}) is not "
            f"supported by {name}: reshape one of them (e.g. target.view(-1, 1) or input.squeeze())"
        )


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):  # noqa: A002
    _same_shape(input, target, "mse_loss")
    difference = input - target
    return _reduce(difference * difference, reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):  # noqa: A002
    _same_shape(input, target, "l1_loss")
    return _reduce((input - target).abs(), reduction)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):  # noqa: A002
    """``-(y log p + (1 - y) log(1 - p))`` with each log clamped at -100, as PyTorch does."""
    _same_shape(input, target, "binary_cross_entropy")
    if ((input.array < 0) | (input.array > 1)).any():
        raise RuntimeError("all elements of input should be between 0 and 1")
    y = target.array.astype(input.array.dtype)
    with np.errstate(divide="ignore"):  # log(0) is -inf, clamped to -100 as PyTorch does, without a warning
        log_p = input.log().clamp(min=-100.0)
        log_not_p = (1.0 - input).log().clamp(min=-100.0)
    per = -(log_p * Tensor(y) + log_not_p * Tensor(1 - y))
    return _reduce(per if weight is None else per * weight, reduction)


def binary_cross_entropy_with_logits(
    input, target, weight=None, size_average=None, reduce=None, reduction="mean", pos_weight=None
):  # noqa: A002
    """The logistic loss on logits, in its overflow-free form (Keras' sigmoid cross-entropy op, per element)."""
    _same_shape(input, target, "binary_cross_entropy_with_logits")
    if pos_weight is not None:
        raise NotImplementedError("binary_cross_entropy_with_logits with pos_weight is not simulated by ipu-teach")
    labels = target.array.astype(input.array.dtype).reshape(input.array.shape + (1,))
    per = apply(SigmoidBinaryCrossentropyOp, input.reshape(*input.shape, 1), labels)
    return _reduce(per if weight is None else per * weight, reduction)
