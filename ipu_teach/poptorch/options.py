"""``poptorch.Options``: how a model is compiled and run (python/options.py of graphcore/poptorch).

Setters return the options, so they chain (``poptorch.Options().deviceIterations(50)``); ``Training`` and
``Precision`` group their own setters, as in PopTorch. What the simulator uses: ``deviceIterations``,
``replicationFactor``, ``Training.gradientAccumulation`` and ``accumulationAndReplicationReductionType``,
``outputMode``, ``randomSeed`` (which seeds ``torch``, as PopTorch's does), ``enableExecutableCaching``,
``setAvailableMemoryProportion`` and ``Precision.setPartialsType`` (Poplar options of the matrix products),
``setExecutionStrategy`` and ``autoRoundNumIPUs`` (how blocks become stages: :mod:`.stages`) and
``enableSyntheticData`` (recorded).

Example:

>>> from ipu_teach import poptorch
>>> opts = poptorch.Options().deviceIterations(50).replicationFactor(2)
>>> opts.Training.gradientAccumulation(4).accumulationAndReplicationReductionType(poptorch.ReductionType.Sum)
<...>
>>> opts.device_iterations, opts.replication_factor, opts.Training.gradient_accumulation
(50, 2, 4)
"""

from __future__ import annotations

import copy

from .. import validation
from ..torch import manual_seed
from .enums import ConnectionType, OutputMode, ReductionType
from .stages import PipelinedExecution
from .tensor_locations import TensorLocationOptions


class _TrainingOptions:
    def __init__(self):
        self.gradient_accumulation = 1
        self.accumulation_and_replication_reduction_type = ReductionType.Mean

    def gradientAccumulation(self, gradient_accumulation: int):  # noqa: N802 (PopTorch's names)
        """Micro-batches whose gradients are accumulated before each weight update."""
        self.gradient_accumulation = validation.positive_count(gradient_accumulation, "gradientAccumulation")
        return self

    def accumulationAndReplicationReductionType(self, reduction_type):  # noqa: N802
        """Mean (default) or Sum of the gradients over accumulated micro-batches and replicas."""
        if not isinstance(reduction_type, ReductionType) or reduction_type == ReductionType.NoReduction:
            raise ValueError(
                "accumulationAndReplicationReductionType must be set to poptorch.ReductionType.Mean or "
                "poptorch.ReductionType.Sum"
            )
        self.accumulation_and_replication_reduction_type = reduction_type
        return self


class _PrecisionOptions:
    def __init__(self):
        self.partials_type = None

    def setPartialsType(self, dtype):  # noqa: N802
        """The type of the matrix products' partial sums: ``torch.float`` or ``torch.half``."""
        name = getattr(dtype, "name", str(dtype))
        if name not in ("float32", "float16"):
            raise ValueError(f"setPartialsType: expected torch.float or torch.half, got {dtype!r}")
        self.partials_type = "float" if name == "float32" else "half"
        return self

    def enableStochasticRounding(self, enabled: bool):  # noqa: N802
        self.stochastic_rounding = bool(enabled)
        return self


class _PopartOptions:
    """PopART's session options (``opts._Popart.set("key", value)``), for advanced users in PopTorch: recorded in
    ``options``, none of them changes the simulation (buffering depths, patterns, recomputation...)."""

    def __init__(self):
        self.options = {}

    def set(self, key: str, value):
        self.options[key] = value
        return self

    def setEngineOptions(self, engine_options: dict):  # noqa: N802
        return self.set("engineOptions", engine_options)

    def setPatterns(self, patterns: dict, level: int = 2):  # noqa: N802
        self.set("patternsLevel", level)
        return self.set("patterns", patterns)


