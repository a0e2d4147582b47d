"""Training-time noise beside Dropout: SpatialDropout2D (whole feature maps dropped) and GaussianNoise
(tf-keras ``layers/regularization/``). Both are the identity in inference, as in Keras, and draw from
the seeded Keras generator (``keras.utils.set_random_seed``) in training."""

import numpy as np

from ...autograd import Tensor, ops
from .. import backend
from .base import Layer, same_shape
from .core import Dropout


class SpatialDropout2D(Dropout):
    """Dropout of whole channels of NHWC images: one draw per sample and channel, kept for every pixel,
    as Keras (its ``noise_shape`` is ``(batch, 1, 1, channels)``).

    Example:

    >>> keras.utils.set_random_seed(0)
    >>> y = keras.layers.SpatialDropout2D(0.5)(np.ones((1, 2, 2, 3), np.float32), training=True).data
    >>> bool((y == y[:, :1, :1, :]).all())                  # one value per channel
    True
    """

    ndim = 4

    def __init__(self, rate, data_format=None, **kwargs):
        super().__init__(rate, **kwargs)
        if data_format not in (None, "channels_last"):
            raise ValueError("SpatialDropout2D: ipu-teach supports data_format='channels_last' only")
        self.noise_shape = (None, 1, 1, None)


class GaussianNoise(Layer):
    """Adds zero-centred Gaussian noise of standard deviation ``stddev`` in training (a regulariser);
    nothing in inference. One Add op on the IPU (the noise comes with the data).

    Example:

    >>> layer = keras.layers.GaussianNoise(0.1)
    >>> x = np.ones((2, 3), np.float32)
    >>> bool((layer(x).data == x).all()), bool((layer(x, training=True).data != x).all())
    (True, True)
    """

    supports_masking = True

    compute_output_shape = same_shape

    def __init__(self, stddev, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.stddev = float(stddev)
        self._rng = np.random.default_rng(seed) if seed is not None else None

    def call(self, inputs, training=False):
        if not training:
            return inputs
        noise = (self._rng or backend.rng()).normal(0.0, self.stddev, inputs.shape)
        return ops.add(inputs, Tensor(noise.astype(inputs.dtype)))
