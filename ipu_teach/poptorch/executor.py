"""``poptorch.trainingModel`` / ``inferenceModel``: a PyTorch model run as one program on the simulated IPU.

Semantics follow PopTorch (python/_poplar_executor.py and the user guide's "Efficient data batching" of
graphcore/poptorch):

- A call takes the combined batch, ``batch_size x deviceIterations x replicationFactor x gradientAccumulation``
  samples along dimension 0 of every tensor argument (a batch that is not a multiple fails with PopTorch's
  message), split into micro-batches of ``batch_size`` ordered iteration, then accumulation, then replica.
- Training: the model's ``forward`` computes the loss (a training model whose forward returns no loss fails as
  PopTorch's "Couldn't find a loss in graph!"); each of the ``deviceIterations`` weight updates accumulates the
  gradients of ``gradientAccumulation x replicationFactor`` micro-batches, reduced by their Mean (default) or Sum
  (``Training.accumulationAndReplicationReductionType``), then the optimizer steps once.
- What a call returns follows ``outputMode``: Final (the training default) the last iteration's outputs (one
  per replica), All (the inference default) every micro-batch's, concatenated along dimension 0 (scalars
  stacked), EveryN every N-th iteration's, Sum their sum per replica. Outputs carry no graph: ``backward()`` on
  them fails as in PopTorch, since training already ran it.
- The wrapped model shares the original module's parameters: PopTorch copies weights back to the host when
  the host reads them (``copyWeightsToHost``, implicitly); here they live on the host all along, so the
  original module, an ``inferenceModel`` of it and ``state_dict()`` always see the trained weights.

Cost: the first call (or ``compile()``) records one micro-batch step's ops (the autograd's op records, with
their forward and backward costs) and lowers them with the executor the Keras path uses (``ipu.executor``'s
``compile_executable``, as ``ipu.custom_loop`` does for ``strategy.run``): a call is one execution of
``deviceIterations x gradientAccumulation`` steps on ``replicationFactor`` replicas, called by the "poptorch"
host API (``hardware.HOST.poptorch_execution_s``), as ``steps_per_execution`` steps are in Keras; a slow DataLoader
is simulated as for Keras, with ``ipu.host.simulate_input_pipeline`` set before the first call. Blocks
(``BeginBlock``, ``Block``) on several IPUs make the step a pipeline (:mod:`.stages`): the plan a Keras model with
``PipelineStage`` blocks gets, costed by the same ``ipu.pipelined_run``. A "Graph compilation" bar shows the simulated
compile time; ``ipu-teach run`` prints each model's simulated seconds; ``get_ipu_executable()`` returns the
executable (``explain()``, the pipeline for ``PipelineExplorer.from_model``).

Example:

>>> from ipu_teach import poptorch, torch
>>> class WithLoss(torch.nn.Module):
...     def __init__(self):
...         super().__init__()
...         self.linear, self.loss = torch.nn.Linear(4, 3), torch.nn.CrossEntropyLoss()
...     def forward(self, x, y):
...         out = self.linear(x)
...         return out, self.loss(out, y)
>>> model = WithLoss()
>>> opts = poptorch.Options().deviceIterations(2)
>>> training = poptorch.trainingModel(model, opts, optimizer=torch.optim.SGD(model.parameters(), lr=0.1))
>>> out, loss = training(torch.randn(8, 4), torch.tensor([0, 1, 2, 0, 1, 2, 0, 1]))  # the bar goes to stderr
>>> out.shape, loss.shape
(torch.Size([4, 3]), torch.Size([]))
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np

from ..autograd import no_grad, record
from ..ipu import custom_loop, host
from ..ipu.config import IPUConfig
from ..ipu.executor import Setup, compile_executable
from ..ipu.gradient_accumulation import GradientAccumulationReductionMethod
from ..ipu.keras_extensions import ExtensionOptions
from ..ipu.lowering import RecordedStep
from ..ipu.matrix_plan import DEFAULT_OPTIONS
from ..ipu.poplar_options import PipelineStageOptions
from ..keras import optimizers as keras_optimizers
from ..torch import optim
from ..torch.nn.module import Module, name_scopes
from ..torch.random import default_generator
from ..torch.tensor import Tensor
from . import annotations, stages
from .enums import ConnectionType, OutputMode, ReductionType
from .errors import Error
from .options import Options

NO_EXECUTABLE_ERR = "Model has not been compiled or has been destroyed."


class _IPUOutput(Tensor):
    """A tensor a PopTorch model returned: it has no graph to differentiate."""

    __slots__ = ()

    def backward(self, gradient=None, retain_graph=None, create_graph=False):
        raise Error(
            "backward() cannot be called explicitly on outputs of a PopTorch model. If you're using a trainingModel, "
            "the backwards pass is performed automatically when invoking the model. If you're using an "
            "inferenceModel, you should use a trainingModel instead."
        )


@dataclass(frozen=True)
class _Weight:
    """What lowering reads of a weight: its name, element count and dtype."""

    name: str
    size: int
    dtype: np.dtype


def _tensors(value) -> list:
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for item in value for t in _tensors(item)]
    if isinstance(value, dict):
        return [t for item in value.values() for t in _tensors(item)]
    return []


def _map(value, function):
    """``value``'s structure (tuples, lists, dicts) with ``function`` applied to its tensors."""
    if isinstance(value, Tensor):
        return function(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_map(item, function) for item in value)
    if isinstance(value, dict):
        return {key: _map(item, function) for key, item in value.items()}
    return value


