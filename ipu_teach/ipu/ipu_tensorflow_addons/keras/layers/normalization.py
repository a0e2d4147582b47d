"""Graphcore's IPU normalisations (``ipu_tensorflow_addons/keras/layers/normalization.py``): PopLibs' group
norm, as ``GroupNormalization``, ``InstanceNormalization`` (a group per channel) and ``LayerNormalization`` (one
group), over the last axis (channels last)."""

from .....autograd import ops
from .....keras import layers
from .unsupported import check_unsupported


class LayerNormalization(layers.LayerNormalization):
    """Layer normalisation made for the IPU (``ipu_tensorflow_addons.keras.layers.LayerNormalization``).

    Graphcore computes it as PopLibs' group normalisation with one group over the normalised axes; the
    numbers are Keras' ``LayerNormalization``'s (same ``epsilon`` default, 1e-3). ipu-teach normalises the last
    axis (``axis=-1``).

    Raises:
      NotImplementedError: for ``beta_regularizer``, ``gamma_regularizer``, ``beta_constraint`` or
        ``gamma_constraint``, which Graphcore's layer does not support.

    Example:

    >>> from ipu_teach.ipu.ipu_tensorflow_addons.keras.layers import LayerNormalization
    >>> out = LayerNormalization()(np.array([[1.0, 3.0]], np.float32)).data
    >>> np.round(out, 4)             # (x - mean) / sqrt(variance + epsilon)
    array([[-0.9995,  0.9995]], dtype=float32)
    """

    def __init__(
        self,
        axis=-1,
        epsilon=1e-3,
        center=True,
        scale=True,
        beta_initializer="zeros",
        gamma_initializer="ones",
        beta_regularizer=None,
        gamma_regularizer=None,
        beta_constraint=None,
        gamma_constraint=None,
        **kwargs,
    ):
        check_unsupported(
            self,
            beta_regularizer=beta_regularizer,
            gamma_regularizer=gamma_regularizer,
            beta_constraint=beta_constraint,
            gamma_constraint=gamma_constraint,
        )
        super().__init__(axis, epsilon, center, scale, beta_initializer, gamma_initializer, **kwargs)


LayerNorm = LayerNormalization


def _glorot_if_none(initializer):
    """Graphcore's layer passes ``None`` on to Keras' ``add_weight``, which then makes float weights with
    ``glorot_uniform`` (Keras 2.6 ``base_layer.add_weight``): gamma and beta start random, not at ones and zeros."""
    return "glorot_uniform" if initializer is None else initializer


class GroupNormalization(layers.GroupNormalization):
    """Group normalisation made for the IPU (``ipu_tensorflow_addons.keras.layers.GroupNormalization``).

    Graphcore's arguments and defaults: two groups, ``channels_axis`` (the last axis here: ipu-teach's layers
    are channels last), ``strided_channel_grouping=True`` (PopLibs' faster grouping: channel c belongs to group
    ``c % groups``, not to the run of neighbouring channels Keras' ``GroupNormalization`` groups; weights
    trained one way do not fit the other), and gamma and beta initialised by ``glorot_uniform`` unless given.

    Example:

    >>> from ipu_teach.ipu.ipu_tensorflow_addons.keras.layers import GroupNormalization
    >>> x = np.array([[1.0, 10.0, 2.0, 20.0]], np.float32)   # groups: channels 0 and 2, 1 and 3
    >>> np.round(GroupNormalization(beta_initializer="zeros", gamma_initializer="ones")(x).data, 3)
    array([[-0.998, -1.   ,  0.998,  1.   ]], dtype=float32)
    """

    def __init__(
        self,
        groups=2,
        channels_axis=-1,
        center=True,
        scale=True,
        epsilon=1e-3,
        beta_initializer=None,
        gamma_initializer=None,
        strided_channel_grouping=True,
        **kwargs,
    ):
        super().__init__(
            groups,
            channels_axis,
            epsilon,
            center,
            scale,
            _glorot_if_none(beta_initializer),
            _glorot_if_none(gamma_initializer),
            **kwargs,
        )
        self.strided_grouping = bool(strided_channel_grouping)

    group_norm = staticmethod(ops.group_norm)
    """Keras' numbers, as one popnn group norm on the IPU (``ops.group_norm``), as Graphcore's layer runs it."""


class InstanceNormalization(GroupNormalization):
    """Instance normalisation made for the IPU (``ipu_tensorflow_addons.keras.layers.InstanceNormalization``):
    Graphcore's group normalisation with one group per channel, each sample's channels normalised apart.

    Example:

    >>> from ipu_teach.ipu.ipu_tensorflow_addons.keras.layers import InstanceNormalization
    >>> x = np.array([[[1.0, 5.0], [3.0, 9.0]]], np.float32)   # two positions, two channels
    >>> np.round(InstanceNormalization(beta_initializer="zeros", gamma_initializer="ones")(x).data, 3)
    array([[[-1., -1.],
            [ 1.,  1.]]], dtype=float32)
    """

    def __init__(
        self,
        channels_axis=-1,
        center=True,
        scale=True,
        epsilon=1e-3,
        beta_initializer=None,
        gamma_initializer=None,
        **kwargs,
    ):
        super().__init__(0, channels_axis, center, scale, epsilon, beta_initializer, gamma_initializer, **kwargs)

    def _groups_for(self, channels) -> int:
        return channels  # Graphcore sets its groups from the input shape in build


GroupNorm = GroupNormalization
InstanceNorm = InstanceNormalization
