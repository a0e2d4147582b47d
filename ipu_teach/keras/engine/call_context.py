"""The layer call in progress, as Keras' call context, and the layers an object holds (Keras' tracking).

A layer called without ``training`` inside another layer's call takes the outer call's value: a model
written as a class whose ``call`` does ``self.dropout(x)`` drops out in ``fit`` and not in ``predict``, as
in Keras. A layer's ``call`` is given ``training`` only if its signature takes it (``call(self, inputs)``
is allowed). The layers a layer or model keeps in its attributes (also in lists, tuples and dicts) are its
sublayers: their weights are its weights, as Keras tracks them.
"""

from __future__ import annotations

import contextlib
import functools
import inspect

from ... import session
from ...autograd import scope

_calls = session.OpenBlocks()
"""(layer, training) of each layer call in progress, outermost first."""
_traces = session.OpenBlocks()
"""The names of the graphs being traced, innermost last: calls that build a graph TensorFlow would never run."""


@contextlib.contextmanager
def traced(graph_name: str):
    """A block whose layer calls only trace a graph (named as TensorFlow names it) that is never run: Keras'
    ``<layer>_scratch_graph`` where it calls a layer to learn its output shape, the step the IPU compiler traces.
    Side effects that TensorFlow would only put in the graph (an outfeed's enqueue) do not happen here."""
    with _traces.pushed(graph_name):
        yield


def tracing():
    """The name of the graph being traced (see :func:`traced`), None when calls run."""
    return _traces[-1] if _traces else None


def training(given):
    """The ``training`` of a call: the value given, else the enclosing call's (None outside any call)."""
    if given is not None or not _calls:
        return given
    return _calls[-1][1]


@functools.cache
def _training_parameter(cls) -> tuple:
    """(whether ``cls.call`` takes ``training``, its default): Keras passes it only to a call that takes it."""
    parameters = inspect.signature(cls.call).parameters
    if "training" in parameters:
        default = parameters["training"].default
        return True, (False if default is inspect.Parameter.empty else default)
    return any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()), None


def invoke(layer, inputs, given_training, kwargs):
    """``layer.call(inputs, **kwargs)`` inside the layer's call context, with ``training`` if it takes it.

    Ops are named after the outermost layer below a model (Keras names them after every enclosing
    layer): lowering attributes a custom layer's inner layers' work to the custom layer, which the model lists.
    """
    value = training(given_training)
    takes_training, default = _training_parameter(type(layer))
    if takes_training and "training" not in kwargs:
        kwargs = {**kwargs, "training": default if value is None else bool(value)}
    outer = _calls[-1][0] if _calls else None
    named = outer is None or outer.is_model  # directly in a model (or at the top): a layer of its own
    with _calls.pushed((layer, value)), scope(layer.name) if named else contextlib.nullcontext():
        return layer.call(inputs, **kwargs)


@session.on_reset
def _forget_calls() -> None:
    _calls.clear()
    _traces.clear()


def holds_layers(value, layer_class) -> bool:
    """Whether an attribute's value is a layer or a container of them (an empty list or dict may be filled later)."""
    if isinstance(value, layer_class):
        return True
    if isinstance(value, (list, tuple)):
        return not value or any(holds_layers(v, layer_class) for v in value)
    if isinstance(value, dict):
        return not value or any(holds_layers(v, layer_class) for v in value.values())
    return False


def layers_in(values, layer_class, owner) -> list:
    """The layers in the tracked attribute values (recursing into lists, tuples and dicts, not into layers),
    each once, in the order they were assigned; never ``owner`` itself."""
    found, seen = [], {id(owner)}

    def visit(value):
        if isinstance(value, layer_class):
            if id(value) not in seen:
                seen.add(id(value))
                found.append(value)
        elif isinstance(value, (list, tuple)):
            for v in value:
                visit(v)
        elif isinstance(value, dict):
            for v in value.values():
                visit(v)

    for value in values:
        visit(value)
    return found


def distinct(weights) -> list:
    """Each weight once (a layer kept in two attributes is one layer), in order."""
    seen = set()
    return [w for w in weights if not (id(w) in seen or seen.add(id(w)))]
