"""``tf.GradientTape``: gradients of a custom training step, from ipu-teach's autograd.

TensorFlow records the ops run inside the tape's block and differentiates them on ``tape.gradient``.
ipu-teach's autograd already links every result computed from a tensor that needs a gradient (Keras weights,
``tf.Variable``, a watched tensor) to the op that made it, so the tape only has to walk those links back:
``gradient`` runs ``Tensor.backward``, the same backward pass ``fit`` uses (``Model.compute_gradients``), through
``autograd.gradients``, which gives the gradients of the sources asked for and leaves every ``grad`` as it was.

Example:

>>> import ipu_teach.tensorflow as tf
>>> w = tf.Variable([1.0, 2.0])
>>> with tf.GradientTape() as tape:
...     loss = tf.reduce_sum(w * w)
>>> tape.gradient(loss, w)
EagerTensor([2., 4.], dtype=float32)
"""

import contextlib

import numpy as np

from ..autograd import Tensor, gradients, no_grad
from ..ipu import custom_loop
from .tensor import tensor


class GradientTape:
    """Computes gradients of a target with respect to the sources that it was computed from.

    Args:
      persistent: Boolean: whether ``gradient`` may be called more than once. Default: False, as in TensorFlow.
      watch_accessed_variables: Accepted for TensorFlow's signature: Keras weights and ``tf.Variable`` are
        always watched (they are the autograd's leaves that need gradients). Default: True.

    Raises (from ``gradient``):
      RuntimeError: on a second ``gradient`` of a tape that is not persistent, as TensorFlow says.
      ValueError: for a target that no gradient can flow back from (computed with numpy, or by a ``tf``
        function ipu-teach cannot differentiate), saying what to change.

    A training step of a custom loop:

    Example:

    >>> import ipu_teach.tensorflow as tf
    >>> model = keras.Sequential([keras.layers.Dense(1, input_shape=(2,))])
    >>> with tf.GradientTape() as tape:
    ...     loss = tf.reduce_mean(tf.square(model(np.ones((4, 2), np.float32))))
    >>> grads = tape.gradient(loss, model.trainable_variables)
    >>> [g.shape for g in grads]
    [(2, 1), (1,)]
    """

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self.persistent = persistent
        self.watch_accessed_variables = watch_accessed_variables
        self._used = False
        self._watched = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def watch(self, tensor) -> None:
        """Makes gradients flow to ``tensor`` (a Tensor, or a nested structure of them) from what is computed
        from it afterwards, as ``tape.watch`` does for a constant in TensorFlow."""
        for item in _flatten(tensor):
            if not isinstance(item, Tensor):
                raise ValueError(
                    f"GradientTape.watch: got a {type(item).__name__}; ipu-teach can watch Keras weights, tf.Variable "
                    "and the tensors ops compute from them (a tf.constant here is a numpy array, which records "
                    "nothing): make it a tf.Variable(value) and differentiate with respect to that"
                )
            if not item.requires_grad:
                item.requires_grad = True
                self._watched.append(item)

    def watched_variables(self) -> tuple:
        return tuple(self._watched)

    @contextlib.contextmanager
    def stop_recording(self):
        """A block whose ops are not differentiated, as TensorFlow's ``tape.stop_recording()``."""
        with no_grad():
            yield

    def reset(self) -> None:
        """Forget what was watched and allow ``gradient`` again."""
        self._used = False
        self._watched = []

    def gradient(self, target, sources, output_gradients=None, unconnected_gradients="none"):
        """The gradients of ``target`` (summed over its values, and over the targets of a list) with respect to
        each of ``sources``, in the structure of ``sources``; None for a source the target does not depend on
        (zeros with ``unconnected_gradients="zero"``), as in TensorFlow.

        Example:

        >>> import ipu_teach.tensorflow as tf
        >>> x = tf.Variable(3.0)
        >>> with tf.GradientTape(persistent=True) as tape:
        ...     y = x * x
        ...     z = y * y
        >>> float(tape.gradient(z, x)), float(tape.gradient(y, x))   # dz/dx = 4 x^3, dy/dx = 2 x
        (108.0, 6.0)
        """
        if self._used and not self.persistent:
            raise RuntimeError(
                "A non-persistent GradientTape can only be used to compute one set of gradients (or jacobians)"
            )
        self._used = True
        targets = _flatten(target)
        seeds = _flatten(output_gradients) if output_gradients is not None else None
        flat_sources = _flatten(sources)
        for source in flat_sources:
            _check_source(source)
        _check_targets(targets)
        grads = gradients.of(targets, flat_sources, seeds)
        custom_loop.took_gradients(flat_sources)  # on the IPU, the step trains: a backward pass and an update
        if unconnected_gradients == "zero":
            grads = [np.zeros(s.shape, s.dtype) if g is None else g for g, s in zip(grads, flat_sources)]
        values = [None if g is None else tensor(g) for g in grads]
        return _pack_like(sources, iter(values))

    def jacobian(self, *args, **kwargs):
        from ..not_simulated import NotSimulatedError

        raise NotSimulatedError("tensorflow.GradientTape.jacobian", dir(GradientTape))


def _check_source(source) -> None:
    if not isinstance(source, Tensor):
        raise ValueError(
            f"GradientTape.gradient: a source is a {type(source).__name__}, which records nothing in ipu-teach; "
            "differentiate with respect to Keras weights (model.trainable_variables), tf.Variable or watched tensors"
        )
    if source.node is not None:
        raise ValueError(
            "GradientTape.gradient: ipu-teach gives gradients with respect to variables and watched inputs, not "
            "with respect to a tensor computed inside the tape; watch the input it is computed from instead"
        )


def _check_targets(targets) -> None:
    for target in targets:
        if not gradients.carries_gradient(target):
            raise ValueError(
                f"GradientTape.gradient: the target (a {type(target).__name__} of shape {np.shape(target)}) "
                "carries no gradient: it was computed with numpy (or np.asarray of a tensor), or from nothing the "
                "tape watches, or it is a gradient (ipu-teach has no second derivatives). Compute it with tf "
                "functions and Keras losses on the model's outputs"
            )


def _flatten(structure) -> list:
    if isinstance(structure, (list, tuple)):
        return [item for part in structure for item in _flatten(part)]
    if isinstance(structure, dict):
        return [item for key in sorted(structure) for item in _flatten(structure[key])]
    return [structure]


def _pack_like(structure, values):
    """``values`` (an iterator, in ``_flatten``'s order) in the nesting of ``structure``."""
    if isinstance(structure, (list, tuple)):
        packed = [_pack_like(part, values) for part in structure]
        if isinstance(structure, list):
            return packed
        return type(structure)(*packed) if hasattr(structure, "_fields") else tuple(packed)  # a namedtuple, a tuple
    if isinstance(structure, dict):
        return {key: _pack_like(structure[key], values) for key in sorted(structure)}
    return next(values)
