"""Graphcore's PopLibs LSTM and GRU layers (``PopnnLSTM``, ``PopnnGRU``), on ipu-teach's Keras LSTM and GRU.

The numbers are Keras' (Graphcore's tests give the IPU layers a Keras layer's weights and compare the
outputs): the same gates in the same order, the same weight shapes. What is the IPU's own is the arguments
(``partials_dtype``, ``options``, ``time_major``...), the refusal of what PopLibs does not do, and, for the
LSTM, how each step is computed: PopLibs' ``popnn::lstm`` (graphcore/poplibs lib/popnn/Lstm.cpp,
``basicLstmUnitsNlInput``) multiplies ``[x_t, h_{t-1}]`` by the input and recurrent weights stacked, one
matrix product per step, unless its ``preCalcWeights`` option (default false) first projects the whole sequence.
"""

import numpy as np

from .....autograd import Tensor, ops
from .....keras import backend, layers
from .....keras.layers.recurrent import _step_input, loop_body, outlined_call, sequence_and_states

_POPNN_ARGUMENTS = ("partials_dtype", "time_major", "options", "options_bwd", "seed", "dropout_seed")
ACCEPTED_ACTIVATIONS = ("tanh", "relu", "softmax", "sigmoid", "hard_sigmoid")
ACCEPTED_RECURRENT_ACTIVATIONS = ("tanh", "softmax", "sigmoid", "hard_sigmoid")


def _check_popnn_arguments(kind, activation, recurrent_activation, refused) -> None:
    """Graphcore's checks (``_PopnnRNN.__init__`` and ``PopnnLSTM.__init__``): the activations PopLibs has, and
    every Keras argument the IPU layer refuses, each a ValueError naming it."""
    for name, value, accepted in (
        ("an activation", activation, ACCEPTED_ACTIVATIONS),
        ("a recurrent activation", recurrent_activation, ACCEPTED_RECURRENT_ACTIVATIONS),
    ):
        value = value if isinstance(value, str) else getattr(value, "__name__", value)
        if value not in accepted:
            raise ValueError(
                f"IPU custom RNN layer does not support '{value}' as {name}. Acceptable values are "
                + ", ".join(f'"{a}"' for a in accepted)
            )
    for name, (value, allowed) in refused.items():
        if value != allowed:
            raise ValueError(f"IPU custom {kind} layer does not support {name} = {value!r}; leave it at {allowed!r}")


class _PopnnRNN:
    """What Graphcore's PopLibs RNN layers share: their arguments, checked as Graphcore checks them."""

    kind = ""

    def _popnn_init(self, kwargs, activation, recurrent_activation) -> dict:
        """Checks and records Graphcore's arguments; returns the Keras arguments left for the Keras layer."""
        popnn = {k: kwargs.pop(k) for k in _POPNN_ARGUMENTS if k in kwargs}
        refused = {
            name: (kwargs.pop(name, default), default)
            for name, default in (
                ("use_bias", True),
                ("kernel_regularizer", None),
                ("recurrent_regularizer", None),
                ("bias_regularizer", None),
                ("activity_regularizer", None),
                ("kernel_constraint", None),
                ("recurrent_constraint", None),
                ("bias_constraint", None),
                ("recurrent_dropout", 0.0),
                ("go_backwards", False),
                ("unroll", False),
                ("stateful", False),
            )
        }
        self.input_dropout = float(kwargs.pop("dropout", 0.0))  # not Keras' own dropout: applied here
        implementation = kwargs.pop("implementation", 2)
        refused["implementation"] = (1 if implementation == 2 else implementation, 1)  # Graphcore maps 2 to 1
        _check_popnn_arguments(self.kind, activation, recurrent_activation, refused)
        self.partials_dtype = popnn.pop("partials_dtype", "float32")
        self.time_major = bool(popnn.pop("time_major", False))
        self.options, self.options_bwd = (
            dict(popnn.pop("options", None) or {}),
            dict(popnn.pop("options_bwd", None) or {}),
        )
        self.dropout_seed, self.seed = popnn.pop("dropout_seed", None), popnn.pop("seed", None)
        self._dropout_rng = None if self.dropout_seed is None else np.random.default_rng(list(self.dropout_seed))
        return kwargs

    def _batch_major(self, inputs, training):
        """Keras' (batch, time, features) from PopLibs' (time, batch, features) when ``time_major``, with the
        input dropout applied."""
        inputs = ops.transpose(inputs, perm=(1, 0, 2)) if self.time_major else inputs
        if not training or not self.input_dropout:
            return inputs
        # Graphcore's _apply_dropout: one mask per sequence, the same features dropped at every step
        rng = self._dropout_rng or backend.rng()
        shape = (inputs.shape[0], 1, inputs.shape[2])
        keep = (rng.random(shape, dtype=np.float32) >= self.input_dropout) * np.float32(1 / (1 - self.input_dropout))
        return ops.mul(inputs, Tensor(keep))

    def _time_major_output(self, output):
        return ops.transpose(output, perm=(1, 0, 2)) if self.time_major and self.return_sequences else output

    def compute_output_shape(self, input_shape):
        if not self.time_major:
            return super().compute_output_shape(input_shape)
        steps, batch = input_shape[0], input_shape[1]
        return (steps, batch, self.units) if self.return_sequences else (batch, self.units)


