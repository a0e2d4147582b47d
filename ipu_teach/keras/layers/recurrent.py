"""LSTM and GRU, TensorFlow 2's formulas and weight layouts, built from the primitive ops (MatMul,
Slice, the activations, Add and Mul), so their gradients and IPU costs follow from those ops.

The input projection of every timestep is one MatMul over the whole sequence; each step then adds
the recurrent MatMul of the previous state and splits the gates (Keras' order: LSTM i, f, c, o;
GRU z, r, h, with ``reset_after=True``, TF2's default, or False, Keras 1's convention).

Dropout is Keras': in training, one mask per sequence (the same at every timestep) on the inputs and,
with ``recurrent_dropout``, one on the carried state. With ``recurrent_dropout`` Keras' cells run their
``implementation=1``, one mask per gate (of inputs and state alike); with ``dropout`` alone, one input
mask for all gates (``implementation=2``).
"""

import contextlib

import numpy as np

from ...autograd import ops
from ...autograd.function import repeated_iteration
from .. import activations, backend, initializers, regularizers
from .base import Layer, forward_pass_number
from .core import dropout_mask


def _step_input(projected, t):
    """The projected inputs of timestep ``t``: (batch, features)."""
    step = ops.slice_axis(projected, t, t + 1, axis=1)
    return ops.reshape(step, (step.shape[0], step.shape[2]))


def sequence_and_states(inputs):
    """An RNN's inputs as (sequence, initial states or None): a layer given ``initial_state`` takes the list
    ``[sequence, *states]``, as Keras' RNN folds the states into its inputs."""
    if isinstance(inputs, (list, tuple)):
        return inputs[0], (list(inputs[1:]) or None)
    return inputs, None


def _first(value):
    """The sequence's entry of a value given per input (a shape, a mask) when the layer took a list."""
    return value[0] if isinstance(value, list) else value


def loop_body(index):
    """The block of timestep ``index``: on the IPU the timesteps are one loop (TensorFlow's while loop, PopLibs'
    ``Repeat``) whose body is compiled once. Its body is the second timestep's (the first starts from zero states
    here, without the recurrent product); later timesteps repeat it (``autograd.function.repeated_iteration``)."""
    return repeated_iteration() if index >= 2 else contextlib.nullcontext()


def outlined_call(layer, inputs, initial):
    """The block of one call of an RNN layer: a call that repeats an earlier one of the same forward pass on the
    same shapes is compiled with it (Poplar's function outlining of identical LSTMs, as in Graphcore's
    recomputation-checkpoints example), so it only runs."""
    shapes = (tuple(inputs.shape), initial is not None)
    number = forward_pass_number()
    seen = layer.__dict__.setdefault("_outlined", {})
    if seen.get(shapes) == number and number is not None:
        return repeated_iteration()
    seen[shapes] = number
    return contextlib.nullcontext()


def _gates(z, units, count):
    return [ops.slice_axis(z, k * units, (k + 1) * units) for k in range(count)]


