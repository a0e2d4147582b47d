"""``tf.experimental.numpy``: TensorFlow's NumPy API, for the array helpers scripts use on the host (joining and
splitting arrays, as Graphcore's TensorBoard tutorial does to tile a convolution's filters into one image). Each
takes tensors or arrays and returns eager tensors (no gradient: a tensor that needs one is refused, naming the
function, as the other ``tf`` functions without an autograd op do); other names raise ``NotSimulatedError`` naming them.

Example:

>>> import ipu_teach.tensorflow as tf
>>> [part.shape for part in tf.experimental.numpy.dsplit(tf.zeros((2, 3, 4)), 4)]
[(2, 3, 1), (2, 3, 1), (2, 3, 1), (2, 3, 1)]
>>> tf.experimental.numpy.hstack([tf.ones((2, 1)), tf.zeros((2, 2))]).numpy().tolist()
[[1.0, 0.0, 0.0], [1.0, 0.0, 0.0]]
"""

import numpy as np

from ...not_simulated import NotSimulatedError
from ..differentiable import needs_gradient, not_differentiable
from ..tensor import tensor


def _host_arrays(function: str, values) -> list:
    """``values`` as numpy arrays, refusing a tensor whose gradient is being taken (these functions have none)."""
    if needs_gradient(*values):
        raise not_differentiable(f"experimental.numpy.{function}")
    return [np.asarray(value) for value in values]


def _joining(name):
    join = getattr(np, name)

    def function(tup):
        return tensor(join(_host_arrays(name, list(tup))))

    function.__name__ = name
    function.__doc__ = f"``np.{name}`` of tensors or arrays, as an eager tensor."
    return function


def _splitting(name):
    split = getattr(np, name)

    def function(ary, indices_or_sections):
        (array,) = _host_arrays(name, [ary])
        return [tensor(part) for part in split(array, indices_or_sections)]

    function.__name__ = name
    function.__doc__ = f"``np.{name}`` of a tensor or array, as a list of eager tensors."
    return function


hstack, vstack, dstack = _joining("hstack"), _joining("vstack"), _joining("dstack")
hsplit, vsplit, dsplit = _splitting("hsplit"), _splitting("vsplit"), _splitting("dsplit")


def concatenate(arys, axis=0):
    """``np.concatenate`` of tensors or arrays, as an eager tensor."""
    return tensor(np.concatenate(_host_arrays("concatenate", list(arys)), axis=axis))


def split(ary, indices_or_sections, axis=0):
    """``np.split`` of a tensor or array, as a list of eager tensors."""
    (array,) = _host_arrays("split", [ary])
    return [tensor(part) for part in np.split(array, indices_or_sections, axis=axis)]


def __getattr__(name):
    raise NotSimulatedError(f"tensorflow.experimental.numpy.{name}", globals())
