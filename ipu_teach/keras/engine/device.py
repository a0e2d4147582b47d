"""Where a model's steps run. Keras itself knows only the host CPU; a distribution strategy
(the IPU's, in ``ipu_teach.ipu``) opens a scope here, and models compiled inside it get the
strategy's executor. Keeping this a plain stack keeps Keras free of any import of the IPU code."""

import contextlib

_placements: list = []


@contextlib.contextmanager
def placement(strategy):
    """Models compiled inside run on ``strategy.executor_for(model)``."""
    _placements.append(strategy)
    try:
        yield strategy
    finally:
        _placements.pop()


def current():
    return _placements[-1] if _placements else None


def attach(model) -> None:
    strategy = current()
    model.device_executor = strategy.executor_for(model) if strategy is not None else None
