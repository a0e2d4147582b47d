"""The keyword arguments Graphcore's Keras model methods forward, checked so a misspelling is an error.

``set_gradient_accumulation_options(**kwargs)`` forwards its extra keywords to
``GradientAccumulationOptimizerV2`` and ``set_pipelining_options(**kwargs)`` to
``pipelining_ops.pipeline`` (graphcore/keras ``keras/ipu/extensions/extensions_base.py``,
``functional_extensions.py``; graphcore/tensorflow ``python/ipu/optimizers/
gradient_accumulation_optimizer.py``, ``python/ipu/ops/pipelining_ops.py``). There an unknown keyword
fails when the program is built; here it fails at once, naming the closest valid one. The keywords
are accepted and recorded; those the simulator does not model change nothing. Keywords Keras sets
itself are refused with Graphcore's messages.
"""

from ..validation import known_names

GRADIENT_ACCUMULATION_KEYWORDS = (
    "gradient_accumulation_steps_per_replica",
    "gradient_accumulation_reduction_method",
    "use_v2_gradient_accumulation_optimizer",
    # GradientAccumulationOptimizerV2's own arguments
    "offload_weight_update_variables",
    "replicated_optimizer_state_sharding",
    "dtype",
    "name",
)
GRADIENT_ACCUMULATION_RESERVED = {
    "opt": "Found `opt` key in `gradient_accumulation_optimizer_kwargs`. This is not supported as the optimizer "
    "which the model has been compiled with is automatically wrapped.",
    "num_mini_batches": "Found `num_mini_batches` key in `gradient_accumulation_optimizer_kwargs`. Set the "
    "`gradient_accumulation_steps_per_replica` argument to `set_gradient_accumulation_options` "
    "instead.",
}

PIPELINING_KEYWORDS = (
    "gradient_accumulation_steps_per_replica",
    "device_mapping",
    "accumulate_outfeed",
    "gradient_accumulation_reduction_method",
    # pipelining_ops.pipeline's own arguments that Keras forwards
    "pipeline_schedule",
    "recomputation_mode",
    "gradient_accumulation_dtype",
    "gradient_accumulation_for_captured_grads",
    "forward_propagation_stages_poplar_options",
    "backward_propagation_stages_poplar_options",
    "weight_update_poplar_options",
    "offload_weight_update_variables",
    "replicated_optimizer_state_sharding",
    "offload_activations",
    "offload_gradient_accumulation_buffers",
    "replicated_weight_sharding",
    "offload_weights",
    "continuous_weight_updates",
    "accumulate_outfeed_dtype",
    "name",
)
_EXPLICIT = {"gradient_accumulation_count": "gradient_accumulation_steps_per_replica"}
_AUTOMATIC = ("computational_stages", "repeat_count", "inputs", "infeed_queue", "outfeed_queue", "optimizer_function")
_INVALID = ("outfeed_loss", "outfeed_mask", "batch_serialization_iterations")
PIPELINING_RESERVED = {
    **{
        name: f"Found `{name}` key in `pipelining_kwargs`. Set the `{alternative}` argument to "
        "`set_pipelining_options` instead."
        for name, alternative in _EXPLICIT.items()
    },
    **{
        name: f"Found `{name}` key in `pipelining_kwargs`. This argument is automatically set by Keras."
        for name in _AUTOMATIC
    },
    **{
        name: f"Found `{name}` key in `pipelining_kwargs`. This argument is not compatible with Keras."
        for name in _INVALID
    },
}


def check(method: str, keywords, allowed, reserved: dict) -> None:
    """Graphcore's message for a reserved keyword, else a TypeError for one that does not exist."""
    for name in keywords:
        if name in reserved:
            raise ValueError(reserved[name])
    known_names(f"{method}()", keywords, allowed, noun="keyword argument")
