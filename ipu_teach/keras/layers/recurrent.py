"""LSTM and GRU, TensorFlow 2's formulas and weight layouts, built from the primitive ops (MatMul,
Slice, the activations, Add and Mul), so their gradients and IPU costs follow from those ops.

The input projection of every timestep is one MatMul over the whole sequence; each step then adds
the recurrent MatMul of the previous state and splits the gates (Keras' order: LSTM i, f, c, o;
GRU z, r, h with ``reset_after=True``, TF2's default).
"""

import numpy as np

from ...autograd import ops
from .. import activations, initializers, regularizers
from .base import Layer


def _step_input(projected, t):
    """The projected inputs of timestep ``t``: (batch, features)."""
    step = ops.slice_axis(projected, t, t + 1, axis=1)
    return ops.reshape(step, (step.shape[0], step.shape[2]))


def _gates(z, units, count):
    return [ops.slice_axis(z, k * units, (k + 1) * units) for k in range(count)]


class _RNN(Layer):
    ndim = 3
    gates = 0

    def __init__(
        self,
        units,
        activation="tanh",
        recurrent_activation="sigmoid",
        use_bias=True,
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
        kernel_regularizer=None,
        recurrent_regularizer=None,
        bias_regularizer=None,
        return_sequences=False,
        return_state=False,
        go_backwards=False,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if return_state:
            raise ValueError(f"{type(self).__name__}: ipu-teach layers have one output; use return_state=False")
        self.units = int(units)
        self.activation, self.recurrent_activation = activations.get(activation), activations.get(recurrent_activation)
        self.use_bias, self.return_sequences, self.go_backwards = use_bias, return_sequences, go_backwards
        self._initializers = (kernel_initializer, recurrent_initializer, bias_initializer)
        self._regularizers = tuple(
            regularizers.get(r) for r in (kernel_regularizer, recurrent_regularizer, bias_regularizer)
        )

    def build(self, input_shape):
        width = self.gates * self.units
        (kernel_init, recurrent_init, _), (kernel_reg, recurrent_reg, bias_reg) = self._initializers, self._regularizers
        self.kernel = self.add_weight(
            "kernel", (input_shape[-1], width), initializer=kernel_init, regularizer=kernel_reg
        )
        self.recurrent_kernel = self.add_weight(
            "recurrent_kernel", (self.units, width), initializer=recurrent_init, regularizer=recurrent_reg
        )
        self.bias = (
            self.add_weight("bias", self.bias_shape(), initializer=self.bias_initializer(), regularizer=bias_reg)
            if self.use_bias
            else None
        )

    def bias_initializer(self):
        return self._initializers[2]

    def compute_output_shape(self, input_shape):
        batch, steps = input_shape[0], input_shape[1]
        return (batch, steps, self.units) if self.return_sequences else (batch, self.units)

    def call(self, inputs, training=False):
        projected = ops.matmul(inputs, self.kernel)
        if self.bias is not None:
            projected = ops.add(projected, self.input_bias())
        steps = range(inputs.shape[1])
        state, outputs = None, []
        for t in reversed(steps) if self.go_backwards else steps:
            h, state = self.step(_step_input(projected, t), state)
            outputs.append(ops.reshape(h, (h.shape[0], 1, self.units)))
        return ops.concatenate(outputs, axis=1) if self.return_sequences else h


class LSTM(_RNN):
    gates = 4

    def __init__(self, units, unit_forget_bias=True, **kwargs):
        super().__init__(units, **kwargs)
        self.unit_forget_bias = unit_forget_bias

    def bias_shape(self):
        return (4 * self.units,)

    def bias_initializer(self):
        if not self.unit_forget_bias:
            return self._initializers[2]
        base = initializers.get(self._initializers[2])

        def forget_gate_ones(shape, dtype="float32"):
            u = self.units
            return np.concatenate([base((u,), dtype), np.ones(u, dtype), base((2 * u,), dtype)])

        return forget_gate_ones

    def input_bias(self):
        return self.bias

    def step(self, z, state):
        """The new hidden state and the carried (hidden, cell) pair."""
        h, c = state if state is not None else (None, None)
        if h is not None:
            z = ops.add(z, ops.matmul(h, self.recurrent_kernel))
        i, f, g, o = _gates(z, self.units, 4)
        i, f, o = self.recurrent_activation(i), self.recurrent_activation(f), self.recurrent_activation(o)
        new = ops.mul(i, self.activation(g))
        c = new if c is None else ops.add(ops.mul(f, c), new)
        h = ops.mul(o, self.activation(c))
        return h, (h, c)


class GRU(_RNN):
    gates = 3

    def __init__(self, units, reset_after=True, **kwargs):
        super().__init__(units, **kwargs)
        if not reset_after:
            raise ValueError("GRU: ipu-teach implements TF2's default reset_after=True only")

    def bias_shape(self):
        return (2, 3 * self.units)

    def input_bias(self):
        return ops.reshape(ops.slice_axis(self.bias, 0, 1, axis=0), (3 * self.units,))

    def recurrent_bias(self):
        return ops.reshape(ops.slice_axis(self.bias, 1, 2, axis=0), (3 * self.units,))

    def step(self, x, h):
        recurrent = ops.matmul(h, self.recurrent_kernel) if h is not None else None
        if self.bias is not None:
            recurrent = self.recurrent_bias() if recurrent is None else ops.add(recurrent, self.recurrent_bias())
        xz, xr, xh = _gates(x, self.units, 3)
        if recurrent is None:
            z, r, hh = self.recurrent_activation(xz), None, self.activation(xh)
        else:
            rz, rr, rh = _gates(recurrent, self.units, 3)
            z, r = self.recurrent_activation(ops.add(xz, rz)), self.recurrent_activation(ops.add(xr, rr))
            hh = self.activation(ops.add(xh, ops.mul(r, rh)))
        new = ops.mul(ops.sub(np.float32(1), z), hh)
        h = new if h is None else ops.add(ops.mul(z, h), new)
        return h, h
