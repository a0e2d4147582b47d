"""Codelets: vertex code written as a numpy function that runs every vertex of a compute set at once.

Poplar runs one vertex per call; here all vertices of one codelet in one compute set run as a single
vectorised call. Every argument therefore has a leading axis with one entry per vertex, and the
function returns the outputs with that axis too::

    @codelet(inputs={"row": "n", "vec": "n"}, outputs={"out": ""})
    def dot(row, vec):                 # row, vec: (vertices, n)
        return (row * vec).sum(axis=-1)  # out: (vertices,)

A field's shape is a string of dimension names ("" = scalar, "n", "m n"), or None for any shape;
fields that share a name must agree in size, checked when tensors are connected.
"""

from __future__ import annotations

import numpy as np

from .errors import GraphError

DIRECTIONS = ("in", "out", "inout")


def _parse_dims(spec, codelet_name, field):
    if spec is None:
        return None
    if not isinstance(spec, str):
        raise GraphError(
            f"codelet {codelet_name!r}: field {field!r} shape must be a string of dimension names "
            f"like 'n' or 'm n' ('' for a scalar) or None, got {spec!r}"
        )
    return tuple(spec.split())


class Codelet:
    """A numpy vertex function with named, directed fields and an optional cycle estimate."""

    def __init__(self, function, inputs=None, outputs=None, inouts=None, cycles=None):
        self.function, self.name, self.cycles = function, function.__name__, cycles
        self.fields = {}
        for direction, fields in zip(DIRECTIONS, (inputs, outputs, inouts)):
            for field, dims in _field_items(fields):
                if field in self.fields:
                    raise GraphError(f"codelet {self.name!r}: field {field!r} is declared twice")
                self.fields[field] = (direction, _parse_dims(dims, self.name, field))
        if not any(direction != "in" for direction, _ in self.fields.values()):
            raise GraphError(f"codelet {self.name!r} has no outputs: declare outputs= or inouts=")

    def __repr__(self):
        return f"Codelet({self.name!r}, fields={list(self.fields)})"

    @property
    def readable(self):
        """Fields the codelet reads (inputs and in-outs), in declaration order."""
        return [f for f, (direction, _) in self.fields.items() if direction != "out"]

    @property
    def writable(self):
        """Fields the codelet writes (outputs and in-outs), in declaration order."""
        return [f for f, (direction, _) in self.fields.items() if direction != "in"]

    def check_shapes(self, shapes: dict, owner: str):
        """Raise a GraphError naming ``owner`` if connected ``shapes`` break the declared dimensions."""
        sizes = {}
        for field, shape in shapes.items():
            dims = self.fields[field][1]
            if dims is None:
                continue
            if len(dims) != len(shape):
                raise GraphError(
                    f"{owner}: field {field!r} of codelet {self.name!r} needs {len(dims)} dimension(s) "
                    f"({' '.join(dims) or 'a scalar'}) but the tensor connected has shape {shape}"
                )
            for dim, size in zip(dims, shape):
                seen = sizes.setdefault(dim, (size, field))
                if seen[0] != size:
                    raise GraphError(
                        f"{owner}: mismatched shapes: field {field!r} has {dim}={size} (shape {shape}) "
                        f"but field {seen[1]!r} has {dim}={seen[0]}; connect tensors whose "
                        f"'{dim}' dimensions agree"
                    )

    def estimate(self, num_elements: int, overhead: int) -> int:
        """Cycles of one vertex: the codelet's ``cycles`` (int or function of the elements it touches),
        else ``overhead`` + one cycle per element (approximate)."""
        if self.cycles is None:
            return overhead + num_elements
        return int(self.cycles(num_elements) if callable(self.cycles) else self.cycles)

    def run(self, arguments: dict, vertices: int, shapes: dict) -> dict:
        """Call the function once for ``vertices`` vertices; return outputs as ``(vertices, *shape)`` arrays."""
        result = self.function(**arguments)
        writable = self.writable
        if not isinstance(result, dict):
            result = dict(zip(writable, result)) if len(writable) > 1 else {writable[0]: result}
        missing = [field for field in writable if field not in result]
        if missing:
            raise GraphError(
                f"codelet {self.name!r} returned no value for field(s) {missing}; return a dict "
                f"with keys {writable} or a tuple in that order"
            )
        return {field: self._checked_output(field, result[field], (vertices,) + shapes[field]) for field in writable}

    def _checked_output(self, field, value, wanted):
        """The value written to ``field``: numbers of exactly the shape ``wanted`` (no broadcasting, which
        would hide a codelet computing the wrong thing; Poplar's vertices write every element themselves)."""
        if value is None:
            raise GraphError(
                f"codelet {self.name!r} returned None for field {field!r}: does the function end "
                f"with `return`? It must return an array of shape {wanted} (one row per vertex)"
            )
        array = np.asarray(value)
        if array.dtype.kind not in "biuf":
            raise GraphError(
                f"codelet {self.name!r}: field {field!r} returned {array.dtype} values, expected "
                f"numbers of shape {wanted}"
            )
        if array.shape != wanted:
            raise GraphError(
                f"codelet {self.name!r}: field {field!r} returned shape {array.shape}, expected "
                f"{wanted} (one row per vertex)"
            )
        return array


def _field_items(fields):
    if fields is None:
        return []
    if isinstance(fields, dict):
        return list(fields.items())
    return [(field, None) for field in fields]


def codelet(inputs=None, outputs=None, inouts=None, cycles=None):
    """Decorator: makes a numpy function a :class:`Codelet`, the code of the vertices of a compute set.

    Poplar runs one vertex per call; here all vertices of one codelet in one compute set run as a single
    vectorised call, so every argument has a leading axis with one entry per vertex (see the module
    docstring). The cycles of a vertex are estimated from its work, unless ``cycles`` says otherwise.

    Args:
      inputs: Dict of field name to shape, the fields the vertex reads. A shape is a string of dimension
        names (``""`` scalar, ``"n"``, ``"m n"``) or None for any shape.
      outputs: Dict of field name to shape, the fields the function returns (in this order).
      inouts: Dict of field name to shape, the fields read and written back.
      cycles: Optional cycle estimate per vertex. Default: None, estimated.

    Returns:
      A decorator that turns the function into a ``Codelet``.

    Example:

    >>> from ipu_teach.bsp import poplar
    >>> @poplar.codelet(inputs={"row": "n", "vec": "n"}, outputs={"out": ""})
    ... def dot(row, vec):                      # row, vec: (vertices, n)
    ...     return (row * vec).sum(axis=-1)     # out: (vertices,)
    >>> dot
    Codelet('dot', fields=['row', 'vec', 'out'])
    """

    def wrap(function):
        return Codelet(function, inputs=inputs, outputs=outputs, inouts=inouts, cycles=cycles)

    return wrap
