"""``ipu.ipu_strategy.IPUStrategy``: models compiled inside ``strategy.scope()`` run on the IPUs."""
import contextlib

from ..keras.engine import device
from .executor import IPUExecutor


class IPUStrategy:
    """A distribution strategy for the simulated IPU system configured with ``configure_ipu_system``."""

    def __init__(self, enable_dataset_iterators=True, enable_keras_extensions=True):
        self.enable_keras_extensions = enable_keras_extensions

    @contextlib.contextmanager
    def scope(self):
        with device.placement(self):
            yield self

    def executor_for(self, model):
        return IPUExecutor(model)

    @property
    def num_replicas_in_sync(self) -> int:
        from .system import current
        configuration = current()
        return configuration.num_ipus if configuration else 1
