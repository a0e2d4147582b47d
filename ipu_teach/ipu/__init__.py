"""Graphcore's IPU extensions for Keras, on the simulated IPU: ``from ipu_teach import ipu``.

``ipu.config.IPUConfig``, ``ipu.config.configure_ipu_system``, ``ipu.ipu_strategy.IPUStrategy``,
and the Model methods ``set_gradient_accumulation_options`` / ``set_replication_options``.
"""
from . import config, executable_cache, ipu_strategy, keras_extensions, system
from .config import DeviceConnectionType, IPUConfig, SelectionOrder, configure_ipu_system
from .executor import IPURuleError
from .ipu_strategy import IPUStrategy
from .out_of_memory import ModelOutOfMemoryError

keras_extensions.install()

__all__ = ["DeviceConnectionType", "IPUConfig", "IPURuleError", "IPUStrategy", "ModelOutOfMemoryError",
           "SelectionOrder", "config", "configure_ipu_system", "executable_cache", "ipu_strategy", "system"]
