"""``tf.dtypes``: the DType class, ``as_dtype`` and every dtype name (``tf.dtypes.float32``...)."""

from ..dtypes import DTYPES, DType, as_dtype

globals().update(DTYPES)

__all__ = ["DType", "as_dtype", *DTYPES]
