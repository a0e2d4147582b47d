"""``Dataset.from_generator``: elements from a Python generator, checked against the declared signature.

As in TensorFlow, every yielded component is converted to its declared dtype, and a component of
another structure or shape is an error that says what was expected and what came.
"""

import numpy as np

from .structure import map_structure, named_leaves
from .tensor_spec import TensorSpec


def signature(output_signature, output_types, output_shapes):
    """The TensorSpec structure that describes each element, from either way TensorFlow accepts."""
    if output_signature is not None:
        if output_types is not None or output_shapes is not None:
            raise TypeError(
                "Dataset.from_generator: give either output_signature or output_types/output_shapes, not both"
            )
        for name, spec in named_leaves(output_signature, "output_signature"):
            if not isinstance(spec, TensorSpec):
                raise TypeError(f"Dataset.from_generator: {name} must be a tf.TensorSpec, got {spec!r}")
        return output_signature
    if output_types is None:
        raise TypeError(
            "Dataset.from_generator: describe the elements with output_signature=(tf.TensorSpec(shape, "
            "dtype), ...) (or the older output_types=...)"
        )
    return _legacy_signature(output_types, output_shapes)


def _legacy_signature(types, shapes):
    """TensorSpecs from TensorFlow 1's parallel structures of dtypes and shapes (a missing shape: unknown)."""
    if isinstance(types, (tuple, list)):
        shapes = [None] * len(types) if shapes is None else shapes
        return tuple(_legacy_signature(dtype, shape) for dtype, shape in zip(types, shapes))
    if isinstance(types, dict):
        shapes = {} if shapes is None else shapes
        return {key: _legacy_signature(dtype, shapes.get(key)) for key, dtype in types.items()}
    return TensorSpec(shapes, types)


def checked(element, spec):
    """The element with every component converted to its declared dtype; TensorFlow's errors when it does not fit."""
    if isinstance(spec, TensorSpec):
        if isinstance(element, (tuple, dict)):
            raise TypeError(_structure_error(spec, element))
        array = np.asarray(element, dtype=spec.dtype.dtype)
        if not spec.is_compatible_with(array):
            raise ValueError(
                f"`generator` yielded an element of shape {np.shape(array)} where an element of shape "
                f"{spec.shape} was expected."
            )
        return array
    if isinstance(spec, tuple) and isinstance(element, (tuple, list)) and len(element) == len(spec):
        return tuple(checked(item, item_spec) for item, item_spec in zip(element, spec))
    if isinstance(spec, dict) and isinstance(element, dict) and set(element) == set(spec):
        return {key: checked(element[key], spec[key]) for key in spec}
    raise TypeError(_structure_error(spec, element))


def _structure_error(spec, element):
    return (
        "`generator` yielded an element that did not match the expected structure. The expected structure was "
        f"{map_structure(lambda s: s.dtype, spec)}, but the yielded element was {element!r}."
    )


def fixed_batch_size(spec):
    """The leading dimension shared by every component when all shapes are fully known, else None."""
    leads = set()
    for _, leaf in named_leaves(spec, "spec"):
        if leaf.shape is None or not leaf.shape or any(d is None for d in leaf.shape):
            return None
        leads.add(leaf.shape[0])
    return leads.pop() if len(leads) == 1 else None
