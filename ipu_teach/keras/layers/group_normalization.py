"""GroupNormalization (tf-keras ``layers/normalization/group_normalization.py``): each sample normalised over
groups of its channels (the last axis) together with all its other axes, then scaled and shifted per channel.

One group is LayerNormalization over every axis but the batch; as many groups as channels is instance
normalisation. The statistics always come from the sample itself, in training and inference alike.
"""

from ...autograd.ops.group_normalization import composite
from .base import Layer, same_shape
from .normalization import scale_and_offset


class GroupNormalization(Layer):
    """Group normalisation (Wu and He, 2018), as ``keras.layers.GroupNormalization``.

    Args:
      groups: How many groups the channels are split into; must divide the number of channels. Default: 32.
      axis: The channels' axis: the last one (-1), the only one ipu-teach normalises.
      epsilon: Added to each group's variance. Default: 1e-3.
      center, scale: Whether to add ``beta`` and multiply by ``gamma`` (per channel).
      beta_initializer, gamma_initializer: Their initializers (zeros and ones).

    Example:

    >>> x = np.array([[1.0, 2.0, 10.0, 20.0]], np.float32)
    >>> np.round(keras.layers.GroupNormalization(groups=2)(x).data, 3)   # (1, 2) and (10, 20) apart
    array([[-0.998,  0.998, -1.   ,  1.   ]], dtype=float32)
    """

    min_ndim = 2
    supports_masking = True  # the mask passes through, as Keras
    strided_grouping = False
    """Keras' groups are runs of neighbouring channels; Graphcore's IPU layer takes every ``groups``-th one."""

    def __init__(
        self,
        groups=32,
        axis=-1,
        epsilon=1e-3,
        center=True,
        scale=True,
        beta_initializer="zeros",
        gamma_initializer="ones",
        **kwargs,
    ):
        super().__init__(**kwargs)
        if axis not in (-1, [-1], (-1,)):
            raise ValueError(
                f"{type(self).__name__}: ipu-teach normalises the channels of the last axis only (channels last); "
                f"use axis=-1 (got {axis})"
            )
        self.groups, self.epsilon, self.center, self.scale = groups, epsilon, center, scale
        self._initializers = (gamma_initializer, beta_initializer)

    def _groups_for(self, channels) -> int:
        return self.groups

    def build(self, input_shape):
        """``gamma`` only with ``scale``, ``beta`` only with ``center``, one value per channel; the groups are
        checked against the channels with Keras' messages."""
        channels = input_shape[-1]
        if channels is None:
            raise ValueError(
                f"Axis -1 of input tensor should have a defined dimension but the layer received an input with "
                f"shape {tuple(input_shape)}."
            )
        groups = self._groups_for(channels)
        if groups > channels:
            raise ValueError(f"Number of groups ({groups}) cannot be more than the number of channels ({channels}).")
        if channels % groups:
            raise ValueError(f"Number of groups ({groups}) must be a multiple of the number of channels ({channels}).")
        self.gamma = self.add_weight("gamma", (channels,), initializer=self._initializers[0]) if self.scale else None
        self.beta = self.add_weight("beta", (channels,), initializer=self._initializers[1]) if self.center else None

    compute_output_shape = same_shape

    group_norm = staticmethod(composite)
    """How the layer normalises (``inputs, gamma, beta, groups, epsilon, strided=``): Keras' composite, its ops
    recorded one by one, as TensorFlow runs it; Graphcore's layer runs popnn's one op instead."""

    def call(self, inputs, training=False):
        """Each group gathered into one row per sample (a reshape and a transpose), normalised as a layer
        normalisation of that row, put back in place, then ``gamma`` and ``beta`` per channel (``group_norm``)."""
        channels = tuple(inputs.shape)[-1]
        gamma, beta = scale_and_offset(self, channels)
        return self.group_norm(
            inputs, gamma, beta, self._groups_for(channels), self.epsilon, strided=self.strided_grouping
        )
