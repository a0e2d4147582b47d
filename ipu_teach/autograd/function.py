"""Function: one op with a forward, a backward and a cost (MiniTorch's ``Function`` contract).

Subclasses write ``forward(ctx, *arrays, **params)``, ``backward(ctx, grad)`` returning one
gradient per input (``None`` where none is needed), and ``cost(ctx)``. ``apply`` wires them into
the graph and, while a :func:`record` block is open, notes each application with its cost, which
is how the IPU compiler learns what a model does.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

import numpy as np

from ..session import OpenBlocks
from . import allocation, precision, symbolic
from .cost import OpCost, elementwise
from .tensor import Node, Tensor, as_tensor, is_grad_enabled


class Context:
    """Scratch space shared by forward and backward of one application."""

    def __init__(self, needs_input_grad, input_shapes, itemsize, laid_out_inputs=()):
        self.needs_input_grad = needs_input_grad
        self.input_shapes = input_shapes
        self.itemsize = itemsize
        self.laid_out_inputs = laid_out_inputs
        """Per input, whether no op of the step made it, so that it can be laid out for the product that reads it
        (``MatrixProduct.left_laid_out``, ``right_laid_out``): a variable, a weight the program keeps
        (:func:`is_variable`), or, while a step is recorded, the step's data or a constant, or a view of one
        (``Function.view``). Graphcore's TensorFlow creates each for its first product (its allocation finder:
        parameters, infeeds and constants are allocating, found through reshapes, hlo_extensions.cc), as PopART's
        creators do; any other operand is the output of an op laid out its own way."""
        self.saved = ()
        self.output_shape = None

    def save_for_backward(self, *values):
        self.saved = values


@dataclass
class OpRecord:
    """One op application seen while recording: enough for the IPU model to place and time it."""

    op: str
    scope: str
    input_shapes: tuple
    output_shape: tuple
    itemsize: int
    forward: OpCost
    backward: OpCost
    params: dict = field(default_factory=dict)
    repeats_earlier: bool = False
    """Applied in an iteration after the first of a loop the IPU runs as one program (an RNN's timesteps, Poplar's
    ``Repeat``): it costs its cycles again, but its code was compiled with the first iteration's."""


allocation.keep_freed_memory()  # the ops' arrays reuse freed memory from step to step, as a framework's pool

_recorders = OpenBlocks()
_made = OpenBlocks()
"""Per open :func:`record` block, the tensors its ops made (not the step's data, nor views of it), by id: each is
held until the block closes, so that its id cannot pass to a later tensor (the step's data) while the block looks
ids up, which made what the program lays out depend on how the host reused memory."""
_scopes = OpenBlocks([""])
_repeating = OpenBlocks()


@contextlib.contextmanager
def record():
    """Collect an :class:`OpRecord` for every op applied inside the block."""
    with _recorders.pushed([]) as tape, _made.pushed({}):
        yield tape


@contextlib.contextmanager
def unrecorded():
    """A block whose ops no :func:`record` block collects: they run, but are not part of the step being recorded
    (TensorFlow's ``outside_compilation_scope`` runs them on the host; a layer run on a zero sample to learn its
    output shape is not part of the step, as Keras traces it on placeholders instead)."""
    saved = _recorders[:]
    del _recorders[:]
    try:
        yield
    finally:
        _recorders[:] = saved


@contextlib.contextmanager
def repeated_iteration():
    """A block that is a loop's iteration after the first (see ``OpRecord.repeats_earlier``)."""
    with _repeating.pushed(True):
        yield


@contextlib.contextmanager
def scope(name: str):
    """Name the ops applied inside (a Keras layer names its ops after itself)."""
    with _scopes.pushed(name):
        yield


