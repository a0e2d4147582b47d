"""Models written as classes: ``keras.Model`` subclassed with layers made in ``__init__`` and a ``call``.

As in Keras, such a model is built when first called on data (or by ``build(input_shape)``, or by
``fit``/``evaluate``/``predict``); its layers are those its attributes hold. As in Graphcore's Keras
(keras/ipu/extensions/model_extensions.py), ``build`` and the first ``fit``/``evaluate``/``predict`` also
trace ``call`` on ``keras.Input`` tensors into a graph of layer calls: the graph the pipeline stages of
``keras.ipu.PipelineStage`` blocks inside ``call``, or ``set_pipeline_stage_assignment``, refer to. A
``call`` that applies ``tf`` ops to tensors cannot be traced; it still runs, but cannot be pipelined.
"""

from __future__ import annotations

import numpy as np

from ... import nest
from ...autograd import Tensor, no_grad, precision
from ..layers.base import Input, KerasTensor
from . import call_context, graph


def _structure(value, leaf):
    """``leaf`` applied to each array of a tensor, a list or tuple of them, or a dict of them."""
    if isinstance(value, (list, tuple)):
        return type(value)(_structure(v, leaf) for v in value)
    if isinstance(value, dict):
        return {k: _structure(v, leaf) for k, v in value.items()}
    return leaf(value)


def _is_shape(value) -> bool:
    return isinstance(value, (list, tuple)) and all(d is None or isinstance(d, (int, np.integer)) for d in value)


def _shapes(shape, leaf):
    """``leaf`` applied to each shape of ``build``'s ``input_shape`` (a shape, or a list or dict of them)."""
    if _is_shape(shape):
        return leaf(tuple(shape))
    if isinstance(shape, (list, tuple)):
        return [_shapes(s, leaf) for s in shape]
    if isinstance(shape, dict):
        return {k: _shapes(s, leaf) for k, s in shape.items()}
    raise ValueError(
        "Specified input shape is not one of the valid types. Please specify a batch input shape of type tuple, "
        f"a list of input shapes, or a dict of them. User provided input type: {type(shape).__name__}"
    )


def _as_tensor(value):
    return value if isinstance(value, (Tensor, KerasTensor)) else Tensor(np.asarray(value, dtype=np.float32))


def _batch_shape(value) -> tuple:
    return (None,) + tuple(np.shape(value)[1:])


def call(model, inputs, training, kwargs, builds):
    """``model(inputs)`` on data: the model's ``call`` in its call context (its own ``build`` first, if it
    has one and is not built: ``builds``); the first call records what the model takes and gives."""
    tensors = _structure(inputs, _as_tensor)
    first = not model.built
    if first and builds:
        model.build(_structure(tensors, lambda t: tuple(t.shape)))
    with precision.autocast(model.compute_dtype):
        outputs = call_context.invoke(model, tensors, training, kwargs)
    if first:
        _record(model, tensors, outputs)
    return outputs


def _record(model, inputs, outputs) -> None:
    """What a built model takes and gives: input and output shapes (batch None), one output or several."""
    model._single_input = not isinstance(inputs, (list, tuple, dict))
    model._single_output = not isinstance(outputs, (list, tuple))
    model.input_shape = _structure(inputs, _batch_shape)
    model.output_shape = _structure(outputs, _batch_shape)
    model._output_count = len(nest.leaves(outputs))
    model.built = True


def build(model, input_shape) -> None:
    """``model.build(input_shape)``: trace ``call`` for the graph, then run it once on a zero sample (a size
    left None taken as 1) so that every layer creates its weights."""
    if input_shape is None:
        raise ValueError("You must provide an `input_shape` argument.")
    shapes = _shapes(input_shape, lambda s: s)
    trace(model, shapes)
    if model.built:
        return
    zeros = _shapes(shapes, lambda s: Tensor(np.zeros([1 if d is None else d for d in s], dtype=np.float32)))
    with no_grad():
        outputs = call_context.invoke(model, zeros, False, {})
    _record(model, zeros, outputs)


def build_from_data(model, x) -> None:
    """``fit``/``evaluate``/``predict`` build the model on their first sample, then trace it (Graphcore's
    Keras traces the graph when the model first runs on the IPU)."""
    if not model.built:
        with no_grad():
            model(_structure(x, lambda v: np.asarray(v)[:1]), training=False)
    trace(model, _structure(x, _batch_shape))


def trace(model, shapes) -> None:
    """The graph of layer calls ``call`` makes on ``keras.Input`` tensors of ``shapes``, kept as a functional
    model's (``model._order``); none if ``call`` does more than call layers (e.g. ``tf`` ops on tensors)."""
    if model.traced:
        return
    inputs = _shapes(shapes, lambda s: Input(batch_shape=s))
    try:
        outputs = call_context.invoke(model, inputs, False, {})
    except Exception as error:  # noqa: BLE001 - any op a symbolic tensor does not have: the model runs untraced
        model.trace_error = f"{type(error).__name__}: {error}"
        return
    given, made = nest.leaves(inputs), nest.leaves(outputs)
    if not all(isinstance(t, KerasTensor) for t in made):
        model.trace_error = "its call returns values that are not computed by layers"
        return
    model.inputs, model.outputs = given, made
    model._order = graph.topological_order(made)
    model.traced = True
