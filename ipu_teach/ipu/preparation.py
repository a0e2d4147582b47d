"""What ``IPUExecutor.prepare`` checks and says before compiling: the rules of the IPU's Keras, with
what to change, and the messages Graphcore's Keras prints (graphcore/keras ``keras/ipu/extensions``).

Each function takes plain values and either returns what the plan needs or raises :class:`IPURuleError`.
"""

from __future__ import annotations

from ..integers import divisors
from . import messages, pipelining, system


class IPURuleError(ValueError):
    """Raised when a Keras call breaks a rule of Graphcore's IPU Keras; the message says what to change.

    The rules come from how the IPU runs a model: whole executions of ``steps_per_execution`` batches,
    gradient accumulation counts that divide them, schedules that need a multiple of the stage count...
    It is a ValueError, as Graphcore's Keras raises.

    Example:

    >>> from ipu_teach.examples import configure_ipus
    >>> config = configure_ipus(1)
    >>> with ipu.ipu_strategy.IPUStrategy().scope():
    ...     model = keras.Sequential([keras.layers.Dense(2, input_shape=(4,))])
    ...     model.compile("sgd", "mse", steps_per_execution=3)
    ...     model.fit(np.zeros((16, 4), np.float32), np.zeros((16, 2), np.float32), batch_size=4, verbose=0)
    Traceback (most recent call last):
    ...
    ipu_teach.ipu.preparation.IPURuleError: steps_per_execution=3 must divide the number of steps per epoch ...
    """


def configured_system():
    """The configuration of ``configure_ipu_system``; without one nothing can run on an IPU."""
    configuration = system.current()
    if configuration is None:
        raise RuntimeError(
            "The IPU system has not been configured. Before using the model in an IPUStrategy, "
            "create an ipu.config.IPUConfig(), set config.auto_select_ipus = 1 and call "
            "config.configure_ipu_system()"
        )
    return configuration


def check_data_shape_known(adapter) -> None:
    """A Python generator gives no shape ahead of time (graphcore/keras keras/ipu/extensions/data_adapter.py)."""
    if adapter.python_input is not None:
        raise ValueError(
            f"The provided set of data is of type `{adapter.python_input}` which is not compatible "
            "with the IPU's requirement to know the data shape ahead of time. Please use "
            "`tf.data.Dataset.from_generator()` to specify the shape of your data."
        )


def replicas_and_accumulation(model, plan, num_ipus: int, mode: str, options) -> tuple[int, int]:
    """How many replicas run and how many micro-batches each accumulates per weight update; a pipelined
    model in training needs an accumulation count its schedule accepts."""
    __tracebackhide__ = True  # IPython and pytest leave this frame out: the traceback starts at the user's call
    if plan is None:
        accumulation = int(options.gradient_accumulation_steps_per_replica or 1) if mode == "train" else 1
        return num_ipus, accumulation
    replicas = num_ipus // plan.ipus_per_replica
    if mode != "train":
        return replicas, 1
    if not plan.accumulation:
        raise IPURuleError(
            f"Model `{model.name}` is pipelined over {plan.stages} stages, and pipelined "
            "training needs gradient accumulation (it keeps the forward and backward passes "
            "of each micro-batch on the same weights): call model.set_pipelining_options("
            f"gradient_accumulation_steps_per_replica={2 * plan.stages * 4}) (a multiple of "
            f"{2 * plan.stages} for the Grouped schedule, of {plan.stages} for Interleaved; "
            "the Sequential schedule takes any count, 1 included)"
        )
    pipelining.check_schedule(plan, plan.accumulation, True, "gradient_accumulation_steps_per_replica")
    return replicas, plan.accumulation


def fixed_batch_size(adapter) -> int:
    """The one batch size the program is compiled for; every batch must have it."""
    batch = adapter.batch_size
    if batch is None:
        raise IPURuleError(
            "The IPU needs batched data of a fixed size: call dataset.batch(batch_size, "
            "drop_remainder=True) before passing a Dataset"
        )
    if adapter.partial_batch:
        samples = adapter.num_samples
        keep = samples - samples % batch
        cure = (
            f"Keep the first {keep} samples (x = x[:{keep}], as make_divisible in the tutorial does) or use a "
            f"Dataset with .batch({batch}, drop_remainder=True)"
            if keep
            else f"Use a batch size that divides {samples}, such as {', '.join(map(str, divisors(samples)[-3:]))}, "
            "or more data"
        )
        raise IPURuleError(
            f"The data has {samples} samples, which is not divisible by the batch size {batch}: an IPU program "
            f"is compiled for one batch shape, so {'the last' if keep else 'its only'} partial batch "
            f"({samples - keep} samples) cannot run. "
            f"{cure}"
        )
    if adapter.dataset is not None and not adapter.dataset.drop_remainder and adapter.dataset.cardinality() < 0:
        raise IPURuleError(
            "The IPU needs every batch to have the same size: use dataset.batch(batch_size, drop_remainder=True)"
        )
    if adapter.dataset is not None and adapter.dataset.cardinality() == -2:
        messages.info(
            "The provided set of data has an unknown size. This can result in runtime errors if "
            "not enough data is provided during execution."
        )
    return batch


