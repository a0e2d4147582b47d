"""Ops fused for speed on the host, which the IPU compiler still sees as the ops they fuse.

numpy has no fused kernels: a convolution followed by its ReLU writes the convolution's output to memory, reads it
back for ReLU and writes ReLU's, where TensorFlow's CPU kernels apply the activation while the product's block is in
cache. A fused op here computes the same numbers in the same order (the same bits as the ops applied one by one)
with fewer passes over memory, and records each op it fuses with its own shapes and costs (``recorded_as``), so
that the simulated IPU, whose Poplar program runs them as separate compute sets, costs and places them exactly as
before.

Across ops, only backward passes are fused, and by the tape, which alone knows for certain that an op's output has
no other use (``Tensor.backward``): a max pooling after ``Conv2DReLUOp`` (or after ReLU) routes each window's
gradient only where ReLU passes it (``MaxPool2DOp.backward_through``), in the same pass. The forward passes stay two
ops, each with its own output (a feature-extraction model may ask for the ReLU's), as each already works in cache:
the product's pieces are given their bias and ReLU as BLAS finishes them, and the pooling takes a block of samples
at a time (pooling the product's output block by block as it is finished saved no more, benchmarks/README.md).
"""

import numpy as np

from ..function import Context, Function
from . import parallel
from .activations import ReLUOp
from .conv import Conv2DOp, convolve


class Conv2DReLUOp(Function):
    """``ReLU(Conv2D(x, kernel, bias))``: a Conv2D layer with ``activation="relu"``. ReLU is applied to each piece
    of the product as BLAS finishes it (``gemm.matmul``'s ``relu_mask``), in cache, instead of in a pass of its own
    over the whole output, and notes there where the output is positive: its gradient is ReLU's, ``grad * (y >
    0)``, from that mask (a quarter of the output's bytes to read back, where ReLU reads the output), then
    Conv2D's."""

    @staticmethod
    def forward(ctx, x, kernel, bias, strides=(1, 1), padding="valid", dilation=(1, 1)):
        y = convolve(ctx, x, kernel, bias, strides, padding, dilation, relu=True)
        ctx.output_itemsize = y.itemsize
        return y

    @classmethod
    def infer(cls, ctx, x, kernel, bias, strides=(1, 1), padding="valid", dilation=(1, 1)):
        y = Conv2DOp.infer(ctx, x, kernel, bias, strides, padding, dilation)
        ctx.output_itemsize = y.itemsize
        return y

    ends_in_relu = True

    @staticmethod
    def backward(ctx, grad):
        mask = ctx.relu_mask.reshape(grad.shape)
        masked = np.empty(grad.shape, np.result_type(grad, mask))
        parallel.for_samples(lambda s: np.multiply(grad[s], mask[s], out=masked[s]), len(grad), grad.size)
        return Conv2DReLUOp.backward_before_relu(ctx, masked)

    @staticmethod
    def backward_before_relu(ctx, grad):
        """The gradients of the input, the kernel and the bias from the gradient before ReLU: Conv2D's."""
        return Conv2DOp.backward(ctx, grad)

    @classmethod
    def recorded_as(cls, ctx, params) -> list:
        """Conv2D's record, then ReLU's on the convolution's output, as ``ReLUOp.apply`` would have made it."""
        relu = Context((any(ctx.needs_input_grad),), (ctx.output_shape,), ctx.output_itemsize)
        relu.output_shape = ctx.output_shape
        return Conv2DOp.recorded_as(ctx, params) + ReLUOp.recorded_as(relu, {})