def _combine(results: list):
    """Per-micro-batch results as one: tensors concatenated along dimension 0, scalars stacked (one result: it)."""
    first = results[0]
    if isinstance(first, Tensor):
        arrays = [r.array for r in results]
        if len(arrays) == 1:
            return _IPUOutput(arrays[0])
        return _IPUOutput(np.stack(arrays) if arrays[0].ndim == 0 else np.concatenate(arrays))
    if isinstance(first, (list, tuple)):
        return type(first)(_combine([r[i] for r in results]) for i in range(len(first)))
    if isinstance(first, dict):
        return {key: _combine([r[key] for r in results]) for key in first}
    return results[-1]


def _cost_optimizer(optimizer):
    """The Keras optimizer whose update costs the same on the IPU (its kind, slots and switches)."""
    group = optimizer.param_groups[0]
    if isinstance(optimizer, optim.SGD):
        return keras_optimizers.SGD(momentum=group["momentum"], nesterov=group["nesterov"])
    if isinstance(optimizer, optim.RMSprop):
        return keras_optimizers.RMSprop(momentum=group["momentum"], centered=group["centered"])
    adam = keras_optimizers.Adam(amsgrad=group.get("amsgrad", False))
    # what PopART's update of each weight depends on beyond Keras' Adam (ipu.popart_program.adam_update_passes)
    adam.weight_decay, adam.decoupled_weight_decay = group["weight_decay"], getattr(optimizer, "decoupled", False)
    return adam


