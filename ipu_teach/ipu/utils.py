"""``ipu.utils`` (``from tensorflow.python.ipu import utils``): the helpers Graphcore's Keras scripts call.

Source: graphcore/tensorflow ``tensorflow/python/ipu/utils.py`` (SDK 3.x). ipu-teach adds ``estimate`` and
``shape_only_weights``, for sizing a model without training it.

Example:

>>> with ipu.utils.shape_only_weights():          # weights of shape and dtype only: no values made
...     model = keras.Sequential([keras.layers.Dense(10, input_shape=(784,))])
>>> model.count_params(), model.weights[0].data
(7850, ShapedArray(shape=(784, 10), dtype=float32))
"""

from ..keras import backend
from ..keras.engine.shape_only_weights import shape_only_weights  # noqa: F401
from . import system

# Graphcore's utils.py imports these from config.py, and scripts use them from there
# (``ipu.utils.IPUConfig()``, ``ipu.utils.DeviceConnectionType.PRE_COMPILE``).
from .config import DeviceConnectionType, IPUConfig, SelectionOrder, configure_ipu_system  # noqa: F401
from .estimate import Estimate, estimate  # noqa: F401 (ipu.utils.estimate)


def move_variable_initialization_to_cpu(graph=None) -> None:
    """On the real system, runs variable initialisers on the host instead of compiling them into the IPU
    program. ipu-teach always creates and initialises weights on the host (in numpy) and streams them to
    the simulated IPUs, so there is nothing to move; the call is accepted as the scripts make it."""


def reset_ipu_seed(seed, device="/device:IPU:0", cpu_device="cpu", experimental_identical_replicas=False) -> None:
    """Reseed the random numbers drawn on the IPU: dropout masks (ipu-teach draws them from Keras' generator,
    so this seeds that, weight initialisers included) and stochastic rounding."""
    backend.set_random_seed(int(seed))
    system.reseed_rounding(int(seed))
