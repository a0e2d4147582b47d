"""One weight update from a global batch that arrives in parts: replicas, gradient accumulation's micro-batches.

A layer whose state every batch updates on the host (BatchNormalization's moving statistics) registers a context
that pools what the parts give and updates the state once on leaving, so replicas that each see a batch b end
where one step with the global batch R*b ends, as a single device would. The executor enters :func:`in_parts`
around the parts of each update without knowing which layers pool."""

import contextlib
from typing import Callable, ContextManager

_pooling: list = []  # filled at import by the layers that pool, never changed after


def pooled_over_parts(make_context: Callable[[], ContextManager]) -> Callable[[], ContextManager]:
    """Register ``make_context()``, entered around the parts of every global batch; returns it (a decorator)."""
    _pooling.append(make_context)
    return make_context


@contextlib.contextmanager
def in_parts():
    """The batches run inside are the parts of one global batch (each registered context pools them)."""
    with contextlib.ExitStack() as stack:
        for make_context in _pooling:
            stack.enter_context(make_context())
        yield