class _RNN(Layer):
    supports_masking = True
    ndim = 3
    gates = 0
    takes_lists = True  # [sequence, *initial states], once a call gives initial_state

    def __call__(self, inputs, training=None, initial_state=None, **kwargs):
        """``initial_state`` (a tensor or a list: LSTM h and c, GRU h) starts the recurrence from given states,
        as in Keras; without it the states start at zero. A list ``[sequence, *states]`` is the same call, as
        Keras' RNN reads a list of inputs."""
        if isinstance(inputs, (list, tuple)):
            inputs, given = inputs[0], list(inputs[1:])
        else:
            given = (
                initial_state if isinstance(initial_state, (list, tuple)) or initial_state is None else [initial_state]
            )
        states = list(given or [])
        if states and len(states) != self.states:
            raise ValueError(
                f"{type(self).__name__} '{self.name}': initial_state needs {self.states} state(s), got {len(states)}"
            )
        if states or self.multi_input:
            inputs = [inputs, *states]
        return super().__call__(inputs, training=training, **kwargs)

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
        dropout=0.0,
        recurrent_dropout=0.0,
        return_sequences=False,
        return_state=False,
        go_backwards=False,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.return_state = bool(return_state)
        for name, rate in (("dropout", dropout), ("recurrent_dropout", recurrent_dropout)):
            if not 0 <= rate < 1:
                raise ValueError(f"{type(self).__name__}: {name} must be in [0, 1), got {rate}")
        self.dropout, self.recurrent_dropout = float(dropout), float(recurrent_dropout)
        self.units = int(units)
        self.activation, self.recurrent_activation = activations.get(activation), activations.get(recurrent_activation)
        self.use_bias, self.return_sequences, self.go_backwards = use_bias, return_sequences, go_backwards
        self._initializers = (kernel_initializer, recurrent_initializer, bias_initializer)
        self._regularizers = tuple(
            regularizers.get(r) for r in (kernel_regularizer, recurrent_regularizer, bias_regularizer)
        )

    def build(self, input_shape):
        input_shape = _first(input_shape) if isinstance(input_shape[0], (tuple, list)) else input_shape
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
        """The output's shape, and with ``return_state`` a list of it and the states' (Keras' order)."""
        input_shape = _first(input_shape) if isinstance(input_shape[0], (tuple, list)) else input_shape
        batch, steps = input_shape[0], input_shape[1]
        output = (batch, steps, self.units) if self.return_sequences else (batch, self.units)
        return [output] + [(batch, self.units)] * self.states if self.return_state else output

    zero_output_for_mask = False
    """With a mask, the output of a masked timestep: the last output (Keras' RNN default) or zeros (what
    Bidirectional asks of its layers when they return sequences)."""

    def call(self, inputs, training=False, mask=None):
        inputs, initial = sequence_and_states(inputs)
        with outlined_call(self, inputs, initial):
            return self._call_sequence(inputs, initial, training, _first(mask))

    def _call_sequence(self, inputs, initial, training, mask):
        input_masks, self._state_masks = self.dropout_masks(inputs, training)
        projected = self.project(inputs, self.kernel, input_masks)
        if self.bias is not None:
            projected = ops.add(projected, self.input_bias())
        steps = range(inputs.shape[1])
        state, outputs, h = self.initial_state(initial), [], None
        for index, t in enumerate(reversed(steps) if self.go_backwards else steps):
            with loop_body(index):
                new_h, new_state = self.step(_step_input(projected, t), state)
                if mask is None:
                    h, state = new_h, new_state
                    output = h
                else:  # Keras' backend.rnn: a masked timestep keeps the state and the last output
                    keep = np.asarray(mask, bool)[:, t : t + 1]
                    h, state = _masked(keep, new_h, h), _masked(keep, new_state, state)
                    output = _masked(keep, new_h, None) if self.zero_output_for_mask else h
                outputs.append(ops.reshape(output, (output.shape[0], 1, self.units)))
        output = ops.concatenate(outputs, axis=1) if self.return_sequences else h
        return [output] + list(state if isinstance(state, tuple) else (state,)) if self.return_state else output

    def initial_state(self, states):
        """The state the first step starts from: None (zeros) or the given states, as ``step`` carries them."""
        if states is None:
            return None
        return tuple(states) if self.states > 1 else states[0]

    def compute_mask(self, inputs, mask=None):
        """The input's mask on a returned sequence, none on the last output (Keras' ``RNN.compute_mask``)."""
        return _first(mask) if self.return_sequences else None

    def dropout_masks(self, inputs, training):
        """Keras' masks for one sequence: of the inputs (one, or one per gate with recurrent dropout), and
        of the carried state (one per gate); None where there is no dropout."""
        if not training or not (self.dropout or self.recurrent_dropout):
            return None, None
        rng, batch = backend.rng(), inputs.shape[0]
        per_gate = self.gates if self.recurrent_dropout else 1
        input_masks = (
            [dropout_mask(rng, (batch, 1, inputs.shape[2]), self.dropout, inputs.dtype) for _ in range(per_gate)]
            if self.dropout
            else None
        )
        state_masks = (
            [dropout_mask(rng, (batch, self.units), self.recurrent_dropout, inputs.dtype) for _ in range(self.gates)]
            if self.recurrent_dropout
            else None
        )
        return input_masks, state_masks

    def project(self, x, kernel, masks, gates=None):
        """``x @ kernel``, or with dropout masks ``(x * mask_g) @ kernel_g`` for each gate g in ``gates`` (all
        by default) joined, as Keras' cells do (one mask: ``(x * mask) @ kernel``)."""
        if masks is None:
            return ops.matmul(x, kernel)
        if len(masks) == 1:
            return ops.matmul(ops.mul(x, masks[0]), kernel)
        gates = range(self.gates) if gates is None else gates
        parts = [ops.matmul(ops.mul(x, masks[g]), _gates(kernel, self.units, self.gates)[g]) for g in gates]
        return ops.concatenate(parts, axis=-1)

    def recurrent(self, h, gates=None):
        """The recurrent product of state ``h`` for ``gates`` (all by default), with the state's masks."""
        kernel = self.recurrent_kernel
        if gates is not None and self._state_masks is None:
            kernel = ops.concatenate([_gates(kernel, self.units, self.gates)[g] for g in gates])
        return self.project(h, kernel, self._state_masks, gates)


