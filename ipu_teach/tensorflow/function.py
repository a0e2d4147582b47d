"""``tf.function``: accepted, and the function runs as plain Python (eagerly), every call.

TensorFlow traces a ``tf.function`` into a graph; ipu-teach has no graphs, so the decorated function
is returned unchanged. Results are the same for functions of tensors; Python side effects (prints,
appending to lists) happen on every call instead of only while tracing.
"""

import functools


def function(func=None, input_signature=None, autograph=True, jit_compile=None, experimental_compile=None, **kwargs):
    """``@tf.function`` or ``@tf.function(...)``: the function itself."""
    if func is None:
        return functools.partial(
            function,
            input_signature=input_signature,
            autograph=autograph,
            jit_compile=jit_compile,
            experimental_compile=experimental_compile,
            **kwargs,
        )
    return func
