"""``keras.ipu.PipelineStage(n)``: layers called inside the block belong to pipeline stage n."""

_active: list = []


class PipelineStage:
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
