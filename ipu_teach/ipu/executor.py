"""Running a Keras model on the simulated IPU: the rules, the executable, the numerics and the clock.

Numerics are the CPU's: each replica's micro-batch gradient is computed with numpy and the
replicas' (and accumulated micro-batches') gradients are averaged before one update, so R
replicas of batch b end exactly where the CPU ends with batch R*b. Time is simulated: each
execution costs the host's launch overhead plus the BSP Engine's cycles for streaming the
batches in, looping ``steps_per_execution`` steps on the device, all-reducing gradients over
IPU-Links and updating the weights; the first run of an executable also pays its compile time.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import bsp, hardware
from ..keras.engine.training import Plan
from . import executable_cache, messages, system
from .lowering import lower


class IPURuleError(ValueError):
    """A constraint of the IPU's Keras, with what to change."""


@dataclass
class Executable:
    """One compiled program: its lowering, the Engine's timeline of one execution, its cost."""

    key: str
    graph: object
    timeline: object
    seconds_per_execution: float
    compile_seconds: float
    from_cache: bool


def _make_divisible_hint(n, d):
    return n - n % d


class IPUExecutor:
    """Runs fit / evaluate / predict of one model on the IPUs the system configuration selected."""

    time_note = "(simulated)"

    def __init__(self, model):
        self.model = model
        self.executables = {}
        self.replicas = 1
        self._compile_due = 0.0

    # ----- planning ------------------------------------------------------------------------------
    def prepare(self, model, mode, adapter) -> Plan:
        configuration = system.current()
        if configuration is None:
            raise RuntimeError("The IPU system has not been configured. Before using the model in an IPUStrategy, "
                               "create an ipu.config.IPUConfig(), set config.auto_select_ipus = 1 and call "
                               "config.configure_ipu_system()")
        options = getattr(model, "_ipu_options", {})
        accumulation = int(options.get("gradient_accumulation_steps_per_replica") or 1) if mode == "train" else 1
        self.replicas = replicas = configuration.num_ipus
        self.accumulation = accumulation
        batch = adapter.batch_size
        if batch is None:
            raise IPURuleError("The IPU needs batched data of a fixed size: call dataset.batch(batch_size, "
                               "drop_remainder=True) before passing a Dataset")
        if adapter.partial_batch:
            keep = _make_divisible_hint(adapter.num_samples, batch)
            raise IPURuleError(f"The data has {adapter.num_samples} samples, which is not divisible by the batch size "
                               f"{batch}: an IPU program is compiled for one batch shape, so the last partial batch "
                               f"({adapter.num_samples - keep} samples) cannot run. Keep the first {keep} samples "
                               f"(x = x[:{keep}], as make_divisible in the tutorial does) or use a Dataset with "
                               f".batch({batch}, drop_remainder=True)")
        if adapter.dataset is not None and not adapter.dataset.drop_remainder and adapter.dataset.cardinality() < 0:
            raise IPURuleError("The IPU needs every batch to have the same size: use dataset.batch(batch_size, "
                               "drop_remainder=True)")
        spe = model.steps_per_execution
        steps = adapter.steps
        if adapter.dataset is not None and adapter.dataset.cardinality() == -2:
            messages.info("The provided set of data has an unknown size. This can result in runtime errors if "
                          "not enough data is provided during execution.")
        per_replica = None
        if steps is not None:
            if steps < replicas:
                raise IPURuleError(f"{steps} batches cannot feed {replicas} replicas: each replica needs at least one "
                                   f"batch; use more data or fewer IPUs")
            if steps % replicas:
                messages.warning(f"The number of batches ({steps}) is not divisible by the number of replicas "
                                 f"({replicas}); the last {steps % replicas} batch(es) will be dropped.")
            per_replica = steps // replicas
            if spe > per_replica:
                messages.warning(f"The model `{model.name}` was configured with steps_per_execution={spe}, but there "
                                 f"are only {per_replica} steps per replica; steps_per_execution will be truncated "
                                 f"to {per_replica}.")
                spe = per_replica
            if per_replica % spe:
                divisors = [d for d in range(1, per_replica + 1) if per_replica % d == 0]
                raise IPURuleError(f"steps_per_execution={spe} must divide the number of steps per epoch per replica "
                                   f"({per_replica} = {steps} batches / {replicas} replica(s)); choose a divisor such "
                                   f"as {', '.join(map(str, divisors[-4:]))}, or trim the data so {spe} divides it")
        if mode == "train" and spe % accumulation:
            raise IPURuleError(f"steps_per_execution={spe} must be a multiple of "
                               f"gradient_accumulation_steps_per_replica={accumulation}: every execution must end "
                               f"with a weight update; use steps_per_execution={accumulation * max(1, spe // accumulation)}")
        if mode == "train":
            if replicas > 1 and accumulation > 1:
                messages.info(f"Training is distributed across {replicas} replicas and accumulating {accumulation} "
                              f"batches per optimizer step, your effective batch size is {batch * replicas * accumulation}.")
            elif replicas > 1:
                messages.info(f"Training is distributed across {replicas} replicas, your effective batch size is "
                              f"{batch * replicas}.")
            elif accumulation > 1:
                messages.info(f"Training is accumulating {accumulation} batches per optimizer step, your effective "
                              f"batch size is {batch * accumulation}.")
        notice = None
        if spe == 1:
            notice = (f"The model `{model.name}` has been configured with only 1 steps per execution. Consider "
                      "increasing the value for the `steps_per_execution` argument passed to the `compile()` method "
                      "to improve performance.")
        x, y = adapter.first_batch()
        self.executable = self._compile(model, mode, x, y, configuration, spe, accumulation)
        return Plan(steps_per_execution=spe, steps=per_replica, replicas=replicas,
                    epoch_notice=(lambda: messages.info(notice)) if notice else None)

    def _compile(self, model, mode, x, y, configuration, spe, accumulation) -> Executable:
        spec, replicas = configuration.spec, configuration.num_ipus
        graph = lower(model, mode, x, y, spec, accumulation=accumulation, replicas=replicas)
        self._check_memory(model, graph, configuration)
        description = {"graph": graph.signature, "mode": mode, "micro_batch": graph.micro_batch,
                       "steps_per_execution": spe, "replicas": replicas, "accumulation": accumulation,
                       "ipu": spec.name, "tiles": spec.tiles,
                       "optimizer": model.optimizer.get_config() if mode == "train" else None}
        key = executable_cache.key_of(description)
        if key in self.executables:
            return self.executables[key]
        timeline = bsp.Engine(self._program(graph, spe, accumulation, replicas), spec, ipus=replicas).run()
        compile_seconds = hardware.HOST.compile_seconds(graph.compute_sets)
        cached = executable_cache.load(key)
        due = hardware.HOST.executable_load_s if cached else compile_seconds
        if cached:
            messages.info(f"Loaded the executable of `{model.name}` ({mode}) from the executable cache "
                          f"({executable_cache.cache_path()}): no compilation needed.")
        else:
            executable_cache.store(key, {"model": model.name, "mode": mode, "compile_seconds": compile_seconds,
                                         "compute_sets": graph.compute_sets, "cycles_per_execution":
                                         timeline.total_cycles(), "description": description})
        executable = Executable(key, graph, timeline, hardware.HOST.execution_overhead_s + timeline.seconds(),
                                compile_seconds, bool(cached))
        self.executables[key] = executable
        self._compile_due = due
        return executable

    @staticmethod
    def _program(graph, spe, accumulation, replicas):
        """One execution: ``spe`` steps, each taking its batch from the infeed and giving its results to
        the outfeed (host streams, as Keras' IPU loops do), with the gradient all-reduce and the weight
        update after every ``accumulation`` steps."""
        micro = bsp.Sequence([bsp.HostToDevice(graph.input_bytes, label="infeed")]
                             + [s.program() for s in graph.forward + graph.backward]
                             + [bsp.DeviceToHost(graph.output_bytes, label="outfeed")], label="step")
        if graph.mode != "train":
            return bsp.Repeat(spe, micro, label="steps_per_execution")
        accumulate = [s.program() for s in graph.update if s.phase == "accumulate"]
        apply = [s.program() for s in graph.update if s.phase == "update"]
        body = [bsp.Repeat(accumulation, bsp.Sequence([micro] + accumulate), label="accumulation")]
        if replicas > 1:
            # One ring all-reduce per gradient tensor (Graphcore's default does not merge them):
            # 2(n-1) steps, each moving 1/n of the tensor over the IPU-Links and paying their latency.
            for i, nbytes in enumerate(graph.gradient_bytes):
                body.append(bsp.Repeat(2 * (replicas - 1), bsp.IPULinkCopy(-(-nbytes // replicas),
                                       label=f"gradients/all-reduce:{i}"), label="all-reduce"))
        return bsp.Repeat(spe // accumulation, bsp.Sequence(body + apply), label="steps_per_execution")

    @staticmethod
    def _check_memory(model, graph, configuration):
        from .out_of_memory import check
        check(model, graph, configuration)

    # ----- running -------------------------------------------------------------------------------
    def run(self, model, mode, batches):
        batch = self.executable.graph.micro_batch
        for x, _ in batches:
            if len(x) != batch:
                raise IPURuleError(f"A batch of {len(x)} samples reached an IPU program compiled for batches of "
                                   f"{batch}: use Dataset.batch({batch}, drop_remainder=True) or trim the data")
        results = getattr(self, f"_{mode}")(model, batches)
        seconds = self.executable.seconds_per_execution + self._compile_due
        self._compile_due = 0.0
        return results, seconds

    def _train(self, model, batches):
        results, per_update = [], self.replicas * self.accumulation
        for start in range(0, len(batches), per_update):
            total = None
            chunk = batches[start:start + per_update]
            for x, y in chunk:
                loss, grads, y_pred = model.compute_gradients(x, y)
                model.update_metrics(loss, y, y_pred)
                total = grads if total is None else [t + g for t, g in zip(total, grads)]
                results.append(loss)
            model.apply_gradients([g / np.float32(len(chunk)) for g in total])
        return results

    def _test(self, model, batches):
        return [model.test_step(x, y) for x, y in batches]

    def _predict(self, model, batches):
        return [model.predict_step(x) for x, _ in batches]
