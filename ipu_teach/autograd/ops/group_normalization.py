"""Group normalisation as popnn runs it: one op on the IPU, the composite of simpler ops on the host.

PopTorch hands ``torch.nn.GroupNorm`` to PopART as its GroupNormalization op, and Graphcore's TensorFlow runs
``ipu_tensorflow_addons``' GroupNormalization as a popnn op too; both call popnn's group norm (popart
willow/src/popx/op/groupnormx.cpp@d2f20d7, poplibs lib/popnn/GroupNorm.cpp@7eac0f2), whose compute sets are
not those of the ops the host computes it with. So the numbers come from the composite (:func:`composite`: each
sample's groups gathered into rows, a layer normalisation of each row, put back, a per-channel scale and
shift), run on the host exactly as the ops would run it, and the op states popnn's lowering as its cost. Keras'
own ``GroupNormalization`` is the composite with its ops recorded one by one, as TensorFlow runs Keras' layer.
"""

import math

import numpy as np

from ..cost import OpCost, elementwise, reduction
from ..function import Function, unrecorded
from ..symbolic import like, result_dtype
from ..tensor import Tensor
from .elementwise import AddOp, MulOp
from .normalization import LayerNormOp
from .rearrange import TransposeOp
from .shape import ReshapeOp


def composite(x, gamma, beta, groups, epsilon, channels_last=True, strided=False, row_dtype=np.float32):
    """Group normalisation from simpler ops: each sample's ``groups`` groups of channels (runs of neighbouring
    channels, or every ``groups``-th one if ``strided``) gathered into one row each (a reshape, and a transpose
    where the channels are last), a layer normalisation of each row (with unit scale and zero shift in
    ``row_dtype``), the rows put back, then ``gamma`` and ``beta`` per channel (None: left out)."""
    shape = tuple(x.shape)
    channels_axis = len(shape) - 1 if channels_last else 1
    channels = shape[channels_axis]
    per_group = channels // groups
    if channels_last:
        split = shape[:-1] + ((per_group, groups) if strided else (groups, per_group))
        group_axis = len(split) - (1 if strided else 2)
        order = (0, group_axis, *(axis for axis in range(1, len(split)) if axis != group_axis))
        grouped = TransposeOp.apply(ReshapeOp.apply(x, shape=split), perm=order)
    else:
        grouped = ReshapeOp.apply(x, shape=(shape[0], groups, -1))
    row = math.prod(shape[1:]) // groups
    normalised = LayerNormOp.apply(
        ReshapeOp.apply(grouped, shape=(shape[0], groups, row)),
        Tensor(np.ones(row, row_dtype)),
        Tensor(np.zeros(row, row_dtype)),
        epsilon=epsilon,
    )
    if channels_last:
        back = ReshapeOp.apply(
            TransposeOp.apply(ReshapeOp.apply(normalised, shape=grouped.shape), perm=tuple(np.argsort(order))),
            shape=shape,
        )
    else:
        back = ReshapeOp.apply(normalised, shape=shape)
    per_channel = (channels,) if channels_last else (1, channels) + (1,) * (len(shape) - 2)
    if gamma is not None:
        back = MulOp.apply(back, gamma if channels_last else ReshapeOp.apply(gamma, shape=per_channel))
    if beta is not None:
        back = AddOp.apply(back, beta if channels_last else ReshapeOp.apply(beta, shape=per_channel))
    return back


