"""Graphcore's IPU ``Dropout``: Keras' dropout, with the IPU's seed pair and ``ref`` argument."""

import numpy as np

from .....keras import layers


class Dropout(layers.Dropout):
    """Dropout made for the IPU (``ipu_tensorflow_addons.keras.layers.Dropout``, Poplar's ``rand_ops.dropout``).

    In training it zeroes a fraction ``rate`` of the values and scales the rest by ``1 / (1 - rate)``; in
    inference it passes its input through, as Keras' ``Dropout``. The IPU draws the mask on the device from
    its own generator; here it comes from the seeded generator as Keras' does.

    Args:
      rate: Float in [0, 1), the fraction of the input units to drop.
      noise_shape: Shape of the dropout mask, ``None`` entries taking the input's size. Default: None.
      seed: None, or a pair of 32-bit integers seeding the mask's generator (Graphcore's form). Default: None.
      ref: Accepted, as Graphcore's layer takes it (whether the mask is kept for the backward pass or
        regenerated from the seed); the simulated IPU keeps the mask.

    Raises:
      ValueError: for a rate outside [0, 1) or a seed that is not a pair of integers.

    Example:

    >>> from ipu_teach.ipu.ipu_tensorflow_addons.keras.layers import Dropout
    >>> layer = Dropout(0.5, seed=[1, 2])
    >>> sorted(set(layer(np.ones((2, 4), np.float32), training=True).data.ravel().tolist()))
    [0.0, 2.0]
    """

    def __init__(self, rate, noise_shape=None, seed=None, ref=True, **kwargs):
        if seed is not None and (np.shape(seed) != (2,) or not np.issubdtype(np.asarray(seed).dtype, np.integer)):
            raise ValueError(f"Dropout: seed must be None or a pair of 32-bit integers, got {seed!r}")
        pair = None if seed is None else [int(s) for s in seed]  # numpy's generator takes the pair as its seed
        super().__init__(rate, noise_shape=noise_shape, seed=pair, **kwargs)
        self.ref = bool(ref)
