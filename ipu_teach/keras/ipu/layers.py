"""``keras.ipu.layers``: Graphcore's layer wrappers that capture gradients on the backward pass
(graphcore/keras keras/ipu/layers/capture_upstream_gradients.py).

``CaptureUpstreamGradients(layer)`` keeps the gradient arriving at the wrapped layer's output,
``CaptureActivationGradients(layer)`` the gradient arriving at its activation function's input (for each of its
activations: an LSTM's ``activation`` and ``recurrent_activation``). The model passes them, by tag, to its
optimizer's ``apply_gradients(grads_and_vars, captured_grads=...)`` when the optimizer's
``supports_captured_grads`` is true, as Graphcore's Keras does: ``ALSOptimizer`` counts them in its histogram.
The wrapper has the wrapped layer's weights; it is the layer instance that is wrapped, not its output.
"""

from __future__ import annotations

from ...autograd import ops
from .. import activations
from ..layers.base import Layer

_ACTIVATIONS = ("activation", "recurrent_activation")
"""The activation attributes ipu-teach's layers apply (Dense, the convolutions, Activation, LSTM, GRU)."""


def _checked(layer) -> Layer:
    if not isinstance(layer, Layer):
        raise ValueError("Expected an instance of a keras.engine.base_layer.Layer")
    return layer


class _GradientCapture(Layer):
    """The wrapped layer's weights, output shape and call; the gradients captured in ``captured_gradients``."""

    def __init__(self, layer, tag):
        super().__init__(name=tag)
        self.layer, self.tag = layer, tag
        self.captured_gradients = {}
        """tag -> the gradient the last backward pass brought (summed over the calls of the layer)."""

    def build(self, input_shape):
        self.layer._ensure_built(input_shape)

    @property
    def losses(self) -> list:
        return super().losses + self.layer.losses

    def compute_output_shape(self, input_shape):
        return self.layer.compute_output_shape(input_shape)

    def get_config(self):
        raise NotImplementedError(
            f"{type(self).__name__} wraps a layer instance and is not saved in a model's configuration by "
            "ipu-teach: save the weights (model.save_weights) and build the model again in Python"
        )


class CaptureUpstreamGradients(_GradientCapture):
    """Captures the gradient arriving at the wrapped layer's output (Graphcore's Keras).

    Args:
      layer: The Keras layer instance to wrap.
      tag: The captured gradient's key; ``layer.name + "_cug"`` by default.

    Example:

    >>> from ipu_teach.keras.ipu.layers import CaptureUpstreamGradients
    >>> layer = CaptureUpstreamGradients(keras.layers.Dense(2, kernel_initializer="ones", name="dense"))
    >>> from ipu_teach.autograd import Tensor
    >>> x = Tensor(np.ones((1, 3), np.float32))
    >>> (layer(x) * 3.0).sum().backward()
    >>> layer.captured_gradients
    {'dense_cug': array([[3., 3.]], dtype=float32)}
    """

    def __init__(self, layer, tag=None):
        super().__init__(_checked(layer), tag if tag is not None else f"{layer.name}_cug")

    def call(self, inputs, training=False):
        return ops.capture_gradient(self.layer(inputs, training=training), store=self.captured_gradients, tag=self.tag)


class CaptureActivationGradients(_GradientCapture):
    """Captures the gradients arriving at the wrapped layer's activation functions' inputs (Graphcore's Keras),
    tagged ``<tag>_activation`` (and ``<tag>_recurrent_activation``).

    Args:
      layer: The Keras layer instance to wrap; it must apply an activation function.
      tag: The prefix of the captured gradients' keys; ``layer.name + "_cag"`` by default.

    Raises:
      ValueError: for a layer without an activation function, in Graphcore's words.

    Example:

    >>> from ipu_teach.keras.ipu.layers import CaptureActivationGradients
    >>> dense = keras.layers.Dense(2, activation="tanh", kernel_initializer="ones", name="dense")
    >>> layer = CaptureActivationGradients(dense)
    >>> from ipu_teach.autograd import Tensor
    >>> x = Tensor(np.array([[1.0, -2.0, 0.5]], np.float32))
    >>> layer(x).sum().backward()    # at the pre-activation -0.5: tanh'(-0.5) = 1 - tanh(-0.5) ** 2
    >>> np.round(layer.captured_gradients["dense_cag_activation"], 4)
    array([[0.7864, 0.7864]], dtype=float32)
    """

    def __init__(self, layer, tag=None):
        super().__init__(_checked(layer), tag if tag is not None else f"{layer.name}_cag")
        found = [name for name in _ACTIVATIONS if callable(getattr(layer, name, None))]
        if not found:
            raise ValueError(
                f"Layer {layer.name} does not use an activation function so is not supported by "
                "keras.ipu.layers.CaptureActivationGradients"
            )
        for name in found:
            setattr(layer, name, self._capturing(getattr(layer, name), f"{self.tag}_{name}"))

    def _capturing(self, activation, tag):
        store = self.captured_gradients

        def captured(x):
            return activation(ops.capture_gradient(x, store=store, tag=tag))

        captured.__name__ = activations.serialize(activation)
        return captured

    def call(self, inputs, training=False):
        return self.layer(inputs, training=training)


def captured_gradients(model) -> dict:
    """Every gradient the model's capture layers kept on the last backward pass, by tag, each store emptied."""
    captured = {}
    for layer in model._flatten_layers():
        if isinstance(layer, _GradientCapture):
            captured.update(layer.captured_gradients)
            layer.captured_gradients.clear()
    return captured


__all__ = ["CaptureActivationGradients", "CaptureUpstreamGradients"]
