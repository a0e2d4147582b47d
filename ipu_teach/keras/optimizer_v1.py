"""``keras.optimizer_v1.TFOptimizer``: what Keras 2.6's ``compile`` makes of a TensorFlow 1 optimizer
(``tf.compat.v1.train.Optimizer``, e.g. a subclass of ``tensorflow.python.training.optimizer.Optimizer`` that
wraps a Keras optimizer, as Graphcore's inspecting-tensors example's ``OutfeedOptimizer`` does).

Keras' wrapper hands each step's gradients to the TensorFlow 1 optimizer's
``apply_gradients(grads_and_vars, global_step=iterations)``; whatever that does (outfeed some gradients, then call
a Keras optimizer) is the update. On the IPU, with gradient accumulation, it is given the accumulated gradients
once per weight update, as ``model.apply_gradients`` gives them. Its cost on the IPU is that of the Keras
optimizer it holds in an attribute (the first found), else plain SGD's. A TensorFlow 1 optimizer is recognised as
Keras' ``optimizers.get`` recognises it, here by its TensorFlow 1 methods (``compute_gradients`` and
``apply_gradients``), as ipu-teach's ``tensorflow.python.training.optimizer.Optimizer`` has them.
"""

from .optimizers import SGD, Optimizer


def is_tf1_optimizer(value) -> bool:
    """Whether ``value`` is a TensorFlow 1 optimizer (not a Keras one): it has ``compute_gradients``."""
    return not isinstance(value, Optimizer) and callable(getattr(value, "compute_gradients", None))


class TFOptimizer(Optimizer):
    """Keras 2.6's wrapper of a TensorFlow 1 optimizer (``optimizer_v1.TFOptimizer``).

    Example:

    >>> class Halving:  # a TensorFlow 1 optimizer: compute_gradients and apply_gradients
    ...     def compute_gradients(self, loss, var_list=None):
    ...         raise NotImplementedError
    ...     def apply_gradients(self, grads_and_vars, global_step=None, name=None):
    ...         for grad, var in grads_and_vars:
    ...             var.assign_sub(0.5 * grad)
    >>> import ipu_teach.tensorflow as tf
    >>> w = tf.Variable([1.0])
    >>> optimizer = keras.optimizers.get(Halving())
    >>> type(optimizer).__name__, optimizer.apply_gradients([(np.array([1.0]), w)]), w.numpy(), optimizer.iterations
    ('TFOptimizer', None, array([0.5], dtype=float32), 1)
    """

    def __init__(self, optimizer, iterations=None):
        super().__init__(name="TFOptimizer")
        self.optimizer = optimizer
        self.iterations = 0 if iterations is None else int(iterations)

    @property
    def _costed_as(self) -> Optimizer:
        held = [value for value in vars(self.optimizer).values() if isinstance(value, Optimizer)]
        return held[0] if held else SGD()

    @property
    def slots_per_weight(self):
        return self._costed_as.slots_per_weight

    @property
    def update_flops_per_weight(self):
        return self._costed_as.update_flops_per_weight

    @property
    def clipping_flops_per_weight(self) -> int:
        return self._costed_as.clipping_flops_per_weight

    def apply_gradients(self, grads_and_vars) -> None:
        """The TensorFlow 1 optimizer's ``apply_gradients(grads_and_vars, global_step=self.iterations)``; the step is
        counted, as TensorFlow 1 counts ``global_step``."""
        self.optimizer.apply_gradients(list(grads_and_vars), global_step=self.iterations)
        self.iterations += 1

    def get_grads(self, loss, params):
        return self.optimizer.compute_gradients(loss, params)

    def get_config(self) -> dict:
        return {"name": self.name, "optimizer": type(self.optimizer).__name__}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        raise NotImplementedError("TFOptimizer cannot be made from a configuration (Keras 2.6 cannot either)")