class GroupNormOp(Function):
    """popnn's group norm of ``x`` (channels on axis 1, or last with ``channels_last``) with per-channel ``gamma``
    and ``beta`` (used only with ``scale`` and ``center``). Its numbers are :func:`composite`'s, computed by its
    ops off the record; its gradients are theirs."""

    @staticmethod
    def forward(
        ctx, x, gamma, beta, groups=1, epsilon=1e-3, channels_last=True, strided=False, scale=True, center=True
    ):
        _note_groups(ctx, x.shape, groups, channels_last)
        ctx.leaves = [Tensor(a, requires_grad=need) for a, need in zip((x, gamma, beta), ctx.needs_input_grad)]
        leaf_x, leaf_gamma, leaf_beta = ctx.leaves
        row_dtype = x.dtype if not channels_last else np.float32  # torch's rows take its input's dtype, Keras' float
        with unrecorded():
            ctx.output = composite(
                leaf_x,
                leaf_gamma if scale else None,
                leaf_beta if center else None,
                groups,
                epsilon,
                channels_last,
                strided,
                row_dtype,
            )
        return ctx.output.data

    @classmethod
    def infer(
        cls, ctx, x, gamma, beta, groups=1, epsilon=1e-3, channels_last=True, strided=False, scale=True, center=True
    ):
        """x's shape, in the dtype the composite's scale and shift promote it to (its own without them)."""
        _note_groups(ctx, x.shape, groups, channels_last)
        used = [a for a, kept in ((gamma, scale), (beta, center)) if kept]
        return like(x, dtype=result_dtype(x, *used))

    @staticmethod
    def backward(ctx, grad):
        if ctx.output.requires_grad:
            ctx.output.backward(grad)
        return tuple(leaf.grad if leaf.requires_grad else None for leaf in ctx.leaves)

    @classmethod
    def cost(cls, ctx):
        """popnn's ``groupNormStatistics`` and ``groupNormalise`` as PopART's GroupNormOpx calls them: the sums of
        x and x^2 per sample and group (poplin ``normStatistics``: one ``popops::reduceMany``), the inverse standard
        deviations (poplin's ``iStdDev`` compute set, costed as a DIVIDE per statistic), then whitening (subtract
        the mean, times 1/std: a pass each with a per-group operand) and ``normalise`` (times gamma, plus beta:
        a pass each with a per-channel operand). Charged with or without ``scale`` and ``center``: popnn's group
        norm always scales and shifts, and PopTorch gives a torch GroupNorm without affine weights constant ones and
        zeros (graphcore/poptorch popart_canonicalization/NormalizationOps.cpp @c2a8b17,
        ``maybeInitializeAffineParamConstants``)."""
        n, channels, statistics = _sizes(ctx)
        vector = (
            reduction(2 * n, 2 * statistics)
            + elementwise("divide", statistics)
            + elementwise("add", n, statistics) * 2
            + elementwise("add", n, channels) * 2
        )
        return OpCost(6 * n, n * ctx.itemsize, n * ctx.itemsize, n, (), vector)

    @classmethod
    def backward_cost(cls, ctx):
        """PopART's GroupNormGradOpx: the whitened input again (``groupNormWhiten``: 2 passes with a per-group
        operand); the input's gradient (``groupNormGradients``: grad x gamma, a per-channel pass; x-hat x that, a
        pass; the sums of it and of the gradient per sample and group, a reduceMany; then the mean's and the
        variance's terms: varGrads, a per-group pass; meanDelta scaled, one per statistic; meanGrads, a per-group
        pass; their scaledAdd; times 1/std, a per-group pass: poplin ``normStatisticsGradients``); and gamma's and
        beta's (``groupNormParamGradients``: x-hat x grad, a pass; the sums of it and of the gradient per channel,
        a reduceMany)."""
        n, channels, statistics = _sizes(ctx)
        per_group, per_channel = elementwise("add", n, statistics), elementwise("add", n, channels)
        vector = (
            per_group * 2
            + per_channel
            + elementwise("add", n)
            + reduction(2 * n, 2 * statistics)
            + per_group
            + elementwise("add", statistics)
            + per_group
            + elementwise("scaled_add", n)
            + per_group
            + elementwise("add", n)
            + reduction(2 * n, 2 * channels)
        )
        return OpCost(18 * n, 2 * n * ctx.itemsize, n * ctx.itemsize, n, (), vector)


def _note_groups(ctx, shape, groups, channels_last) -> None:
    """Keep on ``ctx`` what the cost reads: the channels and the statistics (a mean and a 1/std per sample and
    group)."""
    ctx.channels = shape[-1] if channels_last else shape[1]
    ctx.statistics = shape[0] * groups


def _sizes(ctx) -> tuple:
    """``(elements, channels, statistics)`` of one application."""
    return int(np.prod(ctx.output_shape)), ctx.channels, ctx.statistics
