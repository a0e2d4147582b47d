"""The functional graph: from output KerasTensors back to the inputs, in execution order."""

from ...autograd.graph_order import post_order
from ..layers.base import InputLayer, KerasTensor
from .call_context import distinct


def topological_order(outputs) -> list:
    """Every KerasTensor the outputs depend on, each after the tensors it was computed from."""
    return post_order(outputs, lambda tensor: tensor.inputs)


def check_inputs_reach(inputs, order) -> None:
    """Every path back from the outputs must end at one of the model's inputs."""
    given = {id(t) for t in inputs}
    for tensor in order:
        if not tensor.inputs and id(tensor) not in given:
            raise ValueError(
                f"Graph disconnected: cannot obtain the value of {tensor} from the model's inputs; "
                "pass it in `inputs` of keras.Model(inputs, outputs)"
            )


def layers_in_order(order) -> list:
    """Distinct layers by first use (input layers first)."""
    layers, seen = [], set()
    for tensor in sorted(order, key=lambda t: not isinstance(t.layer, InputLayer)):
        if id(tensor.layer) not in seen:
            seen.add(id(tensor.layer))
            layers.append(tensor.layer)
    return layers


def run(inputs, given, order, apply) -> dict:
    """Every tensor's value (by id) from the ``given`` values of the model's ``inputs``, calling
    ``apply(layer, value)`` for each layer call in ``order`` (a list of values for a multi-input layer).
    ``Model.call`` runs data through it, ``Model.compute_output_shape`` shapes."""
    values = {id(symbolic): value for symbolic, value in zip(inputs, given)}
    for tensor in order:
        if id(tensor) not in values:
            parents = [values[id(parent)] for parent in tensor.inputs]
            result = apply(tensor.layer, parents if tensor.layer.multi_input else parents[0])
            for output, value in zip(tensor.siblings or [tensor], result if tensor.siblings else [result]):
                values[id(output)] = value  # a call with several outputs gives all of them at once
    return values


def as_list(value) -> list:
    if isinstance(value, KerasTensor):
        return [value]
    values = list(value)
    for v in values:
        if not isinstance(v, KerasTensor):
            raise TypeError(
                f"keras.Model expects KerasTensors (from keras.Input and layer calls), got {type(v).__name__}"
            )
    return values


def keras_order(outputs, layers) -> list:
    """``layers`` in Keras' ``model.layers`` order (tf-keras ``functional._map_graph_network``): by depth from
    the outputs, deepest first, and at one depth in the order a walk back from the outputs first meets them.
    It differs from the order of first use where branches meet (two inputs, skip connections): Keras'
    ``model.layers``, ``get_weights`` and files (loaded by layer order) go by it."""
    first_met, finished, post_order = {}, set(), []
    for output in outputs:  # Keras' _build_map, as a loop: a deep model would overflow recursion
        stack = [(output, False)]
        while stack:
            tensor, expanded = stack.pop()
            if expanded:
                if id(tensor) not in finished:
                    finished.add(id(tensor))
                    post_order.append(tensor)
                continue
            if id(tensor) in finished:
                continue
            first_met.setdefault(id(tensor.layer), len(first_met))
            stack.append((tensor, True))
            stack += [(parent, False) for parent in reversed(tensor.inputs)]
    node_depth, layer_depth = {}, {}
    for tensor in reversed(post_order):
        depth = max(node_depth.setdefault(id(tensor), 0), layer_depth.get(id(tensor.layer), 0))
        layer_depth[id(tensor.layer)] = node_depth[id(tensor)] = depth
        for parent in tensor.inputs:
            node_depth[id(parent)] = max(depth + 1, node_depth.get(id(parent), 0))
    return sorted(layers, key=lambda layer: (-layer_depth[id(layer)], first_met[id(layer)]))


def first_use_weights(model) -> list:
    """``model.weights`` as ipu-teach listed them before ``model.layers`` followed Keras' order: each layer's
    at its first use. The order of ipu-teach's own ``.npz`` weights and model files, kept so that a file saved
    then still loads each array into the weight it was saved from."""
    if not hasattr(model, "_order") or model.subclassed:
        return model.weights
    weights = [
        w
        for layer in layers_in_order(model._order)
        for w in (first_use_weights(layer) if hasattr(layer, "_order") else layer.weights)
    ]
    return distinct(weights + model._weights)
