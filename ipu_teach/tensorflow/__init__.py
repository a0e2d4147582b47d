"""``tf`` for ipu-teach: the part of TensorFlow 2 that Keras scripts for the IPU use, on the simulator.

``ipu-teach run script.py`` makes ``import tensorflow as tf`` give this module (see
``ipu_teach.tensorflow.import_map``); it can also be imported directly:
``import ipu_teach.tensorflow as tf``. ``tf.keras`` is ``ipu_teach.keras``. A TensorFlow name it
lacks raises ``NotSimulatedError`` naming it. ``__version__`` is the TensorFlow that Graphcore's
Poplar SDK 3.x shipped (its wheels are ``tensorflow-2.6.3+gc3.x``), whose API this follows.

Example:

>>> import ipu_teach.tensorflow as tf
>>> tf.reduce_sum(tf.constant([[1.0, 2.0], [3.0, 4.0]]), axis=0), tf.keras is keras
(EagerTensor([4., 6.], dtype=float32), True)
"""

import importlib as _importlib

from ..dtypes import DTYPES as _DTYPES, DType, as_dtype
from ..data.tensor_spec import TensorSpec
from ..not_simulated import NotSimulatedError, NotSimulatedModule
from . import compat, config, data, distribute, dtypes, experimental, math, nn, random, summary
from .array_ops import (
    cast,
    clip_by_value,
    concat,
    constant,
    convert_to_tensor,
    expand_dims,
    fill,
    gather,
    identity,
    is_tensor,
    one_hot,
    ones,
    ones_like,
    range,
    rank,
    reshape,
    shape,
    size,
    squeeze,
    stack,
    stop_gradient,
    transpose,
    where,
    zeros,
    zeros_like,
)
from .clip_ops import clip_by_global_norm, clip_by_norm
from .control_flow import cond, control_dependencies, no_op, print, while_loop  # noqa: A004 (tf.print)
from .function import function
from .gradient_tape import GradientTape
from .placement import device
from .math import (
    abs,
    add,
    argmax,
    argmin,
    divide,
    einsum,
    equal,
    exp,
    greater,
    less,
    log,
    matmul,
    maximum,
    minimum,
    multiply,
    not_equal,
    pow,
    reduce_all,
    reduce_any,
    reduce_max,
    reduce_mean,
    reduce_min,
    reduce_prod,
    reduce_sum,
    round,
    sigmoid,
    sign,
    sqrt,
    square,
    subtract,
    tanh,
    truediv,
)
from .tensor import EagerTensor as Tensor
from .variables import Variable

__version__ = "2.6.3"
VERSION = __version__
newaxis = None

globals().update(_DTYPES)  # tf.float32, tf.int32, ... tf.bool

# TensorFlow 2.6's public modules that ipu-teach does not simulate: using a name in one says which.
_TF_MODULES = (
    "audio",
    "autodiff",
    "autograph",
    "bitwise",
    "debugging",
    "errors",
    "estimator",
    "feature_column",
    "graph_util",
    "image",
    "io",
    "linalg",
    "lite",
    "lookup",
    "mixed_precision",
    "mlir",
    "nest",
    "profiler",
    "quantization",
    "queue",
    "ragged",
    "raw_ops",
    "saved_model",
    "sets",
    "signal",
    "sparse",
    "strings",
    "sysconfig",
    "test",
    "tpu",
    "train",
    "types",
    "version",
    "xla",
)


# TensorFlow 2.6's aliases of Keras modules (``tf.optimizers.SGD`` is ``tf.keras.optimizers.SGD``), as the slides use.
_KERAS_ALIASES = ("initializers", "losses", "metrics", "optimizers")


def __getattr__(name):
    if name == "keras":  # loaded on first use, as in TensorFlow
        return _importlib.import_module("ipu_teach.keras")
    if name in _KERAS_ALIASES:
        return _importlib.import_module(f"ipu_teach.keras.{name}")
    if name in _TF_MODULES:
        return NotSimulatedModule(f"tensorflow.{name}")
    raise NotSimulatedError(f"tensorflow.{name}", globals())
