"""Graphcore's IPU ``LayerNormalization`` (PopLibs' group norm with one group), over the last axis."""

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
