"""``keras.ipu.PipelineStage(n)``: layers called inside the block belong to pipeline stage n."""

_active: list = []


class PipelineStage:
    """A context manager: layers called inside ``with keras.ipu.PipelineStage(n):`` belong to pipeline stage n.

    Graphcore's way to cut a functional model into stages, each run on its own IPU when the model is
    pipelined (``set_pipelining_options``). Stages are numbered from 0 in the order the data flows;
    ``model.get_pipeline_stage_assignment()`` shows the result.

    Args:
      stage: Integer >= 0, the stage of the layers called inside the block.

    Raises:
      ValueError: if ``stage`` is not an integer >= 0.

    Example:

    >>> inputs = keras.Input(shape=(4,))
    >>> with keras.ipu.PipelineStage(0):
    ...     x = keras.layers.Dense(8, activation="relu")(inputs)
    >>> with keras.ipu.PipelineStage(1):
    ...     outputs = keras.layers.Dense(2)(x)
    >>> model = keras.Model(inputs, outputs)
    >>> [a.pipeline_stage for a in model.get_pipeline_stage_assignment()]
    [0, 1]
    """

    def __init__(self, stage: int):
        if not isinstance(stage, int) or stage < 0:
            raise ValueError(f"PipelineStage: the stage must be an integer >= 0, got {stage!r}")
        self.stage = stage

    def __enter__(self):
        _active.append(self.stage)
        return self

    def __exit__(self, *exc):
        _active.pop()
        return False


def current_stage():
    """The stage of the innermost open ``PipelineStage`` block, or None outside any."""
    return _active[-1] if _active else None
