"""Graphcore's ``SerialDense``: a Dense layer whose matrix product is split into smaller ones, run in turn."""

from .....autograd import ops
from .....keras import layers

SERIALIZATION_DIMENSIONS = ("input_columns", "input_rows_kernel_columns", "kernel_rows")


class SerialDense(layers.Dense):
    """A Dense layer whose product ``inputs @ kernel`` is computed as ``serialization_factor`` smaller products,
    one after the other (``ipu_tensorflow_addons.keras.layers.SerialDense``, with Graphcore's
    ``math_ops.serialized_matmul``): less temporary memory and code for a large product, at the cost of more
    steps. The numbers are Keras' ``Dense``'s; each smaller product is costed as the IPU runs it.

    For inputs ``[..., m, k]`` and a kernel ``[k, n]``, ``serialization_dimension`` says which is split:
    ``"input_columns"`` the ``m`` rows of the inputs (outputs put side by side), ``"input_rows_kernel_columns"``
    the shared ``k`` (partial products added up), ``"kernel_rows"`` the kernel's ``n`` columns.

    Args:
      units: Positive integer, dimensionality of the output space.
      serialization_factor: Integer, how many products the one is split into; it must divide the dimension
        that is split.
      serialization_dimension: One of ``"input_columns"``, ``"input_rows_kernel_columns"``, ``"kernel_rows"``.
      **kwargs: Keras' Dense arguments (``activation``, ``use_bias``, initializers...).

    Raises:
      ValueError: for a factor below 1, a dimension it does not divide or an unknown dimension name.

    Example:

    >>> from ipu_teach.ipu.ipu_tensorflow_addons.keras.layers import SerialDense
    >>> layer = SerialDense(4, serialization_factor=2, serialization_dimension="kernel_rows")
    >>> x = np.ones((3, 6), np.float32)
    >>> np.allclose(layer(x).data, x @ layer.kernel.data)
    True
    """

    def __init__(self, units, serialization_factor, serialization_dimension, **kwargs):
        if "input_dim" in kwargs and "input_shape" not in kwargs:
            kwargs["input_shape"] = (kwargs.pop("input_dim"),)
        super().__init__(units, **kwargs)
        if int(serialization_factor) < 1:
            raise ValueError(f"serialization_factor has to be at least 1, but was {serialization_factor}.")
        if serialization_dimension not in SERIALIZATION_DIMENSIONS:
            raise ValueError(
                f"Invalid serialization_dimension={serialization_dimension}, expected one of: "
                + ", ".join(f"'{d}'" for d in SERIALIZATION_DIMENSIONS)
                + "."
            )
        self.serialization_factor, self.serialization_dimension = int(serialization_factor), serialization_dimension

    def _split(self, size, what):
        if size % self.serialization_factor:
            raise ValueError(
                f"Expected 'serialization_factor' ({self.serialization_factor}) to divide {what} ({size})."
            )
        step = size // self.serialization_factor
        return [(start, start + step) for start in range(0, size, step)]

    def call(self, inputs, training=False):
        kernel, dimension = self.kernel, self.serialization_dimension
        if dimension == "input_columns":
            rows = self._split(inputs.shape[-2], "the columns dimension of 'a'")
            y = ops.concatenate([ops.matmul(ops.slice_axis(inputs, a, b, axis=-2), kernel) for a, b in rows], axis=-2)
        elif dimension == "input_rows_kernel_columns":
            y = None
            for a, b in self._split(kernel.shape[0], "the rows dimension of 'a'"):
                part = ops.matmul(ops.slice_axis(inputs, a, b, axis=-1), ops.slice_axis(kernel, a, b, axis=0))
                y = part if y is None else ops.add(y, part)
        else:
            columns = self._split(kernel.shape[1], "the rows dimension of 'b'")
            y = ops.concatenate([ops.matmul(inputs, ops.slice_axis(kernel, a, b, axis=1)) for a, b in columns], axis=-1)
        if self.bias is not None:
            y = ops.add(y, self.bias)
        return self.activation(y)
