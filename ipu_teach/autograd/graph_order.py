"""Post-order of a graph: every node after all the nodes it depends on.

Both the autograd tape (tensors back to their inputs) and Keras' functional graph (KerasTensors
back to the model's inputs) need it; iterative, so deep graphs cannot overflow the stack.
"""


def post_order(roots, parents) -> list:
    """Nodes reachable from ``roots`` through ``parents(node)``, each listed after its parents."""
    order, seen, stack = [], set(), [(node, False) for node in reversed(list(roots))]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        stack.extend((parent, False) for parent in reversed(list(parents(node))) if id(parent) not in seen)
    return order
