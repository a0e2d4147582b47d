"""``tf.function``: a function TensorFlow compiles; here it runs as plain Python (eagerly), every call.

TensorFlow traces a ``tf.function`` into a graph; ipu-teach has no graphs, so the function runs eagerly on
numpy. Results are the same for functions of tensors; Python side effects (prints, appending to lists) happen
on every call instead of only while tracing. Called through ``IPUStrategy.run`` it is one compiled IPU
program (``ipu.custom_loop``): compiled on its first call (and again for new shapes), a host call each time.

Example:

>>> import ipu_teach.tensorflow as tf
>>> @tf.function(jit_compile=True)
... def double(x):
...     return x * 2
>>> double(tf.constant([1.0, 2.0])).numpy(), double.jit_compile
(array([2., 4.], dtype=float32), True)
"""

import functools


class Function:
    """A function decorated with ``tf.function``: callable as the function, with TensorFlow's attributes."""

    def __init__(self, python_function, input_signature=None, jit_compile=None):
        self.python_function = python_function
        self.input_signature = input_signature
        self.jit_compile = jit_compile
        functools.update_wrapper(self, python_function)

    def __call__(self, *args, **kwargs):
        return self.python_function(*args, **kwargs)

    def __get__(self, instance, owner=None):
        """A ``tf.function`` method, bound to its object as the plain method would be."""
        if instance is None:
            return self
        return Function(self.python_function.__get__(instance, owner), self.input_signature, self.jit_compile)

    def get_concrete_function(self, *args, **kwargs):
        """The function itself: ipu-teach has no traced graphs to choose between."""
        return self

    def experimental_get_compiler_ir(self, *args, **kwargs):
        from ..not_simulated import NotSimulatedError

        raise NotSimulatedError("tensorflow.function.experimental_get_compiler_ir")


def function(func=None, input_signature=None, autograph=True, jit_compile=None, experimental_compile=None, **kwargs):
    """``@tf.function`` or ``@tf.function(...)``: a :class:`Function` running ``func``.

    Args:
      func: The function; None when used as ``@tf.function(...)`` with arguments.
      jit_compile: Boolean, compile with XLA (Graphcore's guide: always True for the IPU); recorded.
        ``experimental_compile`` is its older name. Default: None.
      input_signature, autograph: Accepted for TensorFlow's signature.

    Example:

    >>> import ipu_teach.tensorflow as tf
    >>> @tf.function(experimental_compile=True)
    ... def square(x):
    ...     return x * x
    >>> square(3.0), square.jit_compile, square.__name__
    (9.0, True, 'square')
    """
    if func is None:
        return functools.partial(
            function,
            input_signature=input_signature,
            autograph=autograph,
            jit_compile=jit_compile,
            experimental_compile=experimental_compile,
            **kwargs,
        )
    return Function(func, input_signature, jit_compile if jit_compile is not None else experimental_compile)