def steps_per_replica(model, steps, spe: int, replicas: int) -> tuple[int, int | None]:
    """``steps_per_execution`` (truncated to the steps each replica has, as Graphcore's Keras warns) and
    the steps per replica (None for data of unknown length); the former must divide the latter."""
    if steps is None:
        return spe, None
    if steps < replicas:
        raise IPURuleError(
            f"{steps} batches cannot feed {replicas} replicas: each replica needs at least one "
            f"batch; use more data or fewer IPUs"
        )
    if steps % replicas:
        messages.warning(
            f"The number of batches ({steps}) is not divisible by the number of replicas "
            f"({replicas}); the last {steps % replicas} batch(es) will be dropped."
        )
    per_replica = steps // replicas
    if spe > per_replica:
        messages.warning(
            f"The model `{model.name}` was configured with steps_per_execution={spe}, but there "
            f"are only {per_replica} steps per replica; steps_per_execution will be truncated "
            f"to {per_replica}."
        )
        spe = per_replica
    if per_replica % spe:
        raise IPURuleError(
            f"steps_per_execution={spe} must divide the number of steps per epoch per replica "
            f"({per_replica} = {steps} batches / {replicas} replica(s)); choose a divisor such "
            f"as {', '.join(map(str, divisors(per_replica)[-4:]))}, or trim the data so {spe} divides it"
        )
    return spe, per_replica


def check_steps_per_execution(plan, mode: str, spe: int, accumulation: int, per_replica=None) -> None:
    """An inference pipeline runs ``spe`` micro-batches, which its schedule must accept; in training
    every execution ends with a weight update. ``per_replica``: the steps per epoch per replica (None if
    unknown), which a steps_per_execution advised must divide."""
    if plan is not None and mode != "train":
        pipelining.check_schedule(plan, spe, False, "steps_per_execution")
    if mode == "train" and spe % accumulation:
        rule = (
            f"steps_per_execution={spe} must be a multiple of gradient_accumulation_steps_per_replica="
            f"{accumulation}: every execution must end with a weight update"
        )
        if per_replica is None:
            raise IPURuleError(f"{rule}; use steps_per_execution={accumulation * max(1, spe // accumulation)}")
        fitting = [d for d in divisors(per_replica) if d % accumulation == 0]
        if fitting:
            raise IPURuleError(
                f"{rule}; use steps_per_execution={min(fitting, key=lambda d: abs(d - spe))} (a multiple of "
                f"{accumulation} that divides the {per_replica} steps per replica)"
            )
        raise IPURuleError(
            f"{rule}, and no multiple of {accumulation} divides the {per_replica} steps per epoch per replica"
            f"{' (fewer than one weight update needs)' if per_replica < accumulation else ''}: use "
            f"gradient_accumulation_steps_per_replica={max(d for d in divisors(per_replica) if d <= accumulation)} "
            f"(or another divisor of {per_replica}), or give each replica a multiple of {accumulation} batches"
        )


def tell_effective_batch(mode: str, batch: int, replicas: int, accumulation: int) -> None:
    """Graphcore's Keras says the batch size one weight update sees when it differs from the batch."""
    if mode != "train":
        return
    if replicas > 1 and accumulation > 1:
        messages.info(
            f"Training is distributed across {replicas} replicas and accumulating {accumulation} "
            f"batches per optimizer step, your effective batch size is {batch * replicas * accumulation}."
        )
    elif replicas > 1:
        messages.info(
            f"Training is distributed across {replicas} replicas, your effective batch size is {batch * replicas}."
        )
    elif accumulation > 1:
        messages.info(
            f"Training is accumulating {accumulation} batches per optimizer step, your effective "
            f"batch size is {batch * accumulation}."
        )


def epoch_notice(model, spe: int):
    """With one step per execution Graphcore's Keras suggests more, once an epoch (None otherwise)."""
    if spe != 1:
        return None
    notice = (
        f"The model `{model.name}` has been configured with only 1 steps per execution. Consider "
        "increasing the value for the `steps_per_execution` argument passed to the `compile()` method "
        "to improve performance."
    )
    return lambda: messages.info(notice)