class Function:
    op_name: str = "Function"
    """The op's name as TensorFlow and PopVision show it ("ReLU", "Conv2D"): what the op is recorded, lowered,
    profiled and explained under. Its class is that name with ``Op`` appended (``ReLUOp``), so that the class does
    not share its name with the Keras layer or loss, or the torch.nn module, of the same name; a subclass takes
    its name from its class name that way unless it declares its own."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "op_name" not in vars(cls):
            cls.op_name = cls.__name__.removesuffix("Op")

    codelet = "add"
    """The popops codelet an element-wise op runs as (a name in ``hardware.VECTOR``): "add" for add,
    subtract and multiply; an op whose codelet is slower (exp, divide) names its own."""

    autocast = True
    """Whether ``apply`` first brings floating inputs to the layer's compute dtype (Keras' autocasting, under a
    mixed-precision policy); False for ``CastOp``, the op autocasting applies."""

    view = False
    """Whether the op's output is a view of its input (Reshape): a view of the step's data is still data, which a
    product that reads it can have laid out for it (``Context.laid_out_inputs``)."""

    @staticmethod
    def forward(ctx, *arrays, **params):
        raise NotImplementedError

    @staticmethod
    def backward(ctx, grad):
        raise NotImplementedError

    ends_in_relu = False
    """Whether the op's last step is a plain ReLU, so that its backward is ReLU's gradient, ``grad * (output > 0)``,
    then ``backward_before_relu(ctx, that)``: a consumer that knows where its input is positive can apply the first
    while its own gradient is in cache (``backward_through``)."""

    @staticmethod
    def backward_before_relu(ctx, grad):
        """With ``ends_in_relu``: the gradients of the op's inputs from ``grad``, the gradient of its output before
        that ReLU. An op that sets ``ends_in_relu`` defines both itself (a subclass must not inherit them)."""
        raise NotImplementedError

    @classmethod
    def backward_through(cls, ctx, grad, producer: Node):
        """The gradients of ``producer``'s inputs from this op's output gradient ``grad``, the two backwards run as
        one where that saves passes over memory; None (the default) where this op has no such pass. The tape asks
        only where ``producer`` made this op's one input and no other op of the backward pass uses it, so that
        this op's input gradient is the producer's whole output gradient (``Tensor.backward``)."""
        return None

    @classmethod
    def infer(cls, ctx, *arrays, **params) -> symbolic.ShapedArray:
        """The output's shape and dtype, without computing it: what ``apply`` uses when an input is a
        ShapedArray (a shape-only trace). Default: an elementwise op, its inputs broadcast and promoted as numpy
        does. An op whose output is shaped otherwise, or whose ``cost`` reads what its ``forward`` notes on
        ``ctx``, states it here too."""
        return symbolic.ShapedArray(np.broadcast_shapes(*(a.shape for a in arrays)), symbolic.result_dtype(*arrays))

    @classmethod
    def cost(cls, ctx) -> OpCost:
        """Default: an elementwise op, one FLOP and one grain per output element, one pass of its codelet."""
        out = int(np.prod(ctx.output_shape))
        return OpCost(out, _bytes(ctx.input_shapes, ctx.itemsize), out * ctx.itemsize, out, (), _passes(cls, ctx))

    @classmethod
    def backward_cost(cls, ctx) -> OpCost:
        """Default: the backward pass does the forward's work once more per input needing a gradient."""
        forward = cls.cost(ctx)
        return forward.scaled(max(1, sum(ctx.needs_input_grad)))

    @classmethod
    def apply(cls, *inputs, **params) -> Tensor:
        tensors = tuple(as_tensor(x) for x in inputs)
        dtype = precision.compute_dtype()
        if dtype is not None and cls.autocast:
            tensors = tuple(_autocast(t, x, dtype) for t, x in zip(tensors, inputs))
        arrays = [t.array for t in tensors]
        needs = tuple(t.requires_grad for t in tensors) if is_grad_enabled() else (False,) * len(tensors)
        itemsize = max((a.itemsize for a in arrays if a.dtype.kind == "f"), default=4)
        made = _made[-1] if _recorders else None
        laid_out = tuple(is_variable(t) or (made is not None and id(t) not in made) for t in tensors)
        ctx = Context(needs, tuple(a.shape for a in arrays), itemsize, laid_out)
        traced = any(symbolic.is_symbolic(a) for a in arrays)  # shape-only: the same record, no numerics
        data = cls.infer(ctx, *arrays, **params) if traced else cls.forward(ctx, *arrays, **params)
        ctx.output_shape = data.shape
        out = Tensor(data, requires_grad=any(needs))
        if out.requires_grad:
            out.node = Node(cls, ctx, tensors)
        if made is not None and not (cls.view and all(laid_out)):
            made[id(out)] = out
        if _recorders:
            records = [
                OpRecord(name, _scopes[-1], *seen, bool(_repeating)) for name, *seen in cls.recorded_as(ctx, params)
            ]
            for tape in _recorders:
                tape.extend(records)
        return out

    @classmethod
    def recorded_as(cls, ctx, params) -> list:
        """What the IPU compiler sees of one application, one tuple per op: (name, input shapes, output shape,
        itemsize, forward cost, backward cost, params). One op by default; an op that fuses several for speed on
        the host (``fused``) states each, so that the simulator places and costs them as if applied one by one."""
        return [
            (
                cls.op_name,
                ctx.input_shapes,
                ctx.output_shape,
                ctx.itemsize,
                cls.cost(ctx),
                cls.backward_cost(ctx),
                params,
            )
        ]


def is_variable(tensor: Tensor) -> bool:
    """Whether ``tensor`` is a variable: a weight made by no op (a leaf) that trains or is named as a layer's
    weights are (``"dense/kernel:0"``); the data a step is given is neither."""
    return tensor.node is None and (tensor.requires_grad or tensor.name is not None)


def _autocast(tensor: Tensor, given, dtype) -> Tensor:
    """A floating input in the layer's compute dtype: a constant is converted, a tensor goes through a Cast
    op (so its gradient flows back in its own dtype), as Keras' autocasting does."""
    if tensor.dtype not in (np.float16, np.float32) or tensor.dtype == dtype:
        return tensor
    if not isinstance(given, Tensor):
        return Tensor(tensor.array.astype(dtype))
    from .ops import cast

    return cast(tensor, dtype)


def _passes(cls, ctx) -> tuple:
    """One pass of the op's codelet over its outputs; of two or more inputs, a smaller one (a bias) is broadcast
    to every tile."""
    out = int(np.prod(ctx.output_shape))
    smallest = min(int(np.prod(s)) for s in ctx.input_shapes) if len(ctx.input_shapes) > 1 else out
    return elementwise(cls.codelet, out, smallest if 1 < smallest < out else 0)


def _bytes(shapes, itemsize) -> int:
    return int(sum(np.prod(s) for s in shapes)) * itemsize
