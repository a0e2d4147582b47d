"""Where a model's steps run. Keras itself knows only the host CPU; a distribution strategy (the IPU's, in
``ipu_teach.ipu``) opens a scope here, with TensorFlow's rules (tf-keras 2.6 ``engine/training.py``, as in
graphcore/keras; ``tensorflow/python/distribute/distribute_lib.py``):

- A model keeps the strategy it was created under (``Model.__init__`` records it): compiled again outside the
  scope, to change the learning rate say, it still runs on the IPU.
- A model created outside any scope takes the scope it is compiled in, unless it already has weights: those
  were not created on the IPU (Keras' ValueError, saying to create the model in the scope).
- One strategy's scope cannot be entered inside another's, nor a model be compiled in the scope of a strategy
  other than its own (TensorFlow's "Mixing different tf.distribute.Strategy objects").
- Scopes are per thread, as TensorFlow's strategy stack is: a scope open in one thread places nothing
  compiled in another.

Keeping this a plain stack keeps Keras free of any import of the IPU code.
"""

import contextlib
import threading

from ...session import OpenBlocks

_scopes = threading.local()


def _stack() -> OpenBlocks:
    """This thread's open strategy scopes, innermost last."""
    if not hasattr(_scopes, "stack"):
        _scopes.stack = OpenBlocks()
    return _scopes.stack


@contextlib.contextmanager
def placement(strategy):
    """Inside, models created (or, created outside any scope, compiled) run on ``strategy.executor_for(model)``."""
    _check_not_mixed(
        current(),
        strategy,
        "A strategy's scope cannot be entered inside another's: leave the first scope, or use the same strategy object",
    )
    with _stack().pushed(strategy):
        yield strategy


def current():
    """The strategy whose scope this thread is in, or None."""
    stack = _stack()
    return stack[-1] if stack else None


def strategy_for(model):
    """The strategy ``model.compile`` places the model on (None: the CPU), or Keras' error when it cannot be
    compiled here. Checked before compile changes anything."""
    created_under, here = model._distribution_strategy, current()
    if created_under is not None:
        _check_not_mixed(
            here,
            created_under,
            f"`{model.name}` was created in the scope of the second and keeps it: compile it in that strategy's "
            "scope, or outside any scope",
        )
        return created_under
    if here is not None and model.weights:
        raise ValueError(
            f"Variable ({model.weights[0].name}) was not created in the distribution strategy scope of ({here}). "
            "It is most likely due to not all layers or the model or optimizer being created outside the "
            "distribution strategy scope. Try to make sure your code looks similar to the following.\n"
            "with strategy.scope():\n  model=_create_model()\n  model.compile(...)"
        )
    return here


def attach(model, strategy) -> None:
    model.device_executor = strategy.executor_for(model) if strategy is not None else None


def _check_not_mixed(open_strategy, strategy, advice) -> None:
    if open_strategy is not None and open_strategy is not strategy:
        raise RuntimeError(
            f"Mixing different tf.distribute.Strategy objects: {open_strategy} is not {strategy}. {advice}."
        )
