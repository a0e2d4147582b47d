"""``ipu_tensorflow_addons.keras.layers``: Graphcore's Keras layers made for the IPU.

Each is an ipu-teach Keras layer with Graphcore's arguments (graphcore/ipu_tensorflow_addons
``ipu_tensorflow_addons/keras/layers``): ``Embedding`` (a multi-slice, serialisable), ``Dropout``,
``GroupNormalization`` (PopLibs' strided grouping), ``InstanceNormalization``, ``LayerNormalization``,
``PopnnLSTM`` (also ``LSTM``: PopLibs' fused cell, one matrix product per step), ``PopnnGRU`` (also ``GRU``),
``RecomputationCheckpoint`` and ``SerialDense``. The others of the package (``CTCLoss``,
``EffectiveTransformer``, the fp8 layers...) are not simulated.

Example:

>>> from ipu_teach.ipu.ipu_tensorflow_addons.keras.layers import Embedding, LSTM
>>> x = keras.Input(shape=(80,))
>>> y = LSTM(16)(Embedding(1000, 8)(x))
>>> y.shape
(None, 16)
"""

from .dense import SerialDense
from .dropout import Dropout
from .embedding import Embedding
from .normalization import (
    GroupNorm,
    GroupNormalization,
    InstanceNorm,
    InstanceNormalization,
    LayerNorm,
    LayerNormalization,
)
from .recomputation import RecomputationCheckpoint
from .rnn import GRU, LSTM, PopnnGRU, PopnnLSTM

__all__ = [
    "Dropout",
    "Embedding",
    "GRU",
    "GroupNorm",
    "GroupNormalization",
    "InstanceNorm",
    "InstanceNormalization",
    "LSTM",
    "LayerNorm",
    "LayerNormalization",
    "PopnnGRU",
    "PopnnLSTM",
    "RecomputationCheckpoint",
    "SerialDense",
]
