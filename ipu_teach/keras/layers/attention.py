"""EinsumDense and MultiHeadAttention, built as tf-keras 2.x builds them (``layers/core/einsum_dense.py``,
``layers/attention/multi_head_attention.py``): the same equations, sublayers, weight shapes and weight order,
so a tf-keras model's weights load and the IPU is costed on the same products (``ops.einsum``)."""

import math

import numpy as np

from ...autograd import Tensor, ops
from ...autograd.symbolic import ShapedArray, is_symbolic
from .. import activations, regularizers
from .base import KerasTensor, Layer
from .core import Dropout


class EinsumDense(Layer):
    """A Dense layer of any einsum equation between its input and its kernel: ``einsum(equation, x, kernel)``
    plus a bias over ``bias_axes``, then the activation (tf-keras ``EinsumDense``).

    Args:
      equation: ``"<input>,<kernel>-><output>"`` with letters only (no ``...``), e.g. ``"abc,cde->abde"``.
      output_shape: The output's shape without the batch axis (an int for one axis); an axis may be None
        where the input gives it.
      activation, kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer: as for Dense.
      bias_axes: Letters of the output that the bias spans (default None: no bias).

    Example:

    >>> layer = keras.layers.EinsumDense("abc,cde->abde", output_shape=(None, 2, 3), bias_axes="de")
    >>> layer(np.ones((1, 4, 5), np.float32)).shape, layer.kernel.shape, layer.bias.shape
    ((1, 4, 2, 3), (5, 2, 3), (2, 3))
    """

    def __init__(
        self,
        equation,
        output_shape,
        activation=None,
        bias_axes=None,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        bias_regularizer=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.equation = equation
        self.input_spec, self.kernel_spec, self.output_spec = _split(equation)
        self.partial_output_shape = [output_shape] if isinstance(output_shape, int) else list(output_shape)
        if len(self.partial_output_shape) + 1 != len(self.output_spec):
            raise ValueError(
                f"EinsumDense: output_shape {tuple(self.partial_output_shape)} has "
                f"{len(self.partial_output_shape)} axes; equation {equation!r} gives the output "
                f"{len(self.output_spec)} (the batch axis included): give {len(self.output_spec) - 1}"
            )
        self.activation = activations.get(activation)
        self.bias_axes = bias_axes
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)

    def build(self, input_shape):
        if len(input_shape) != len(self.input_spec):
            raise ValueError(
                f"EinsumDense {self.name!r}: equation {self.equation!r} names {len(self.input_spec)} input axes, "
                f"the input has {len(input_shape)} (shape {tuple(input_shape)})"
            )
        sizes = self._sizes(input_shape)
        self.kernel = self.add_weight(
            "kernel",
            tuple(sizes[c] for c in self.kernel_spec),
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
        )
        self.bias = None
        if self.bias_axes:
            unknown = [c for c in self.bias_axes if c not in self.output_spec]
            if unknown:
                raise ValueError(
                    f"Bias dimension {unknown[0]!r} was requested, but is not part of the output spec "
                    f"{self.output_spec!r}"
                )
            first = min(self.output_spec.index(c) for c in self.bias_axes)
            shape = tuple(sizes[c] if c in self.bias_axes else 1 for c in self.output_spec[first:])
            self.bias = self.add_weight(
                "bias", shape, initializer=self.bias_initializer, regularizer=self.bias_regularizer
            )

    def _sizes(self, input_shape) -> dict:
        """Each letter's size: from the input, else from output_shape (Keras' ``_analyze_split_string``)."""
        sizes = dict(zip(self.output_spec[1:], self.partial_output_shape))
        sizes.update({c: n for c, n in zip(self.input_spec, input_shape) if n is not None or c not in sizes})
        missing = [c for c in self.kernel_spec if sizes.get(c) is None]
        if missing:
            raise ValueError(
                f"Weight dimension {missing[0]!r} did not have a match in either the input spec "
                f"{self.input_spec!r} or the output spec {self.output_spec!r}. For this layer, the weight must be "
                "fully specified."
            )
        return sizes

    def compute_output_shape(self, input_shape):
        sizes = self._sizes(input_shape)
        return tuple(input_shape[0] if i == 0 else sizes.get(c) for i, c in enumerate(self.output_spec))

    def call(self, inputs, training=False):
        y = ops.einsum(self.equation, inputs, self.kernel)
        if self.bias is not None:
            y = ops.add(y, self.bias)
        return self.activation(y)