def _masked(keep, new, old):
    """``new`` where ``keep`` (batch, 1) is True, else ``old`` (zeros for None), for a state or a pair of them:
    an exact select written as ``new * keep + old * (1 - keep)`` (Mul and Add ops)."""
    if isinstance(new, tuple):
        return tuple(_masked(keep, n, o) for n, o in zip(new, old if old is not None else (None,) * len(new)))
    kept = ops.mul(new, keep.astype(new.dtype))
    return kept if old is None else ops.add(kept, ops.mul(old, (~keep).astype(new.dtype)))


class LSTM(_RNN):
    gates = 4
    states = 2  # h and c

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
            z = ops.add(z, self.recurrent(h))
        i, f, g, o = _gates(z, self.units, 4)
        i, f, o = self.recurrent_activation(i), self.recurrent_activation(f), self.recurrent_activation(o)
        new = ops.mul(i, self.activation(g))
        c = new if c is None else ops.add(ops.mul(f, c), new)
        h = ops.mul(o, self.activation(c))
        return h, (h, c)


class GRU(_RNN):
    gates = 3
    states = 1

    def __init__(self, units, reset_after=True, **kwargs):
        super().__init__(units, **kwargs)
        self.reset_after = bool(reset_after)

    def bias_shape(self):
        """Keras': an input and a recurrent bias with ``reset_after``, the input bias alone without."""
        return (2, 3 * self.units) if self.reset_after else (3 * self.units,)

    def input_bias(self):
        if not self.reset_after:
            return self.bias
        return ops.reshape(ops.slice_axis(self.bias, 0, 1, axis=0), (3 * self.units,))

    def recurrent_bias(self):
        return ops.reshape(ops.slice_axis(self.bias, 1, 2, axis=0), (3 * self.units,))

    def step(self, x, h):
        xz, xr, xh = _gates(x, self.units, 3)
        if h is None:  # the first step: a zero state
            if self.reset_after and self.bias is not None:
                rz, rr, rh = _gates(self.recurrent_bias(), self.units, 3)
                z, r = self.recurrent_activation(ops.add(xz, rz)), self.recurrent_activation(ops.add(xr, rr))
                hh = self.activation(ops.add(xh, ops.mul(r, rh)))
            else:
                z, hh = self.recurrent_activation(xz), self.activation(xh)
        elif self.reset_after:
            recurrent = self.recurrent(h)
            if self.bias is not None:
                recurrent = ops.add(recurrent, self.recurrent_bias())
            rz, rr, rh = _gates(recurrent, self.units, 3)
            z, r = self.recurrent_activation(ops.add(xz, rz)), self.recurrent_activation(ops.add(xr, rr))
            hh = self.activation(ops.add(xh, ops.mul(r, rh)))
        else:  # Keras 1's convention: the reset gate scales the state before its product
            rz, rr = _gates(self.recurrent(h, gates=(0, 1)), self.units, 2)
            z, r = self.recurrent_activation(ops.add(xz, rz)), self.recurrent_activation(ops.add(xr, rr))
            hh = self.activation(ops.add(xh, self.recurrent_reset_state(ops.mul(r, h))))
        new = ops.mul(ops.sub(np.float32(1), z), hh)
        h = new if h is None else ops.add(ops.mul(z, h), new)
        return h, h

    def recurrent_reset_state(self, reset_h):
        """``(r * h) @ recurrent_kernel_h``, the state's mask of the h gate applied as Keras' cell does."""
        kernel = _gates(self.recurrent_kernel, self.units, 3)[2]
        if self._state_masks is None:
            return ops.matmul(reset_h, kernel)
        return ops.matmul(ops.mul(reset_h, self._state_masks[2]), kernel)
