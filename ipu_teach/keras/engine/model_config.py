"""A model's ``get_config`` / ``from_config`` in Keras' format: the architecture as JSON-ready data.

A functional model's configuration is Keras' (keras/engine/functional.py ``get_network_config``): its
``name``; its ``layers``, each with ``class_name``, ``config``, ``name`` and ``inbound_nodes``, one node
per call of the layer listing the ``[layer_name, node_index, tensor_index, kwargs]`` it was called on;
and its ``input_layers`` and ``output_layers`` as ``[layer_name, node_index, tensor_index]``. A
Sequential model's is its ``name`` and its ``layers``, the input layer first when the model is built
(keras/engine/sequential.py). ``from_config`` makes the layers again from their configurations and
calls them as the nodes say, so the same graph comes back, with new weights.
"""

from __future__ import annotations

import inspect

from .. import layers as layers_module
from ..layers.base import Input, InputLayer, Layer

_MODEL_CLASS_NAMES = ("Functional", "Model", "Sequential")


def class_name(layer) -> str:
    """Keras' name for a layer's class in a configuration; a functional model inside another is "Functional"."""
    from ..models import Model, Sequential

    model_class = getattr(type(layer), "_extended_model_class", type(layer))  # not the extended class
    if model_class is Model:
        return "Functional"
    return "Sequential" if model_class is Sequential else model_class.__name__


def _layer_config(layer) -> dict:
    if isinstance(layer, InputLayer):
        shape = [None, *layer.output_shape[1:]]
        return {
            "batch_input_shape": shape,
            "dtype": layer.input_dtype,
            "sparse": False,
            "ragged": False,
            "name": layer.name,
        }
    return layer.get_config()


def layer_class(name, custom_objects) -> type:
    """A layer class named in a configuration: the caller's own (``custom_objects``), Keras' layers, or a
    model; never anything else a crafted name could reach."""
    from .. import models

    found = custom_objects.get(name)
    if found is None and isinstance(name, str) and not name.startswith("_"):
        found = getattr(models, "Model" if name == "Functional" else name, None) if name in _MODEL_CLASS_NAMES else None
        found = found or getattr(layers_module, name, None)
    if not (isinstance(found, type) and issubclass(found, Layer)):
        raise ValueError(f"Unknown layer: {name!r}. Pass its class in custom_objects={{{name!r}: {name}}}")
    return found


def _make_layer(entry, custom_objects) -> Layer:
    cls = layer_class(entry["class_name"], custom_objects)
    if "custom_objects" in inspect.signature(cls.from_config).parameters:  # a model inside the model
        return cls.from_config(entry["config"], custom_objects=custom_objects)
    return cls.from_config(entry["config"])


def _input(config) -> object:
    return Input(tuple(config["batch_input_shape"][1:]), name=config["name"], dtype=config.get("dtype"))


def _first_node(layer_or_class_name) -> int:
    """Keras' number of a layer's first call in a configuration: 1 for a model used as a layer, whose node 0 is
    its own making from its inputs (tf-keras ``functional._should_skip_first_node``), else 0."""
    name = layer_or_class_name if isinstance(layer_or_class_name, str) else class_name(layer_or_class_name)
    return 1 if name in _MODEL_CLASS_NAMES else 0


def functional_config(model) -> dict:
    node_index, calls, call_of = {}, {}, {}
    for tensor in model._order:  # a layer's n-th call in the model is its node n (one for all its outputs)
        call = id(tensor.siblings) if tensor.siblings else id(tensor)
        if call not in call_of:
            call_of[call] = len(calls.setdefault(id(tensor.layer), []))
            calls[id(tensor.layer)].append(tensor)
        node_index[id(tensor)] = call_of[call] + _first_node(tensor.layer)

    def inbound(tensor):
        parents = [[parent.layer.name, node_index[id(parent)], parent.index] for parent in tensor.inputs]
        roles = getattr(tensor.layer, "call_roles", None)
        if roles:  # called with tensors as keywords (MultiHeadAttention's value, key, mask): tf-keras' form
            return [[*parents[0], dict(zip(roles[1:], parents[1:]))]]
        return [[*parent, {}] for parent in parents]

    def endpoint(tensor):
        return [tensor.layer.name, node_index[id(tensor)], tensor.index]

    return {
        "name": model.name,
        "layers": [
            {
                "class_name": class_name(layer),
                "config": _layer_config(layer),
                "name": layer.name,
                "inbound_nodes": [] if isinstance(layer, InputLayer) else [inbound(t) for t in calls[id(layer)]],
            }
            for layer in model._layers
        ],
        "input_layers": [endpoint(t) for t in model.inputs],
        "output_layers": [endpoint(t) for t in model.outputs],
    }


def functional_from_config(cls, config, custom_objects=None):
    """Keras' ``Functional.from_config``: each layer made again, each node called once its inputs exist."""
    custom_objects = custom_objects or {}
    tensors, waiting = {}, []
    for entry in config["layers"]:
        if entry["class_name"] == "InputLayer":
            tensors[(entry["name"], 0)] = _input(entry["config"])
            continue
        layer, first = _make_layer(entry, custom_objects), _first_node(entry["class_name"])
        waiting += [(layer, entry["name"], first + k, node) for k, node in enumerate(entry["inbound_nodes"])]
    while waiting:
        ready = [w for w in waiting if all((name, index) in tensors for name, index, *_ in _references(w[3]))]

        def output(name, index, tensor_index=0, *_):
            made = tensors[(name, index)]
            return made[tensor_index] if isinstance(made, list) else made

        if not ready:
            layer, name, index, node = waiting[0]
            raise ValueError(
                f"Model.from_config: node {index} of layer {name!r} is called on {[n[:2] for n in node]}, "
                "which no layer of the configuration makes"
            )
        for item in ready:
            layer, name, index, node = item
            keywords = {k: output(*v) for k, v in (node[0][3] if len(node[0]) > 3 else {}).items() if _is_reference(v)}
            given = [output(*entry[:3]) for entry in node]
            if keywords:
                tensors[(name, index)] = layer(given[0], **keywords)
            else:
                tensors[(name, index)] = layer(given if layer.multi_input or len(given) > 1 else given[0])
            waiting.remove(item)

    def endpoints(key):
        found = [output(*entry) for entry in config[key]]
        return found[0] if len(found) == 1 else found

    return cls(endpoints("input_layers"), endpoints("output_layers"), name=config["name"])


def _is_reference(value) -> bool:
    """Whether a node's keyword value names a tensor, ``[layer_name, node_index, tensor_index]``."""
    return isinstance(value, list) and len(value) == 3 and isinstance(value[0], str)


def _references(node) -> list:
    """The tensors a node is called on: its entries and the tensors among the first entry's keywords."""
    keywords = node[0][3] if node and len(node[0]) > 3 else {}
    return [entry[:3] for entry in node] + [v for v in keywords.values() if _is_reference(v)]


def sequential_config(model) -> dict:
    layers = model._layers if model.built else model.layers  # the input layer first, once built
    return {
        "name": model.name,
        "layers": [{"class_name": class_name(layer), "config": _layer_config(layer)} for layer in layers],
    }


def sequential_from_config(cls, config, custom_objects=None):
    model = cls(name=config["name"])
    for entry in config["layers"]:
        is_input = entry["class_name"] == "InputLayer"
        model.add(_input(entry["config"]) if is_input else _make_layer(entry, custom_objects or {}))
    return model