class PoplarExecutor:
    """A model wrapped for the IPU (see the module docstring); attributes not its own are the model's."""

    def __init__(self, model: Module, options: Options | None, training: bool, optimizer=None):
        if options is not None and not isinstance(options, Options):
            raise Error(f"Invalid type: 'options' is of type {type(options)} (Expected poptorch.Options)")
        options = (options or Options()).clone()
        if training:
            if options.defaultOutputMode():
                options.outputMode(OutputMode.Final)
            optimizer = optimizer or optim.SGD(model.parameters(), lr=0.01)
        else:
            if options.defaultOutputMode():
                options.outputMode(OutputMode.All)
            if options.Training.gradient_accumulation != 1:
                pipelined = not isinstance(options.execution_strategy, stages.ShardedExecution)
                raise Error(
                    "You must set poptorch.Options().Training.gradientAccumulation to 1 or leave it as its default "
                    "value (1) when running a poptorch.inferenceModel()."
                    + (
                        " Use poptorch.Options().deviceIterations to process a sufficient number of batches each run "
                        "for pipelined execution instead."
                        if pipelined
                        else ""
                    )
                )
        self.__dict__.update(
            _model=model,
            _options=options,
            _training=training,
            _optimizer=optimizer,
            _executable=None,
            _layout=None,
            _configuration=None,
            _attached=False,
            _name=f"poptorch.{'trainingModel' if training else 'inferenceModel'}({type(model).__name__})",
        )
        name_scopes(model)

    # ---- PopTorch's API -----------------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        if self._options.connection_type == ConnectionType.Never:
            raise AssertionError(
                "Trying to run a model on an offline device (ConnectionType.Never): use model.compile(inputs) "
                "instead of model(inputs)"
            )
        micro = self._micro_batch(args, kwargs)
        if self._executable is None:
            self.compile(*args, **kwargs)
        if not self._attached:
            self.attachToDevice()
        results = self._run(args, kwargs, micro)
        config = self._configuration
        seconds = self._executable.seconds_per_execution * config.runs
        custom_loop.note_execution(self._name, self._steps(), seconds)
        return self._returned(results)

    def compile(self, *args, **kwargs) -> None:
        """Compile for these inputs (the first call does it otherwise): record one micro-batch step, lower it,
        cost it. The model's weights, buffers and random state are as they were after.

        Example:

        >>> from ipu_teach import poptorch, torch
        >>> model = poptorch.inferenceModel(torch.nn.Linear(3, 2))
        >>> model.compile(torch.zeros(4, 3))       # the bar goes to stderr; nothing runs
        >>> model.isCompiled(), model.get_ipu_executable().graph.micro_batch
        (True, 4)
        """
        micro = self._micro_batch(args, kwargs)
        opts = self._options
        layout, outputs = self._record_step(args, kwargs, micro)
        stages.check_depth(
            layout.plan,
            opts.execution_strategy,
            self._training,
            opts.Training.gradient_accumulation,
            opts.device_iterations,
        )
        self.__dict__["_layout"] = layout
        self.__dict__["_configuration"] = self._attach_ipus()
        inputs = [t.array[:micro] for t in _tensors(list(args) + list(kwargs.values())) if t.array.ndim]
        x = inputs[0] if inputs else np.zeros((1, 0), np.float32)
        y = inputs[1] if len(inputs) > 1 else None
        returned = {OutputMode.All: self._batches(), OutputMode.EveryN: None}.get(
            opts.output_mode, opts.replication_factor
        )
        if returned is None:
            returned = opts.replication_factor * (opts.device_iterations // opts.output_return_period)
        output_bytes = sum(t.array.nbytes for t in _tensors(outputs)) * returned
        output_bytes //= opts.replication_factor * self._steps()
        parameters = list(self._model.named_parameters())
        weights = [_Weight(self._weight_name(name), p.array.size, p.array.dtype) for name, p in parameters]
        optimizer = _cost_optimizer(self._optimizer) if self._training else keras_optimizers.SGD()
        program = custom_loop.LoopProgram(self._name, [], optimizer, weights)
        program.ipu_options = self._extension_options(layout.plan)
        reduction = opts.Training.accumulation_and_replication_reduction_type
        setup = Setup(
            "train" if self._training else "predict",
            self._configuration,
            layout.plan,
            opts.replication_factor,
            opts.Training.gradient_accumulation,
            GradientAccumulationReductionMethod.MEAN
            if reduction == ReductionType.Mean
            else GradientAccumulationReductionMethod.SUM,
            self._steps(),
            x,
            y,
            "poptorch",
            *_input_pipeline(),
            recorded=RecordedStep(layout.ops, int(output_bytes)),
        )
        executable, due = compile_executable(program, setup)
        self.__dict__["_executable"] = executable
        self.__dict__["_attached"] = self._configuration.runs
        _progress_bar(due)
        custom_loop.note_execution(self._name, 0, due, due, executable)
        custom_loop.timings()[self._name].calls -= 1  # compiling is not a call

    def get_ipu_executable(self, mode: str | None = None):
        """The simulated IPU executable this model compiled (ipu-teach only, as Keras models'
        ``get_ipu_executable``): ``explain()``, ``timeline``, and ``pipeline`` when pipelined (what
        ``PipelineExplorer.from_model`` reads). ``mode``: "train" for a trainingModel, "predict" for an
        inferenceModel (default: this model's).

        Raises:
          ValueError: before the model is compiled, or for the other mode.

        Example:

        >>> from ipu_teach import poptorch, torch
        >>> model = poptorch.inferenceModel(torch.nn.Linear(3, 2), poptorch.Options().deviceIterations(10))
        >>> _ = model(torch.zeros(20, 3))
        >>> model.get_ipu_executable().steps_per_execution      # deviceIterations: the program's loop
        10
        """
        own = "train" if self._training else "predict"
        if mode not in (None, own):
            raise ValueError(f"{self._name} has only a {own!r} executable, not {mode!r}")
        if self._executable is None:
            raise ValueError(f"{self._name} has not been compiled yet: call it (or compile()) first")
        return self._executable

    def isCompiled(self) -> bool:  # noqa: N802
        return self._executable is not None

    def isAttachedToDevice(self) -> bool:  # noqa: N802
        return self._executable is not None and self._attached

    def detachFromDevice(self) -> None:  # noqa: N802
        """Free the IPUs (another model, such as the inference model, can use them); the next call attaches
        again.

        Example:

        >>> from ipu_teach import poptorch, torch
        >>> model = poptorch.inferenceModel(torch.nn.Linear(3, 2))
        >>> _ = model(torch.zeros(1, 3))
        >>> model.detachFromDevice()
        >>> model.isAttachedToDevice()
        False
        """
        if self._executable is None:
            raise Error(NO_EXECUTABLE_ERR)
        if not self._attached:
            raise Error("Device is not attached")
        self.__dict__["_attached"] = False

    def attachToDevice(self) -> None:  # noqa: N802
        if self._executable is None:
            raise Error(NO_EXECUTABLE_ERR)
        if self._attached:
            raise Error("Device is already attached")
        self.__dict__["_configuration"] = self._attach_ipus()
        self.__dict__["_attached"] = True

    def copyWeightsToHost(self) -> None:  # noqa: N802
        """Nothing to copy: the simulated model's weights are the host module's (see the module docstring)."""
        if self._executable is None:
            raise Error(NO_EXECUTABLE_ERR)

    def copyWeightsToDevice(self) -> None:  # noqa: N802
        """Nothing to copy: the simulated model's weights are the host module's (see the module docstring)."""
        if self._executable is None:
            raise Error(NO_EXECUTABLE_ERR)

    def setOptimizer(self, optimizer) -> None:  # noqa: N802
        """Use ``optimizer`` from the next call (new hyperparameters; PopTorch does not recompile for them)."""
        if not self._training:
            raise Error("setOptimizer() is only for a trainingModel")
        own = {id(p) for p in self._model.parameters()}
        if any(id(p) not in own for group in optimizer.param_groups for p in group["params"]):
            raise Error("setOptimizer: the optimizer's parameters must be the wrapped model's")
        self.__dict__["_optimizer"] = optimizer

    def destroy(self) -> None:
        self.__dict__.update(_executable=None, _attached=False)

    @property
    def options(self) -> Options:
        return self._options

    def __getattr__(self, name):
        if "_model" not in self.__dict__:  # copying or unpickling, before __init__ has run
            raise AttributeError(name)
        return getattr(self.__dict__["_model"], name)

    def __repr__(self):
        return f"PoplarExecutor({self._name}, {self._options})\n{self._model!r}"

    # ---- batches ------------------------------------------------------------------------------------------
    def _batches(self) -> int:
        opts = self._options
        return opts.device_iterations * opts.replication_factor * opts.Training.gradient_accumulation

    def _steps(self) -> int:
        """Micro-batch steps of one replica in one call (Keras' steps_per_execution)."""
        return self._options.device_iterations * self._options.Training.gradient_accumulation

    def _micro_batch(self, args, kwargs) -> int:
        opts, combined = self._options, self._batches()
        sizes = [t.shape[0] if t.ndim else 1 for t in _tensors(list(args) + list(kwargs.values()))]
        for tensor, size in zip(_tensors(list(args) + list(kwargs.values())), sizes):
            if size % combined:
                raise Error(
                    f"Invalid batch dimension: In the input {tensor.shape}, the batch dimension ({size}) must be a "
                    f"multiple of Options.deviceIterations({opts.device_iterations}) * "
                    f"(Options.replicationFactor({opts.replication_factor}) / "
                    f"Options.inputReplicaGrouping.input_group_size({opts.input_group_size})) * "
                    f"Options.Training.gradientAccumulation({opts.Training.gradient_accumulation}) = {combined} "
                    "because it is used to calculate the batch size which will be executed on the device in any given "
                    "iteration. For a full explanation see the batching semantics page of the documentation."
                )
        return sizes[0] // combined if sizes else 1

    @staticmethod
    def _slice(args, kwargs, k, micro):
        def part(t):
            return t[k * micro : (k + 1) * micro] if t.ndim else t

        return _map(list(args), part), _map(dict(kwargs), part)

    # ---- running ------------------------------------------------------------------------------------------
    def _forward(self, args, kwargs):
        annotations.clear_marked_losses()
        was_training = self._model.training
        self._model.train(self._training)
        try:
            if self._training:
                return self._model(*args, **kwargs)
            with no_grad():
                return self._model(*args, **kwargs)
        finally:
            self._model.train(was_training)

    def _loss_of(self, outputs) -> Tensor:
        tensors = _tensors(outputs)
        marked = [t for t in tensors if annotations.is_marked_loss(t)]
        losses = marked or [t for t in tensors if t.ndim == 0 and t.node is not None]
        if not losses:
            raise Error(
                "Couldn't find a loss in graph! The forward of a poptorch.trainingModel must compute the loss and "
                "return it (e.g. `return output, self.loss(output, labels)`), so that it runs on the IPU."
            )
        if len(losses) > 1:
            raise Error(
                "Multiple independent losses found in graph. Graph must have one final loss. Wrap final graph loss "
                "in poptorch.identity_loss."
            )
        return losses[0]

    def _run(self, args, kwargs, micro) -> list:
        """Every micro-batch's outputs, in the order iteration, accumulation, replica; trains when training."""
        opts = self._options
        per_update = opts.replication_factor * opts.Training.gradient_accumulation
        results = []
        for iteration in range(opts.device_iterations):
            if self._training:
                self._optimizer.zero_grad()
            for j in range(per_update):
                micro_args, micro_kwargs = self._slice(args, kwargs, iteration * per_update + j, micro)
                outputs = self._forward(micro_args, micro_kwargs)
                if self._training:
                    loss = self._loss_of(outputs)
                    loss.backward(None if loss.ndim == 0 else np.ones_like(loss.array))
                results.append(_map(outputs, Tensor.detach))
            if self._training:
                reduction = opts.Training.accumulation_and_replication_reduction_type
                if reduction == ReductionType.Mean and per_update > 1:
                    for group in self._optimizer.param_groups:
                        for p in group["params"]:
                            if p.grad is not None:
                                p.grad = p.grad.array / np.asarray(per_update, p.array.dtype)
                self._optimizer.step()
        return results

    def _returned(self, results):
        opts = self._options
        replicas, per_update = opts.replication_factor, opts.replication_factor * opts.Training.gradient_accumulation
        last_of = [
            results[(i + 1) * per_update - replicas : (i + 1) * per_update] for i in range(opts.device_iterations)
        ]
        if opts.output_mode == OutputMode.All:
            return _combine(results)
        if opts.output_mode == OutputMode.Final:
            return _combine(last_of[-1])
        if opts.output_mode == OutputMode.EveryN:
            period = opts.output_return_period
            return _combine([r for i, group in enumerate(last_of) if (i + 1) % period == 0 for r in group])
        sums = [_sum_results(results[r::replicas]) for r in range(replicas)]
        return _combine(sums)

    # ---- compiling ----------------------------------------------------------------------------------------
    def _record_step(self, args, kwargs, micro):
        """Where one micro-batch step's ops run (forward, and backward when training: a ``stages.Layout``, from its
        blocks) and its outputs; the model's state is restored after."""
        state = [(t, t.array.copy()) for t in list(self._model.parameters()) + list(self._model.buffers())]
        grads = [(p, p.grad) for p, _ in state]
        random_state = default_generator.get_state()
        micro_args, micro_kwargs = self._slice(args, kwargs, 0, micro)
        try:
            with record() as tape, stages.tracing(self._options.execution_strategy, tape) as trace:
                outputs = self._forward(micro_args, micro_kwargs)
                if self._training:
                    loss = self._loss_of(outputs)
                    loss.backward(None if loss.ndim == 0 else np.ones_like(loss.array))
        finally:
            for tensor, data in state:
                tensor.array[...] = data
            for p, grad in grads:
                p.grad = grad
            default_generator.set_state(random_state)
        return stages.layout(trace, self._training), outputs

    def _attach_ipus(self):
        """Configure the simulated system for this model: a replica per IPU (or per group of the blocks' IPUs),
        the memory proportion and partials type as the matrix products' Poplar options."""
        opts = self._options
        config = IPUConfig()
        wanted = opts.replication_factor * self._layout.ipus_per_replica
        config.auto_select_ipus = stages.reserved_ipus(wanted, opts.auto_round_num_ipus)
        poplar = {}
        if 0 in opts.available_memory_proportion:  # the first IPU's; a pipeline's other stages: _stage_memory_options
            poplar["availableMemoryProportion"] = str(opts.available_memory_proportion[0])
        if opts.Precision.partials_type:
            poplar["partialsType"] = opts.Precision.partials_type
        if poplar:
            config.matmuls.poplar_options = dict(poplar)
            config.convolutions.poplar_options = dict(poplar)
        if opts.executable_cache_dir:
            from ..ipu import executable_cache

            executable_cache.enable(opts.executable_cache_dir)
        config.configure_ipu_system()
        from ..ipu import system

        return system.current()

    def _extension_options(self, plan) -> ExtensionOptions:
        """The options Graphcore's Keras would record for the same program. PopTorch's memory proportions are per
        IPU: each pipeline stage's products get its IPU's (0.6, Poplar's default, for an IPU not given), as Keras'
        per-stage Poplar options give them. The optimizer state off chip (``TensorLocations``) is PopART's
        streaming memory: loaded before each weight update and stored after it (PopART's
        StreamingMemoryOpInserter, willow/src/transforms/streamingmemoryopinserter.cpp: RemoteLoad / RemoteStore),
        as Keras' ``offload_weight_update_variables`` (:mod:`ipu_teach.ipu.offloading`, with gradient
        accumulation)."""
        proportions = self._options.available_memory_proportion
        offload = {"offload_weight_update_variables": True} if self._options.TensorLocations.optimizer_off_chip else {}
        if plan is None:
            return ExtensionOptions(gradient_accumulation_optimizer_kwargs=offload)
        if not proportions:
            return ExtensionOptions(pipelining=offload)
        default = DEFAULT_OPTIONS.available_memory_proportion
        given = [{"availableMemoryProportion": str(proportions.get(ipu, default))} for ipu in plan.device_mapping]
        stage_options = [PipelineStageOptions(convolution_options=g, matmul_options=dict(g)) for g in given]
        return ExtensionOptions(
            pipelining={
                "forward_propagation_stages_poplar_options": stage_options,
                "backward_propagation_stages_poplar_options": stage_options,
                **offload,
            }
        )

    def _weight_name(self, name: str) -> str:
        module, _, leaf = name.rpartition(".")
        return f"{module or type(self._model).__name__}/{leaf}:0"


def _input_pipeline() -> tuple:
    """``(beside the device, in the caller's thread)``: the rate of the simulated input pipeline
    (``ipu.host.simulate_input_pipeline``) in the place it works, the other None. A ``poptorch.DataLoader`` whose
    workers (``num_workers > 0``, or ``DataLoaderMode.Async``) make the batches works beside the device; one with
    ``num_workers=0`` makes each call's batch in the loop's thread before the call (``overlapped=False``)."""
    rate = host.input_pipeline_rate()
    return (rate, None) if host.input_pipeline_overlapped() else (None, rate)


def _sum_results(results: list):
    first = results[0]
    if isinstance(first, Tensor):
        return Tensor(np.sum([r.array for r in results], axis=0))
    if isinstance(first, (list, tuple)):
        return type(first)(_sum_results([r[i] for r in results]) for i in range(len(first)))
    if isinstance(first, dict):
        return {key: _sum_results([r[key] for r in results]) for key in first}
    return first


def _progress_bar(seconds: float) -> None:
    """PopTorch's compilation bar (tqdm's format), with the simulated compile time."""
    minutes, rest = divmod(int(round(seconds)), 60)
    print(f"Graph compilation: 100%|{'█' * 10}| 100/100 [{minutes:02d}:{rest:02d}<00:00]", file=sys.stderr, flush=True)


def trainingModel(model, options=None, optimizer=None) -> PoplarExecutor:  # noqa: N802
    """Wrap ``model`` (whose forward returns its loss) for training on the IPU with ``optimizer`` (default SGD,
    lr 0.01, as PopTorch). Each call runs ``deviceIterations`` weight updates on the IPU and returns the outputs
    ``options.outputMode`` asks for (the last iteration's by default).

    Example:

    >>> from ipu_teach import poptorch, torch
    >>> class WithLoss(torch.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.linear = torch.nn.Linear(3, 1)
    ...     def forward(self, x, y):
    ...         return torch.nn.functional.mse_loss(self.linear(x), y)
    >>> model = WithLoss()
    >>> training = poptorch.trainingModel(model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1))
    >>> before = model.linear.bias.item()
    >>> loss = training(torch.ones(4, 3), torch.ones(4, 1))
    >>> model.linear.bias.item() != before            # the original module holds the trained weights
    True
    """
    return PoplarExecutor(model, options, True, optimizer)


def inferenceModel(model, options=None) -> PoplarExecutor:  # noqa: N802
    """Wrap ``model`` for inference on the IPU: each call returns every micro-batch's outputs by default.

    Example:

    >>> from ipu_teach import poptorch, torch
    >>> model = poptorch.inferenceModel(torch.nn.Linear(3, 2), poptorch.Options().deviceIterations(3))
    >>> model(torch.zeros(6, 3)).shape
    torch.Size([6, 2])
    """
    return PoplarExecutor(model, options, False)
