"""``ipu.ipu_strategy.IPUStrategy``: models compiled inside ``strategy.scope()`` run on the IPUs."""
import contextlib

from ..keras.engine import device
from ..not_simulated import NotSimulatedError
from .executor import IPUExecutor


class IPUStrategy:
    """A distribution strategy for the simulated IPU system configured with ``configure_ipu_system``.

    ``enable_keras_extensions`` is taken for Graphcore's signature: here the IPU methods are on every model
    built after ``ipu_teach.ipu`` is imported, whatever its value (see ``keras_extensions``)."""

    def __init__(self, enable_dataset_iterators=True, enable_keras_extensions=True):
        self.enable_keras_extensions = enable_keras_extensions

    @contextlib.contextmanager
    def scope(self):
        with device.placement(self):
            yield self

    def executor_for(self, model):
        return IPUExecutor(model)

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
_STRATEGY_API = frozenset(("run", "reduce", "experimental_distribute_dataset", "distribute_datasets_from_function",
                           "experimental_distribute_datasets_from_function", "experimental_run_v2", "gather",
                           "extended", "cluster_resolver", "experimental_local_results", "update_config_proto"))
