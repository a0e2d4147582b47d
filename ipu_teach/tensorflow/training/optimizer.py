"""``tensorflow.python.training.optimizer.Optimizer`` (``tf.compat.v1.train.Optimizer``): TensorFlow 1's optimizer
base class, for the optimizers scripts write on it (Graphcore's inspecting-tensors example wraps a Keras optimizer
in one to outfeed its gradients). Keras' ``compile`` wraps such an optimizer in ``keras.optimizer_v1.TFOptimizer``,
which gives it each step's gradients through ``apply_gradients``. TensorFlow 1's own update rules
(``GradientDescentOptimizer``, ...) are not simulated: the base class's ``apply_gradients`` says so.

Example:

>>> from ipu_teach.tensorflow.training.optimizer import Optimizer
>>> import ipu_teach.tensorflow as tf
>>> w = tf.Variable([3.0])
>>> with tf.GradientTape():
...     loss = tf.reduce_sum(tf.square(w))
>>> [(grad.tolist(), var is w) for grad, var in Optimizer(False, "mine").compute_gradients(loss, [w])]
[([6.0], True)]
"""

from ...autograd import gradients
from ...not_simulated import NotSimulatedError


class Optimizer:
    """TensorFlow 1's optimizer base class.

    Args:
      use_locking: Accepted for TensorFlow's signature (there are no concurrent updates here).
      name: The optimizer's name (``get_name``).

    Raises:
      ValueError: for an empty name, as TensorFlow's.
    """

    def __init__(self, use_locking, name):
        if not name:
            raise ValueError("Must specify the optimizer name")
        self._use_locking = use_locking
        self._name = name

    def get_name(self):
        return self._name

    def compute_gradients(self, loss, var_list=None, **kwargs):
        """``[(gradient, variable)]`` of ``loss`` (computed under a ``tf.GradientTape`` or from a Keras model's
        weights) for each variable of ``var_list``.

        Raises:
          ValueError: without ``var_list`` (TensorFlow 1 would take the graph's trainable variables).
        """
        if var_list is None:
            raise ValueError("compute_gradients: pass var_list (ipu-teach has no graph of trainable variables)")
        variables = list(var_list)
        return list(zip(gradients.of([loss], variables), variables))

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """TensorFlow 1's update rules are not simulated: a subclass applies the gradients itself."""
        raise NotSimulatedError(f"tensorflow.python.training.optimizer.Optimizer.apply_gradients ({self._name})")

    def minimize(self, loss, global_step=None, var_list=None, **kwargs):
        return self.apply_gradients(self.compute_gradients(loss, var_list), global_step)
