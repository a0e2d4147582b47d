"""The optimizer state in Streaming Memory: Graphcore's ``offload_weight_update_variables``.

Graphcore's TensorFlow (perf_training.rst, "Optimizer state offloading"): an optimizer's state (momentum, Adam's
moments) "is only accessed and modified during the weight update", so with gradient accumulation (a pipeline,
or ``set_gradient_accumulation_options``' GradientAccumulationOptimizerV2) it need not stay in tile memory
through the forward and backward passes: "they are streamed onto the device during the weight update and then
streamed back to remote memory after they have been updated". It "requires the machine to be configured with
support for Poplar remote buffers" (a compile-only ``DeviceConnectionType.PRE_COMPILE`` or ``NEVER`` has them
with ``IPUConfig.device_connection.enable_remote_buffers``), and "can reduce maximum memory liveness, but it
can also increase the computation time of the weight update".

ipu-teach offloads when it is asked to (``offload_weight_update_variables=True``): each weight's optimizer state
is live only at its own weight update, which first copies it from Streaming Memory and afterwards back
(``bsp.StreamingMemoryCopy``: the DRAM on the IPU-Machine's gateway, reached over the IPU's own PCIe link, so
``IPUSpec.host_link_bytes_per_s`` each way and ``host_link_latency_s`` a copy). Graphcore's default, None,
"placed automatically based on the current best placement", keeps it in tile memory here.
"""

from __future__ import annotations

from dataclasses import replace

REMOTE_MEMORY_UNSUPPORTED = (
    "Current configuration of the IPU devices does not support remote memory and therefore weight update only "
    "variables cannot be offloaded to remote memory. Consider configuring the IPU system with "
    "'IPUConfig.device_connection.enable_remote_buffers' set to True if remote memory is supported."
)
"""Graphcore TensorFlow's FailedPrecondition when ``offload_weight_update_variables=True`` meets a system without
remote buffers (driver/passes/variables_offload_and_partition.cc @b2127bb); with None it keeps the state on chip."""


def optimizer_state_offloaded(options, configuration, accumulation: int, pipelined: bool) -> bool:
    """Whether the optimizer state lives in Streaming Memory: ``offload_weight_update_variables=True`` given to
    ``set_pipelining_options`` (a pipeline) or ``set_gradient_accumulation_options`` (``options``: the model's
    recorded extension options), with gradient accumulation; asked on a system without remote buffers, Graphcore's
    error (:data:`REMOTE_MEMORY_UNSUPPORTED`)."""
    asked = (
        options.pipelining.get("offload_weight_update_variables")
        if pipelined
        else options.gradient_accumulation_optimizer_kwargs.get("offload_weight_update_variables")
    )
    if asked is True and not configuration.remote_buffers:
        raise RuntimeError(REMOTE_MEMORY_UNSUPPORTED)
    return asked is True and accumulation > 1


def streamed(updates: list, slots: list, first_update: int, steps_per_weight: int = 1) -> tuple[list, list]:
    """The weight updates (``steps_per_weight`` steps per weight, one in TensorFlow, several in PopART: the
    program's steps from ``first_update`` on) and the optimizer state (``slots``: per slot, one memory item per
    weight) with the state offloaded: each weight's update copies its slots in and out around its first step, and
    they are live during its steps only."""
    k = steps_per_weight
    updates = [
        replace(step, streamed_bytes=sum(int(per_slot[i // k].per_tile.sum()) for per_slot in slots))
        if i % k == 0
        else step
        for i, step in enumerate(updates)
    ]
    slots = [
        [replace(item, live=(first_update + i * k, first_update + i * k + k - 1)) for i, item in enumerate(per_slot)]
        for per_slot in slots
    ]
    return updates, slots
