"""A bound on the weights layers may create while an architecture read from a file is built.

A model file declares its architecture in a few bytes of JSON, and building it allocates and
initialises every weight before the file's arrays are read: ``Dense(50000)`` on 50,000 features asks
for 10 GB. Every weight must then be matched by an array the file stores, so ``load_model`` builds
under a budget: no more values than the file's weights entry can hold (a value takes at least a byte).
A file asking for more is refused before that weight is allocated. Per thread, as building is.
"""

import contextlib
import math
import threading

_local = threading.local()


@contextlib.contextmanager
def limited_to(values: int, refuse):
    """Inside, layers may create ``values`` weight values in all; the weight that would go over calls
    ``refuse(weight_name, shape)``, which raises."""
    outer = getattr(_local, "budget", None)
    _local.budget = [values, refuse]
    try:
        yield
    finally:
        _local.budget = outer


def spend(weight_name: str, shape) -> None:
    """Called before a weight of ``shape`` is allocated: takes it from the budget, if one is open."""
    budget = getattr(_local, "budget", None)
    if budget is None:
        return
    size = math.prod(shape)
    if size > budget[0]:
        budget[1](weight_name, tuple(shape))
    budget[0] -= size
