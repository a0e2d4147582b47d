"""``keras.layers.Lambda``: any function of tensors (``tf`` ops, arithmetic) as a layer of a model."""

from __future__ import annotations

import inspect

from .base import Layer


class Lambda(Layer):
    """Wraps a function of its input as a ``Layer``, for a ``Sequential`` or functional model.

    The function is given the layer's input (a tensor, or a list of them) and the ``arguments``, and
    ``training`` or ``mask`` if it takes them, as in Keras. It has no weights: a function that needs some
    belongs in a layer of one's own (a ``Layer`` subclass with ``build`` and ``call``).

    Args:
      function: The function to evaluate, e.g. ``lambda x: x * 2`` or ``tf.nn.relu``.
      output_shape: The output shape without the batch axis (a tuple), or a function of the input shape
        (batch axis included) giving it. Default: None, found by running the function on one zero sample.
      mask: Accepted for Keras compatibility (masks are not simulated); must be None.
      arguments: Dict of keyword arguments to pass to the function. Default: None.

    Raises:
      TypeError: if ``function`` is not callable.
      ValueError: for a mask.

    Example:

    >>> x = keras.Input(shape=(4,))
    >>> keras.layers.Lambda(lambda t, scale: t * scale, arguments={"scale": 2.0})(x).shape
    (None, 4)
    >>> keras.layers.Lambda(lambda t: t * 2.0)(np.ones((1, 3), dtype="float32")).data
    array([[2., 2., 2.]], dtype=float32)
    """

    takes_lists = True

    def __init__(self, function, output_shape=None, mask=None, arguments=None, **kwargs):
        super().__init__(**kwargs)
        if not callable(function):
            raise TypeError(f"Lambda: function must be callable (a function of the input), got {function!r}")
        if mask is not None:
            raise ValueError("Lambda(mask=...) is not simulated by ipu-teach (masks are not); remove mask=")
        self.function = function
        self.arguments = dict(arguments or {})
        self._output_shape = output_shape
        try:
            parameters = inspect.signature(function).parameters
        except (TypeError, ValueError):  # a builtin without a signature takes neither
            parameters = {}
        self._passes_training = "training" in parameters

    def call(self, inputs, training=False):
        extra = {"training": training} if self._passes_training else {}
        return self.function(inputs, **self.arguments, **extra)

    def compute_output_shape(self, input_shape):
        if self._output_shape is None:
            return super().compute_output_shape(input_shape)
        batch = (input_shape[0] if self.multi_input else input_shape)[0]
        shape = self._output_shape(input_shape) if callable(self._output_shape) else (batch, *self._output_shape)
        return tuple(shape)
