"""Bidirectional: an RNN run forwards and backwards over the sequence, outputs merged (tf-keras
``layers/rnn/bidirectional.py``): two copies of the layer made from its config, the backward one with
``go_backwards`` flipped, whose sequence output is put back in time order (a Reverse op, a view).
Weights: the forward layer's, then the backward layer's, as Keras."""

from ...autograd import ops
from ..engine import config as layer_config
from .base import Layer

MERGE_MODES = ("sum", "mul", "ave", "concat", None)


def layer_from_config(entry) -> Layer:
    """A layer from Keras' ``{"class_name": ..., "config": ...}``, of a class ``keras.layers`` offers."""
    from .. import layers as layers_module

    known = layer_config.known_classes(layers_module, Layer)
    name = entry.get("class_name") if isinstance(entry, dict) else None
    if name not in known:
        raise ValueError(f"Bidirectional: unknown layer class {str(name)[:80]!r} in its configuration")
    return known[name].from_config(entry.get("config", {}))


class Bidirectional(Layer):
    """Bidirectional wrapper for RNNs: ``Bidirectional(LSTM(8, return_sequences=True))`` reads the sequence
    both ways; ``merge_mode`` ``"concat"`` (default: twice the units), ``"sum"``, ``"mul"``, ``"ave"`` or None
    (the two outputs, forward then backward).

    Example:

    >>> layer = keras.layers.Bidirectional(keras.layers.LSTM(4, return_sequences=True))
    >>> layer(keras.Input((5, 3))).shape, len(layer.weights)
    ((None, 5, 8), 6)
    """

    supports_masking = True

    ndim = 3

    def __init__(self, layer, merge_mode="concat", weights=None, backward_layer=None, **kwargs):
        if isinstance(layer, dict):
            layer = layer_from_config(layer)
        if isinstance(backward_layer, dict):
            backward_layer = layer_from_config(backward_layer)
        if not isinstance(layer, Layer):
            raise ValueError(
                f"Please initialize `Bidirectional` layer with a `tf.keras.layers.Layer` instance. Received: {layer}"
            )
        if backward_layer is not None and not isinstance(backward_layer, Layer):
            raise ValueError(
                f"`backward_layer` need to be a `tf.keras.layers.Layer` instance. Received: {backward_layer}"
            )
        if merge_mode not in MERGE_MODES:
            raise ValueError(
                f"Invalid merge mode. Received: {merge_mode}. Merge mode should be one of "
                '{"sum", "mul", "ave", "concat", None}'
            )
        if weights is not None:
            raise ValueError("Bidirectional: pass the weights with set_weights once the layer is built")
        super().__init__(**kwargs)
        self.layer, self.merge_mode = layer, merge_mode
        self._backward_layer_config = None if backward_layer is None else _serialized(backward_layer)  # before renaming
        self.forward_layer = _remade(layer)
        self.backward_layer = backward_layer if backward_layer is not None else _remade(layer, go_backwards=True)
        if self.forward_layer.go_backwards == self.backward_layer.go_backwards:
            raise ValueError(
                "Forward layer and backward layer should have different `go_backwards` value."
                f"forward_layer.go_backwards = {self.forward_layer.go_backwards},"
                f"backward_layer.go_backwards = {self.backward_layer.go_backwards}"
            )
        for attribute in ("return_sequences", "return_state"):
            forward, backward = (getattr(self.forward_layer, attribute), getattr(self.backward_layer, attribute))
            if forward != backward:
                raise ValueError(
                    f'Forward layer and backward layer are expected to have the same value for attribute "{attribute}",'
                    f' got "{forward}" for forward layer and "{backward}" for backward layer'
                )
        for layer in (self.forward_layer, self.backward_layer):
            layer.zero_output_for_mask = layer.return_sequences  # as Keras' Bidirectional forces it
        self.forward_layer.name = "forward_" + self.forward_layer.name
        self.backward_layer.name = "backward_" + self.backward_layer.name
        self.return_sequences = self.forward_layer.return_sequences
        if self.forward_layer.return_state:
            raise ValueError("Bidirectional: ipu-teach does not simulate return_state=True in Bidirectional yet")

    def build(self, input_shape):
        for layer in (self.forward_layer, self.backward_layer):
            layer._ensure_built(input_shape)
            self._weights += layer._weights
            self._trainable_flags += layer._trainable_flags

    @property
    def losses(self) -> list:
        return super().losses + self.forward_layer.losses + self.backward_layer.losses

    def compute_mask(self, inputs, mask=None):
        return mask if self.return_sequences else None

    def compute_output_shape(self, input_shape):
        shape = tuple(self.forward_layer.compute_output_shape(input_shape))
        if self.merge_mode is None:
            return [shape, shape]
        return shape[:-1] + (2 * shape[-1],) if self.merge_mode == "concat" else shape

    def call(self, inputs, training=False):
        forward = self.forward_layer(inputs, training=training)
        backward = self.backward_layer(inputs, training=training)
        if self.return_sequences:
            backward = ops.reverse(backward, axis=1)
        if self.merge_mode is None:
            return [forward, backward]
        if self.merge_mode == "concat":
            return ops.concatenate([forward, backward], axis=-1)
        if self.merge_mode == "sum":
            return ops.add(forward, backward)
        if self.merge_mode == "mul":
            return ops.mul(forward, backward)
        return ops.mul(ops.add(forward, backward), 0.5)  # "ave"

    def get_config(self) -> dict:
        """Keras' form: the wrapped layer as ``{"class_name", "config"}`` (the one given, not the copies)."""
        arguments = {k: v for k, v in self._init_arguments.items() if k not in ("layer", "backward_layer")}
        config = {**layer_config.encode(arguments), "name": self.name, "trainable": self.trainable}
        config["layer"] = _serialized(self.layer)
        if self._backward_layer_config is not None:
            config["backward_layer"] = self._backward_layer_config
        return config


def _serialized(layer) -> dict:
    return {"class_name": type(layer).__name__, "config": layer.get_config()}


def _remade(layer, go_backwards=False) -> Layer:
    """A new layer from ``layer``'s config (so it shares no weights), ``go_backwards`` flipped if asked."""
    config = layer.get_config()
    if go_backwards:
        config["go_backwards"] = not layer.go_backwards
    return type(layer).from_config(config)
