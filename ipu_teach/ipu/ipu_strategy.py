"""``ipu.ipu_strategy.IPUStrategy``: models created inside ``strategy.scope()`` run on the IPUs.

As in TensorFlow, a model keeps the strategy it was created under, and scopes are per thread
(``keras.engine.device`` has the rules).

Example:

>>> from ipu_teach.examples import configure_ipus
>>> config = configure_ipus(1)
>>> with ipu.ipu_strategy.IPUStrategy().scope():
...     model = keras.Sequential([keras.layers.Dense(2, input_shape=(4,))])   # created in the scope
>>> model.compile("sgd", "mse", steps_per_execution=2)    # compiled anywhere: placed on the IPU
>>> model.device_executor is not None
True
"""

import contextlib
import types

import numpy as np

from ..keras.engine import device
from ..not_simulated import NotSimulatedError
from .custom_loop import CustomLoopPrograms
from .executor import IPUExecutor
from .ipu_infeed_queue import InfeedIterator


class IPUStrategy:
    """The distribution strategy that runs Keras models on the IPU system configured with ``configure_ipu_system``.

    Models created inside ``strategy.scope()`` run their ``fit``, ``evaluate`` and ``predict`` on the
    simulated IPUs: one replica per IPU (or a pipeline over several), with ``steps_per_execution`` batches
    per execution. A model keeps the strategy it was created under, even compiled again outside the scope;
    a model created outside any scope runs on the CPU (compiled in the scope, it needs to have no weights
    yet, as in Keras). A custom training loop's function given to ``run`` is one compiled program on the IPU
    (``ipu.custom_loop``); the rest of ``tf.distribute.Strategy`` (``gather``, ``extended``, ...) is not
    simulated and says so.

    Args:
      enable_dataset_iterators: Accepted for Graphcore compatibility. Default: True.
      enable_keras_extensions: Accepted for Graphcore's signature: here the IPU methods are on every model
        built after ``ipu_teach.ipu`` is imported, whatever its value (see ``keras_extensions``). Default: True.

    Example:

    >>> config = ipu.config.IPUConfig()
    >>> config.auto_select_ipus = 2
    >>> config.configure_ipu_system()
    >>> strategy = ipu.ipu_strategy.IPUStrategy()
    >>> strategy.num_replicas_in_sync
    2
    """

    def __init__(self, enable_dataset_iterators=True, enable_keras_extensions=True):
        self.enable_dataset_iterators = enable_dataset_iterators
        self.enable_keras_extensions = enable_keras_extensions
        self._custom_loops = CustomLoopPrograms()

    @contextlib.contextmanager
    def scope(self):
        """Returns a context manager: models created inside it run on the IPUs.

        ``compile`` attaches a model created inside to the simulated IPU system, wherever it is called; the
        executables are compiled on the first ``fit``, ``evaluate`` or ``predict`` and cached per mode. The
        scope is this thread's only; another strategy's scope cannot be entered inside it.

        Example:

        >>> config = ipu.config.IPUConfig()
        >>> config.auto_select_ipus = 1
        >>> config.configure_ipu_system()
        >>> with ipu.ipu_strategy.IPUStrategy().scope():
        ...     model = keras.Sequential([keras.layers.Dense(2, input_shape=(4,))])
        ...     model.compile("sgd", "mse")
        ...     prediction = model.predict(np.ones((4, 4), np.float32), batch_size=4, verbose=0)
        INFO:ipu_teach:The model `sequential` has been configured with only 1 steps per execution. ...
        >>> prediction.shape, model.device_executor is not None
        ((4, 2), True)
        """
        with device.placement(self):
            yield self

    def executor_for(self, model):
        return IPUExecutor(model)

    def run(self, fn, args=(), kwargs=None, options=None):
        """Runs ``fn(*args, **kwargs)`` on the IPU as one compiled program (a custom training loop).

        The program is compiled on the first call (simulated compile time) and again when a call differs in
        shapes or steps, as TensorFlow retraces; each call is one execution with the host's call of the
        program; a ``for _ in tf.range(n)`` loop over an infeed runs n steps on the device, as
        ``steps_per_execution=n`` does in Keras (``ipu.custom_loop``). A dataset iterator given in ``args``
        is fed through an infeed when the strategy has ``enable_dataset_iterators`` (the default).
        Numerics are the CPU's; the simulated seconds are in ``ipu.custom_loop.timings()``.

        Example:

        >>> import ipu_teach.tensorflow as tf
        >>> from ipu_teach.examples import configure_ipus
        >>> config = configure_ipus(1)
        >>> strategy = ipu.ipu_strategy.IPUStrategy()
        >>> with strategy.scope():
        ...     model = keras.Sequential([keras.layers.Dense(2, input_shape=(4,))])
        ...     loss = strategy.run(lambda x: tf.reduce_mean(model(x)), args=(np.ones((4, 4), np.float32),))
        INFO:ipu_teach:Compiled `<lambda>` for the IPU (a custom loop, 1 step(s) per call, inference): ...
        >>> ipu.custom_loop.timings()["<lambda>"].calls
        1
        """
        if self.enable_dataset_iterators:
            args = [InfeedIterator(a) if isinstance(a, types.GeneratorType) else a for a in args]
        return self._custom_loops.run(fn, args, kwargs or {})

    def reduce(self, reduce_op, value, axis=None):
        """The value of the one replica a custom loop runs on (ipu-teach simulates one), as a numpy array; with
        ``axis``, also reduced over that axis (SUM or MEAN), as TensorFlow's ``Strategy.reduce`` does."""
        name = getattr(reduce_op, "name", str(reduce_op)).upper()
        if name not in ("SUM", "MEAN"):
            raise ValueError(
                f"IPUStrategy.reduce: reduce_op must be tf.distribute.ReduceOp.SUM or MEAN, got {reduce_op!r}"
            )
        array = np.asarray(value)
        if axis is None:
            return array
        return array.sum(axis=axis) if name == "SUM" else array.mean(axis=axis)

    def experimental_distribute_dataset(self, dataset, options=None):
        """The dataset itself: its iterator, given to ``run``, feeds the one replica through an infeed."""
        return dataset

    def experimental_local_results(self, value):
        """The per-replica values: one replica's, as a tuple."""
        return (value,)

    def __getattr__(self, name):
        """The rest of tf.distribute.Strategy's API (custom training loops) is not simulated: say so by name."""
        if name in _STRATEGY_API:
            raise NotSimulatedError(f"tensorflow.python.ipu.ipu_strategy.IPUStrategy.{name}", dir(IPUStrategy))
        raise AttributeError(f"'IPUStrategy' object has no attribute {name!r}")

    @property
    def num_replicas_in_sync(self) -> int:
        from .system import current

        configuration = current()
        return configuration.num_ipus if configuration else 1


# tf.distribute.Strategy's methods and properties (TensorFlow 2.6) that IPUStrategy has there and not here.
_STRATEGY_API = frozenset(
    (
        "distribute_datasets_from_function",
        "experimental_distribute_datasets_from_function",
        "experimental_run_v2",
        "gather",
        "extended",
        "cluster_resolver",
        "update_config_proto",
    )
)

# Graphcore's ipu_strategy.py defines the class as IPUStrategyV1 and names it IPUStrategy too
# (``IPUStrategy = IPUStrategyV1``); its documentation examples use both names.
IPUStrategyV1 = IPUStrategy
