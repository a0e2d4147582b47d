"""Poplar's options for convolutions and matmuls, from ``IPUConfig`` and from each pipeline stage.

Graphcore's TensorFlow passes ``IPUConfig.convolutions.poplar_options`` and
``IPUConfig.matmuls.poplar_options`` to poplibs as strings (``{"availableMemoryProportion": "0.3",
"partialsType": "half"}``); a pipelined Keras model can override them per stage with
``set_pipelining_options(forward_propagation_stages_poplar_options=[PipelineStageOptions(...)], ...)``
(graphcore/tensorflow ``ipu/config.py`` ``_ConvolutionConfig`` / ``_MatmulConfig`` and
``ipu/ops/pipelining_ops.py`` ``PipelineStageOptions``). ipu-teach simulates those two options; any
other is an error that says which are simulated.
"""

from __future__ import annotations

import dataclasses

from ..autograd.precision import check_partials_type
from .matrix_plan import DEFAULT_OPTIONS, MatrixOptions

SIMULATED = ("availableMemoryProportion", "partialsType")


def parse(options, where: str, base: MatrixOptions = DEFAULT_OPTIONS) -> MatrixOptions:
    """``options`` (a dict of Poplar option strings) over ``base``; ``where`` names the option in errors."""
    if options is None:
        return base
    if not isinstance(options, dict):
        raise TypeError(
            f"{where} must be a dict of Poplar options, such as {{'availableMemoryProportion': '0.3'}}, "
            f"got {type(options).__name__}"
        )
    unknown = sorted(set(options) - set(SIMULATED))
    if unknown:
        raise ValueError(
            f"{where}: option(s) {unknown} are not simulated by ipu-teach; it models {', '.join(SIMULATED)}"
        )
    proportion = base.available_memory_proportion
    if "availableMemoryProportion" in options:
        value = options["availableMemoryProportion"]
        try:
            proportion = float(str(value))
        except ValueError:
            proportion = None
        if proportion is None or not 0 < proportion <= 1:
            raise ValueError(
                f"{where}['availableMemoryProportion'] must be a proportion of tile memory in (0, 1], "
                f"as a string such as '0.3', got {value!r}"
            )
    partials = base.partials_type
    if "partialsType" in options:
        partials = check_partials_type(options["partialsType"], f"{where}['partialsType']")
    return MatrixOptions(proportion, partials)


class PipelineStageOptions:
    """Poplar options for the convolutions and matmuls of one pipeline stage (Graphcore's Keras).

    The finest grain at which Graphcore's Keras sets ``availableMemoryProportion`` or ``partialsType``
    for some layers only: give ``set_pipelining_options`` one of these per stage, for the forward
    (``forward_propagation_stages_poplar_options``) and the backward stages
    (``backward_propagation_stages_poplar_options``); a stage's options replace ``IPUConfig``'s for its
    products.

    Args:
      convolution_options: Dict of Poplar convolution options, e.g. ``{"availableMemoryProportion": "0.3"}``.
      matmul_options: Dict of Poplar matmul options, e.g. ``{"partialsType": "half"}``.
      slice_options: Dict, accepted (ipu-teach has no slice ops to plan).

    Example:

    >>> options = [ipu.ops.pipelining_ops.PipelineStageOptions(matmul_options={"availableMemoryProportion": "0.2"}),
    ...            ipu.ops.pipelining_ops.PipelineStageOptions()]
    >>> from ipu_teach.examples import two_stage_model
    >>> model = two_stage_model()
    >>> model.set_pipelining_options(gradient_accumulation_steps_per_replica=4,
    ...                              forward_propagation_stages_poplar_options=options,
    ...                              backward_propagation_stages_poplar_options=options)
    >>> options[0]
    PipelineStageOptions(convolution_options={}, matmul_options={'availableMemoryProportion': '0.2'})
    """

    def __init__(self, convolution_options=None, matmul_options=None, slice_options=None):
        self.convolution_options = dict(convolution_options or {})
        self.matmul_options = dict(matmul_options or {})
        self.slice_options = dict(slice_options or {})

    def __repr__(self):
        return (
            f"PipelineStageOptions(convolution_options={self.convolution_options}, "
            f"matmul_options={self.matmul_options})"
        )


def check_stage_options(stage_options, what: str) -> list | None:
    """A list of PipelineStageOptions (or None), as ``set_pipelining_options`` takes it."""
    if stage_options is None:
        return None
    stage_options = list(stage_options)
    for option in stage_options:
        if not isinstance(option, PipelineStageOptions):
            raise TypeError(
                f"{what} must be a list of ipu.ops.pipelining_ops.PipelineStageOptions, one per "
                f"stage, got an item {option!r}"
            )
    return stage_options


def options_for(configuration, plan=None, pipelining: dict | None = None):
    """``(layer, phase, kind) -> MatrixOptions``: the system's options, overridden by the layer's stage's."""
    base = {"conv": configuration.conv_options, "matmul": configuration.matmul_options}
    pipelining = pipelining or {}
    per_phase = {
        "forward": pipelining.get("forward_propagation_stages_poplar_options"),
        "backward": pipelining.get("backward_propagation_stages_poplar_options"),
    }
    if plan is not None:
        for phase, stages in per_phase.items():
            if stages is not None and len(stages) != plan.stages:
                raise ValueError(
                    f"set_pipelining_options: {phase}_propagation_stages_poplar_options has "
                    f"{len(stages)} entries but the model has {plan.stages} pipeline stages; "
                    "give one PipelineStageOptions per stage"
                )

    def lookup(layer, phase, kind):
        stages = per_phase.get(phase)
        if plan is None or stages is None:
            return base[kind]
        stage = plan.stage_of_layer.get(layer, plan.stages - 1)
        given = stages[stage].convolution_options if kind == "conv" else stages[stage].matmul_options
        return parse(given, f"{phase}_propagation_stages_poplar_options[{stage}]", base[kind])

    return lookup


def describe(graph, configuration, stage_options) -> dict:
    """For the executable's cache key: the ops' precision and the Poplar options, named only where they differ
    from fp32 and the defaults, so the fp32 executables keep the cache keys they always had."""
    described = {}
    if set(graph.itemsizes) - {4}:
        described["itemsizes"] = graph.itemsizes
    options = (configuration.conv_options, configuration.matmul_options)
    if options != (DEFAULT_OPTIONS, DEFAULT_OPTIONS):
        described["poplar_options"] = [dataclasses.asdict(o) for o in options]
    stages = {k: [repr(o) for o in v] for k, v in (stage_options or {}).items() if k.endswith("poplar_options") and v}
    if stages:
        described["stage_poplar_options"] = stages
    return described