class PopnnLSTM(_PopnnRNN, layers.LSTM):
    """PopLibs' LSTM (``ipu_tensorflow_addons.keras.layers.PopnnLSTM``, also ``LSTM``).

    Computes Keras' LSTM (gates i, f, c, o; ``unit_forget_bias``), one fused matrix product per step as PopLibs
    runs it (see the module). ``dropout`` drops the same input features at every step, as Graphcore's does.

    Args:
      units: Positive integer, dimensionality of the output space.
      activation, recurrent_activation: ``"tanh"`` and ``"sigmoid"`` by default; PopLibs has tanh, relu,
        softmax, sigmoid and hard_sigmoid (recurrent: not relu).
      partials_dtype, options, options_bwd, seed, dropout_seed: Graphcore's arguments, recorded.
      time_major: True when inputs (and sequence outputs) are (time, batch, features). Default: False.
      **kwargs: Keras' LSTM arguments; those PopLibs does not support (``use_bias=False``, regularizers,
        constraints, ``recurrent_dropout``, ``go_backwards``, ``unroll``, ``stateful``) are refused.

    Raises:
      ValueError: for an activation PopLibs lacks or an argument the IPU layer refuses, naming it.

    Example:

    >>> from ipu_teach.ipu.ipu_tensorflow_addons.keras.layers import PopnnLSTM
    >>> ipu_lstm, keras_lstm = PopnnLSTM(3), keras.layers.LSTM(3)
    >>> x = np.random.default_rng(0).normal(size=(2, 5, 4)).astype(np.float32)
    >>> _ = ipu_lstm(x), keras_lstm(x)
    >>> ipu_lstm.set_weights(keras_lstm.get_weights())
    >>> np.allclose(ipu_lstm(x).data, keras_lstm(x).data, atol=1e-6)
    True
    """

    kind = "LSTM"

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", **kwargs):
        kwargs = self._popnn_init(kwargs, activation, recurrent_activation)
        super().__init__(units, activation=activation, recurrent_activation=recurrent_activation, **kwargs)

    def call(self, inputs, training=False):
        inputs, initial = sequence_and_states(inputs)
        with outlined_call(self, inputs, initial):
            return self._call_sequence(inputs, initial, training)

    def _call_sequence(self, inputs, initial, training):
        inputs = self._batch_major(inputs, training)
        batch, steps = inputs.shape[0], inputs.shape[1]
        stacked = ops.concatenate([self.kernel, self.recurrent_kernel], axis=0)  # PopLibs' weights, one matrix
        h, c = initial or (Tensor(np.zeros((batch, self.units), np.float32)), None)  # else PopLibs starts at zeros
        outputs = []
        for t in range(steps):
            with loop_body(t):
                z = ops.add(ops.matmul(ops.concatenate([_step_input(inputs, t), h], axis=1), stacked), self.bias)
                h, (_, c) = self.step(z, (None, c))  # the recurrent product is already in z
                outputs.append(ops.reshape(h, (batch, 1, self.units)))
        output = self._time_major_output(ops.concatenate(outputs, axis=1) if self.return_sequences else h)
        return [output, h, c] if self.return_state else output


class PopnnGRU(_PopnnRNN, layers.GRU):
    """PopLibs' GRU (``ipu_tensorflow_addons.keras.layers.PopnnGRU``, also ``GRU``).

    Computes Keras' GRU (``reset_after=True``, Graphcore's default too: gates z, r, h) with Graphcore's arguments;
    each step is costed as ipu-teach's Keras GRU is.

    Args:
      units: Positive integer, dimensionality of the output space.
      activation, recurrent_activation: ``"tanh"`` and ``"sigmoid"`` by default, as PopLibs has them.
      partials_dtype, options, options_bwd, seed, dropout_seed: Graphcore's arguments, recorded.
      time_major: True when inputs (and sequence outputs) are (time, batch, features). Default: False.
      **kwargs: Keras' GRU arguments; those PopLibs does not support are refused (as for ``PopnnLSTM``).

    Raises:
      ValueError: for an activation PopLibs lacks or an argument the IPU layer refuses, naming it.

    Example:

    >>> from ipu_teach.ipu.ipu_tensorflow_addons.keras.layers import PopnnGRU
    >>> PopnnGRU(3, return_sequences=True)(keras.Input(shape=(5, 4))).shape
    (None, 5, 3)
    """

    kind = "GRU"

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", **kwargs):
        kwargs = self._popnn_init(kwargs, activation, recurrent_activation)
        super().__init__(units, activation=activation, recurrent_activation=recurrent_activation, **kwargs)

    def call(self, inputs, training=False):
        inputs, initial = sequence_and_states(inputs)
        sequence = self._batch_major(inputs, training)
        return self._time_major_output(super().call([sequence, *initial] if initial else sequence, training))


LSTM = PopnnLSTM
GRU = PopnnGRU
