"""``einsum`` of two operands as the IPU runs it: transposes and reshapes around one matrix product
(popops' einsum does the same), so its cost is that of the ops it is made of.

Supported: equations with two operands and an explicit output, where every index of an operand
either appears in the output or is summed between both operands (batch, free and contracted
indices). That covers Keras' ``EinsumDense`` projections (``"abc,cd->abd"``, ``"abc,cde->abde"``,
``"abcd,cde->abe"``) and the two products of ``MultiHeadAttention`` (``"aecd,abcd->acbe"``,
``"acbe,aecd->abcd"``).
"""

from .batch_matmul import BatchMatMulOp
from .linalg import MatMulOp
from .rearrange import TransposeOp
from .shape import ReshapeOp

EXAMPLES = '"abc,cd->abd", "abc,cde->abde", "abcd,cde->abe", "aecd,abcd->acbe", "acbe,aecd->abcd"'


def einsum(equation: str, a, b):
    """``np.einsum(equation, a, b)`` as a recorded MatMul or BatchMatMul between transposes and reshapes."""
    first, second, out = parse(equation)
    batch = [c for c in out if c in first and c in second]
    if out and out[-1] in first and out[-1] not in second:  # put the operand whose index ends the output last
        first, second, a, b = second, first, b, a
    left = [c for c in first if c in out and c not in second]
    right = [c for c in second if c in out and c not in first]
    summed = [c for c in first if c not in out]
    sizes = {**dict(zip(first, a.shape)), **dict(zip(second, b.shape))}
    _check_sizes(equation, first, second, a.shape, b.shape)
    rows = [_size(sizes, left)] if batch else [sizes[c] for c in left]  # MatMul takes the rows' axes as they are
    a = _arranged(a, first, batch + left + summed, [*[sizes[c] for c in batch], *rows, _size(sizes, summed)])
    b = _arranged(
        b, second, batch + summed + right, [*[sizes[c] for c in batch], _size(sizes, summed), _size(sizes, right)]
    )
    if batch:
        groups = _size(sizes, batch)
        product = BatchMatMulOp.apply(_reshaped(a, (groups, *a.shape[-2:])), _reshaped(b, (groups, *b.shape[-2:])))
    else:
        product = MatMulOp.apply(a, b)
    result = batch + left + right
    product = _reshaped(product, tuple(sizes[c] for c in result))
    return _transposed(product, tuple(result.index(c) for c in out))


def parse(equation: str) -> tuple:
    """The operands' and the output's indices, or a ValueError that names the supported form."""
    operands, arrow, out = equation.replace(" ", "").partition("->")
    operands = operands.split(",")
    problem = None
    if not arrow or len(operands) != 2:
        problem = "it needs two operands and an explicit output ('->')"
    elif not all(s.isalpha() for s in (*operands, out)):
        problem = "indices must be letters (no '...')"
    elif any(len(set(s)) != len(s) for s in (*operands, out)):
        problem = "an index repeats within one operand or the output (a trace or diagonal)"
    elif any(c not in operands[0] + operands[1] for c in out):
        problem = "an output index appears in neither operand"
    elif any(c not in out and not (c in operands[0] and c in operands[1]) for c in operands[0] + operands[1]):
        problem = "an index is summed within one operand only (reduce that operand first)"
    if problem:
        raise ValueError(
            f"einsum: equation {equation!r} is not supported: {problem}. Supported: two operands whose every index "
            f"is in the output or summed between both, e.g. {EXAMPLES}"
        )
    return operands[0], operands[1], out


def _check_sizes(equation, first, second, a_shape, b_shape):
    for indices, shape in ((first, a_shape), (second, b_shape)):
        if len(indices) != len(shape):
            raise ValueError(f"einsum: {equation!r} names {len(indices)} axes for an operand of shape {tuple(shape)}")
    for c in set(first) & set(second):
        if a_shape[first.index(c)] != b_shape[second.index(c)]:
            raise ValueError(
                f"einsum: index {c!r} of {equation!r} has size {a_shape[first.index(c)]} in the first operand and "
                f"{b_shape[second.index(c)]} in the second: they must be equal"
            )


def _size(sizes, indices) -> int:
    n = 1
    for c in indices:
        n *= sizes[c]
    return n


def _arranged(x, indices, order, shape):
    """``x`` with its axes in ``order``, then reshaped to ``shape`` (each step only when it changes something)."""
    return _reshaped(_transposed(x, tuple(indices.index(c) for c in order)), tuple(shape))


def _transposed(x, perm):
    return x if perm == tuple(range(len(perm))) else TransposeOp.apply(x, perm=perm)


def _reshaped(x, shape):
    return x if tuple(x.shape) == tuple(shape) else ReshapeOp.apply(x, shape=tuple(shape))