def _split(equation: str) -> tuple:
    operands, _, output = equation.replace(" ", "").partition("->")
    parts = operands.split(",")
    if len(parts) != 2 or not output or not all(p.isalpha() for p in (*parts, output)):
        raise ValueError(
            f"EinsumDense: equation {equation!r} must have the form '<input>,<kernel>-><output>' in letters "
            "(no '...' in ipu-teach), e.g. 'abc,cde->abde'"
        )
    ops.einsum_parse(equation)  # the products ops.einsum can run
    return parts[0], parts[1], output


class MultiHeadAttention(Layer):
    """Multi-head attention (Vaswani et al., 2017) as tf-keras builds it: EinsumDense projections of the query,
    key and value into ``num_heads`` heads, the scaled dot products ``"aecd,abcd->acbe"``, a softmax over the
    key positions (masked where ``attention_mask`` is 0), dropout, the weighted sum ``"acbe,aecd->abcd"`` and
    the output projection ``"abcd,cde->abe"``. Its products are the AMP's; the softmax runs on the vector units.

    Called as Keras' is: ``layer(query, value, key=None, attention_mask=None, return_attention_scores=False,
    training=None, use_causal_mask=False)``, on inputs of shape ``(batch, positions, features)``.

    Args:
      num_heads: Number of attention heads.
      key_dim: Size of each head for query and key.
      value_dim: Size of each head for value. Default: None, ``key_dim``.
      dropout: Dropout rate of the attention probabilities. Default: 0.
      use_bias: Whether the projections have biases. Default: True.
      output_shape: The output's last axis (an int or a 1-tuple). Default: None, the query's last axis.
      attention_axes: Only None (attention over the positions axis of 3-D inputs) is simulated.
      kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer: as for Dense, for every
        projection.

    Example:

    >>> mha = keras.layers.MultiHeadAttention(num_heads=2, key_dim=4)
    >>> out, scores = mha(np.ones((1, 3, 8), np.float32), np.ones((1, 5, 8), np.float32), return_attention_scores=True)
    >>> out.shape, scores.shape, [w.name for w in mha.weights][:2]
    ((1, 3, 8), (1, 2, 3, 5), ['query/kernel:0', 'query/bias:0'])
    """

    multi_input = True

    def __init__(
        self,
        num_heads,
        key_dim,
        value_dim=None,
        dropout=0.0,
        use_bias=True,
        output_shape=None,
        attention_axes=None,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        bias_regularizer=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if attention_axes is not None and tuple(np.atleast_1d(attention_axes)) not in ((1,), (-2,)):
            raise ValueError(
                f"MultiHeadAttention: attention_axes={attention_axes!r} is not simulated by ipu-teach: use None "
                "(attention over the positions axis of (batch, positions, features) inputs)"
            )
        self.num_heads, self.key_dim = int(num_heads), int(key_dim)
        self.value_dim = int(value_dim) if value_dim else self.key_dim
        self.dropout, self.use_bias = float(dropout), use_bias
        self.projection_shape = None if output_shape is None else tuple(np.atleast_1d(output_shape))
        self._common = dict(
            kernel_initializer=kernel_initializer,
            bias_initializer=bias_initializer,
            kernel_regularizer=kernel_regularizer,
            bias_regularizer=bias_regularizer,
        )
        self._roles = ("query", "value")
        self._return_scores = self._causal = False

    def __call__(
        self,
        query,
        value=None,
        key=None,
        attention_mask=None,
        return_attention_scores=False,
        training=None,
        use_causal_mask=False,
    ):
        if isinstance(query, (list, tuple)) and value is None:  # a functional model's call: the roles it was given
            return super().__call__(query, training=training)
        if value is None:
            raise ValueError(f"MultiHeadAttention {self.name!r}: give value, as Keras requires: layer(query, value)")
        given = {"query": query, "value": value, "key": key, "attention_mask": attention_mask}
        self._roles = tuple(role for role, tensor in given.items() if tensor is not None)
        self._return_scores, self._causal = bool(return_attention_scores), bool(use_causal_mask)
        inputs = [given[role] for role in self._roles]
        if isinstance(query, KerasTensor) and not all(isinstance(t, KerasTensor) for t in inputs):
            raise ValueError(
                f"MultiHeadAttention {self.name!r}: in a functional model give every input (attention_mask too) "
                "as a Keras tensor (keras.Input or a layer's output)"
            )
        return super().__call__(inputs, training=training)

    @property
    def call_roles(self) -> tuple:
        """What each input of its call is, in order (query first, then value, key and attention_mask as given):
        a saved model writes the others as the call's keywords, as tf-keras does."""
        return self._roles

    def build(self, input_shape):
        shapes = dict(zip(self._roles, input_shape))
        query, value = shapes["query"], shapes["value"]
        key = shapes.get("key", value)
        for name, shape in (("query", query), ("value", value), ("key", key)):
            if len(shape) != 3:
                raise ValueError(
                    f"MultiHeadAttention {self.name!r}: {name} has shape {tuple(shape)}; ipu-teach simulates "
                    "(batch, positions, features) inputs"
                )
        heads = (None, self.num_heads)
        self._query_dense = self._projection("query", heads + (self.key_dim,), query)
        self._key_dense = self._projection("key", heads + (self.key_dim,), key)
        self._value_dense = self._projection("value", heads + (self.value_dim,), value)
        self._dropout_layer = Dropout(rate=self.dropout)
        out = self.projection_shape or (query[-1],)
        self._output_dense = EinsumDense(
            "abcd,cde->abe",
            (None, *out),
            bias_axes="e" if self.use_bias else None,
            name="attention_output",
            **self._common,
        )
        self._output_dense._ensure_built((None, query[1], self.num_heads, self.value_dim))

    def _projection(self, name, output_shape, input_shape):
        dense = EinsumDense(
            "abc,cde->abde", output_shape, bias_axes="de" if self.use_bias else None, name=name, **self._common
        )
        dense._ensure_built(tuple(input_shape))
        return dense

    def compute_output_shape(self, input_shape):
        shapes = dict(zip(self._roles, input_shape))
        query, value = shapes["query"], shapes["value"]
        out = tuple(query[:2]) + (self.projection_shape or (query[-1],))
        return [out, (query[0], self.num_heads, query[1], value[1])] if self._return_scores else out

    def call(self, inputs, training=False):
        given = dict(zip(self._roles, inputs))
        query = self._query_dense(given["query"])
        key = self._key_dense(given.get("key", given["value"]))
        value = self._value_dense(given["value"])
        query = ops.mul(query, np.asarray(1.0 / math.sqrt(self.key_dim), query.dtype))
        scores = ops.einsum("aecd,abcd->acbe", key, query)
        mask = self._mask(given.get("attention_mask"), scores.shape)
        if mask is not None:
            scores = ops.add(scores, mask)
        probabilities = ops.softmax(scores)
        dropped = self._dropout_layer(probabilities, training=training)
        output = self._output_dense(ops.einsum("acbe,aecd->abcd", dropped, value))
        return [output, probabilities] if self._return_scores else output

    def _mask(self, attention_mask, scores_shape):
        """What Keras' masked softmax adds to the scores: 0 where attending, a large negative number
        (fp16's lowest in fp16, -1e9 otherwise) where the mask is 0 or the causal mask hides a later key."""
        if attention_mask is None and not self._causal:
            return None
        batch, _, queries, keys = scores_shape
        dtype = np.dtype(self.compute_dtype)
        if attention_mask is not None and is_symbolic(attention_mask.data):
            return Tensor(ShapedArray((batch, 1, queries, keys), dtype))
        keep = np.ones((batch, queries, keys), bool)
        if attention_mask is not None:
            keep &= np.broadcast_to(np.asarray(attention_mask.data) != 0, (batch, queries, keys))
        if self._causal:
            keep &= np.tril(np.ones((queries, keys), bool))
        negative = np.finfo(np.float16).min if dtype == np.float16 else -1e9
        return Tensor(np.where(keep, 0.0, negative).astype(dtype)[:, None])
