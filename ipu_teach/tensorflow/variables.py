"""``tf.Variable``: a value a custom loop trains, an autograd leaf that needs a gradient.

A trainable variable is what ``tf.GradientTape`` differentiates with respect to, like a Keras weight;
``assign``, ``assign_add`` and ``assign_sub`` replace its value in place (the tensors computed from it
before keep theirs), as TensorFlow's do.

Example:

>>> import ipu_teach.tensorflow as tf
>>> v = tf.Variable([1.0, 2.0], name="v")
>>> v.assign_sub([0.5, 0.5]).numpy()
array([0.5, 1.5], dtype=float32)
>>> v.name, v.trainable
('v:0', True)
"""

import numpy as np

from ..autograd import Tensor
from .tensor import python_default


class Variable(Tensor):
    """A named, assignable tensor; trainable ones get gradients.

    Args:
      initial_value: The value (array-like, a tensor, or a callable returning one).
      trainable: Boolean: whether gradients flow to it. Default: True.
      name: Optional name; ``":0"`` is added, as TensorFlow names a variable's tensor. Default: ``"Variable"``.
      dtype: Optional dtype (Python floats are float32 and ints int32, as in TensorFlow).
    """

    __slots__ = ("trainable",)

    def __init__(self, initial_value=None, trainable=True, name=None, dtype=None, **kwargs):
        if initial_value is None:
            raise ValueError("tf.Variable: initial_value must be given")
        if callable(initial_value):
            initial_value = initial_value()
        if isinstance(initial_value, Tensor):
            initial_value = initial_value.data
        value = np.array(python_default(initial_value, dtype))
        super().__init__(value, requires_grad=bool(trainable), name=f"{name or 'Variable'}:0")
        self.trainable = bool(trainable)

    def assign(self, value, use_locking=False, name=None, read_value=True):
        value = np.asarray(value, dtype=self.dtype)
        if value.shape != self.shape:
            raise ValueError(
                f"tf.Variable {self.name}: cannot assign a value of shape {value.shape} to a variable of shape "
                f"{self.shape}"
            )
        self.data = value.copy()
        return self

    def assign_add(self, delta, use_locking=False, name=None, read_value=True):
        return self.assign(self.data + np.asarray(delta, dtype=self.dtype))

    def assign_sub(self, delta, use_locking=False, name=None, read_value=True):
        return self.assign(self.data - np.asarray(delta, dtype=self.dtype))

    def read_value(self):
        return Tensor(self.data.copy())

    def value(self):
        return self.read_value()

    def __repr__(self):
        return f"<tf.Variable '{self.name}' shape={self.shape} dtype={self.dtype}, numpy={self.data!r}>"
