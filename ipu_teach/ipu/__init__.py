"""Graphcore's IPU extensions for Keras, on the simulated IPU: ``from ipu_teach import ipu``.

``ipu.config.IPUConfig``, ``ipu.config.configure_ipu_system``, ``ipu.ipu_strategy.IPUStrategy``,
``ipu.ops.pipelining_ops`` (also ``ipu.pipelining_ops``), ``ipu.utils``, ``ipu.host`` (ipu-teach's simulated host),
``ipu.gc_tools`` (``gc-info -l`` and ``gc-monitor``) and ``ipu.system_analyser`` (the host's side of a run),
``ipu.optimizers.GradientAccumulationReductionMethod`` (also ``ipu.gradient_accumulation``), and the Model methods
``set_gradient_accumulation_options``, ``set_replication_options``, ``set_pipelining_options`` and the
pipeline stage assignment methods: importing this package registers ``keras_extensions.ModelExtension`` with
Keras' extension point (``ipu_teach.keras.engine.extensions``), so every model built afterwards has them.

Example:

>>> from ipu_teach import ipu
>>> config = ipu.config.IPUConfig()
>>> config.auto_select_ipus = 1
>>> config.configure_ipu_system()
>>> strategy = ipu.ipu_strategy.IPUStrategy()
>>> with strategy.scope():
...     model = keras.Sequential([keras.layers.Dense(2, input_shape=(4,))])
...     model.compile("sgd", "mse", steps_per_execution=2)
...     history = model.fit(np.ones((8, 4), np.float32), np.ones((8, 2), np.float32), batch_size=4, verbose=0)
>>> model.get_ipu_executable("train").seconds_per_execution > 0
True
"""

from . import (
    config,
    custom_loop,
    executable_cache,
    gc_tools,
    gradient_accumulation,
    host,
    ipu_infeed_queue,
    ipu_outfeed_queue,
    ipu_strategy,
    keras_extensions,
    loops,
    ops,
    optimizers,
    pipelining,
    scopes,
    system_analyser,
    system,
    utils,
)
from .ops import pipelining_ops
from .config import DeviceConnectionType, IPUConfig, SelectionOrder, configure_ipu_system
from .executor import IPURuleError
from .ipu_strategy import IPUStrategy
from .out_of_memory import ModelOutOfMemoryError

__all__ = [
    "DeviceConnectionType",
    "IPUConfig",
    "IPURuleError",
    "IPUStrategy",
    "ModelOutOfMemoryError",
    "SelectionOrder",
    "config",
    "configure_ipu_system",
    "custom_loop",
    "executable_cache",
    "gc_tools",
    "gradient_accumulation",
    "host",
    "ipu_infeed_queue",
    "ipu_outfeed_queue",
    "ipu_strategy",
    "loops",
    "ops",
    "optimizers",
    "pipelining",
    "pipelining_ops",
    "scopes",
    "system",
    "system_analyser",
    "utils",
]