class Options:
    """The options of one PopTorch model (see the module docstring); ``clone()`` copies them.

    Example:

    >>> from ipu_teach import poptorch
    >>> opts = poptorch.Options().deviceIterations(50)
    >>> opts.Training.gradientAccumulation(4)
    <...>
    >>> opts
    Options(deviceIterations=50, replicationFactor=1, gradientAccumulation=4, outputMode=Default)
    """

    def __init__(self):
        self.device_iterations = 1
        self.replication_factor = 1
        self.output_mode = OutputMode.Default
        self.output_return_period = 1
        self.random_seed = None
        self.executable_cache_dir = None
        self.available_memory_proportion = {}
        self.synthetic_data = False
        self.execution_strategy = PipelinedExecution()
        self.auto_round_num_ipus = False
        self.connection_type = ConnectionType.Always
        self.input_group_size = 1
        self.Training = _TrainingOptions()
        self.Precision = _PrecisionOptions()
        self._Popart = _PopartOptions()
        self.TensorLocations = TensorLocationOptions()

    def deviceIterations(self, device_iterations: int) -> Options:  # noqa: N802
        """Iterations (weight updates in training) the IPU runs per call, taking the data for all at once: Keras'
        ``steps_per_execution``, counted in weight updates.

        Example:

        >>> from ipu_teach import poptorch
        >>> poptorch.Options().deviceIterations(50).device_iterations
        50
        """
        self.device_iterations = validation.positive_count(device_iterations, "deviceIterations")
        return self

    def replicationFactor(self, replication_factor: int) -> Options:  # noqa: N802
        """Copies of the model on as many IPUs (or groups of IPUs), each taking its part of the batch; their
        gradients are reduced before each weight update.

        Example:

        >>> from ipu_teach import poptorch
        >>> poptorch.Options().replicationFactor(4).replication_factor
        4
        """
        self.replication_factor = validation.positive_count(replication_factor, "replicationFactor")
        return self

    def outputMode(self, output_mode, output_return_period=None) -> Options:  # noqa: N802
        if not isinstance(output_mode, OutputMode):
            raise TypeError(f"outputMode expects a poptorch.OutputMode, got {output_mode!r}")
        if output_mode == OutputMode.EveryN and not (output_return_period and output_return_period > 0):
            raise ValueError("EveryN anchor must have output_return_period set to valid positive integer")
        self.output_mode, self.output_return_period = output_mode, output_return_period or 1
        return self

    anchorMode = outputMode  # noqa: N815

    def defaultOutputMode(self) -> bool:  # noqa: N802
        return self.output_mode == OutputMode.Default

    def randomSeed(self, random_seed: int) -> Options:  # noqa: N802
        """Seed the random numbers (dropout...); like PopTorch, this also calls ``torch.manual_seed``."""
        if not isinstance(random_seed, int):
            raise TypeError(f"randomSeed expects an int, got {random_seed!r}")
        manual_seed(random_seed)
        self.random_seed = random_seed
        return self

    def enableExecutableCaching(self, path: str) -> Options:  # noqa: N802
        """Keep compiled executables in ``path``: a second run of the same model loads instead of compiling."""
        self.executable_cache_dir = path
        return self

    def setAvailableMemoryProportion(self, available_memory_proportion: dict) -> Options:  # noqa: N802
        """The proportion of each IPU's memory its matrix products may use for temporaries: ``{"IPU0": 0.3}``
        (Poplar's ``availableMemoryProportion``, default 0.6): less memory, more time.

        Raises:
          ValueError: for a key that is not ``"IPU<n>"`` or a proportion outside (0, 1].

        Example:

        >>> from ipu_teach import poptorch
        >>> poptorch.Options().setAvailableMemoryProportion({"IPU0": 0.2}).available_memory_proportion
        {0: 0.2}
        """
        for key, value in available_memory_proportion.items():
            if not str(key).startswith("IPU"):
                raise ValueError(
                    'Available memory proportions are expected to be in a dictionary of {"IPU0": 0.5} where the 0 in '
                    f"IPU is the index of the IPU. Invalid key: {key}"
                )
            if not 0 < float(value) <= 1:
                raise ValueError(f"available memory proportion must be in (0, 1], got {value} for {key}")
            self.available_memory_proportion[int(str(key)[3:])] = float(value)
        return self

    def enableSyntheticData(self, enabled: bool) -> Options:  # noqa: N802
        self.synthetic_data = bool(enabled)
        return self

    def setExecutionStrategy(self, strategy) -> Options:  # noqa: N802
        """How the model's blocks run on their IPUs: ``PipelinedExecution`` (default) or ``ShardedExecution``.

        Example:

        >>> from ipu_teach import poptorch
        >>> opts = poptorch.Options().setExecutionStrategy(poptorch.ShardedExecution())
        >>> type(opts.execution_strategy).__name__
        'ShardedExecution'
        """
        if not isinstance(strategy, PipelinedExecution):
            raise TypeError(f"setExecutionStrategy expects a PipelinedExecution or ShardedExecution, got {strategy!r}")
        self.execution_strategy = strategy
        return self

    def autoRoundNumIPUs(self, auto_round_num_ipus: bool = True) -> Options:  # noqa: N802
        """Reserve the next power of two of IPUs when the model uses another number (else that is an error)."""
        self.auto_round_num_ipus = bool(auto_round_num_ipus)
        return self

    def connectionType(self, connection_type) -> Options:  # noqa: N802
        self.connection_type = connection_type
        return self

    def useIpuModel(self, use_model: bool) -> Options:  # noqa: N802
        """Accepted: every IPU here is simulated."""
        return self

    def clone(self) -> Options:
        """A copy to change without changing these (the inference model's options from the training model's).

        Example:

        >>> from ipu_teach import poptorch
        >>> training_opts = poptorch.Options().deviceIterations(10)
        >>> inference_opts = training_opts.clone().deviceIterations(20)
        >>> training_opts.device_iterations, inference_opts.device_iterations
        (10, 20)
        """
        return copy.deepcopy(self)

    def __repr__(self):
        return (
            f"Options(deviceIterations={self.device_iterations}, replicationFactor={self.replication_factor}, "
            f"gradientAccumulation={self.Training.gradient_accumulation}, outputMode={self.output_mode.name})"
        )
