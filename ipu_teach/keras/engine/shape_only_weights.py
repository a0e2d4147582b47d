"""Weights with a shape and a dtype but no values, for sizing a model too big to build in the host's memory.

Inside :func:`shape_only_weights`, ``Layer.add_weight`` makes each weight a Tensor of a ShapedArray
(``autograd.symbolic``) instead of calling its initializer: a ``Dense(20000)`` on 20,000 features costs no
1.6 GB. Such a model can be compiled without running (``DeviceConnectionType.PRE_COMPILE``) and sized
(``ipu.utils.estimate``), whose shape-only lowering never asks a weight for its values; training or
predicting with it is refused. Per thread, as building is.
"""

import contextlib
import threading

_local = threading.local()


@contextlib.contextmanager
def shape_only_weights():
    """Inside, layers create weights of shape and dtype only (no values, no memory): for sizing a model.

    Example:

    >>> from ipu_teach import keras
    >>> from ipu_teach.ipu import utils
    >>> with utils.shape_only_weights():
    ...     model = keras.Sequential([keras.layers.Dense(20_000, input_shape=(20_000,))])
    >>> model.weights[0].data
    ShapedArray(shape=(20000, 20000), dtype=float32)
    """
    outer = getattr(_local, "active", False)
    _local.active = True
    try:
        yield
    finally:
        _local.active = outer


def active() -> bool:
    """Whether weights created now have no values."""
    return getattr(_local, "active", False)


def without_values(model) -> bool:
    """Whether any weight of ``model`` has no values (it was built inside :func:`shape_only_weights`)."""
    from ...autograd.symbolic import is_symbolic

    # a stand-in's weights (a custom loop's, poptorch's) state a name, size and dtype but hold no data
    return any(is_symbolic(getattr(w, "data", None)) for w in model.weights)


def check_runnable(model) -> None:
    """Refuse to run ``model``'s numerics when its weights have no values, saying what it can do instead."""
    if without_values(model):
        raise ValueError(
            f"`{model.name}` was built inside ipu.utils.shape_only_weights(): its weights have shapes but no "
            "values, so it can be compiled and sized (ipu.utils.estimate, DeviceConnectionType.PRE_COMPILE) but "
            "not run; build it outside that block to train, evaluate or predict"
        )
