"""What an op costs, stated by the op itself so the IPU model can place and time it.

The simulated IPU never looks inside an op: it spreads ``grains`` (independent units of
work, each ``flops / grains`` FLOPs) over tiles and moves ``bytes_in`` / ``bytes_out``.
An op that Poplar runs on the tiles' matrix units (the AMP) says so by listing its
``products``: the matrix products it lowers to, which the IPU model plans over the tiles as
Poplar's convolution planner does. FLOPs beyond those products (a bias add, a reduction)
run on the vector units, and the op says how, as poplibs would run them: its ``vector`` work is a
sequence of element-wise passes (:class:`VectorPass`, one popops codelet over some elements: one
compute set each) and reductions (:class:`Reduction`, ``popops::reduce``: several compute sets with
exchanges between them). The IPU model prices each from the codelets' cycle figures in
``hardware.VECTOR``.
"""

from dataclasses import dataclass, replace

from ..hardware import VECTOR_CODELETS


@dataclass(frozen=True)
class MatrixProduct:
    """One product ``out[rows, cols] = sum over depth`` that runs on the matrix units.

    ``channels`` is the part of ``depth`` the AMP consumes in channel groups (a convolution's input
    channels; the remaining ``depth / channels`` kernel positions are looped over). For a plain
    matrix multiply it is the whole depth. ``planner`` is the poplibs planner that lowers it,
    ``"conv"`` or ``"matmul"``: it decides which of ``IPUConfig.convolutions`` and ``IPUConfig.matmuls``
    options (``availableMemoryProportion``, ``partialsType``) apply. ``kernel_positions`` is how many times
    the left operand's ``rows x depth`` view repeats each element it stores (a convolution's windows over its
    activations or gradients: the kernel's positions; 1 for a plain matrix multiply).
    """

    rows: int
    depth: int
    cols: int
    channels: int
    planner: str = "matmul"
    kernel_positions: int = 1
    left_laid_out: bool = False
    right_laid_out: bool = False
    """Whether the left (``rows x depth``) or right (``depth x cols``) operand is laid out for this product, a
    variable or the step's data (``autograd.function.Context.laid_out_inputs``): Graphcore's TensorFlow (its
    allocation finder) and PopART (an op that creates its inputs) create it with poplin's ``createWeights`` or
    ``createInput`` for the first product that reads it, so each tile already holds its share of the slices it
    needs; any other operand is the output of an op laid out its own way."""
    left_transposed: bool = False
    right_transposed: bool = False
    """Whether the left or right operand is read as a transposed view of how it is stored (a backward product's
    ``x.T`` or ``w.T``, a weight-update convolution's activations with the positions as their depth): its innermost
    dimension is not contiguous, so poplin regroups and transposes it before the product, then copies it into the
    plan's layout (``regroupIfBeneficialForPlan``: the grouping it detects is 1)."""

    @property
    def left_elements(self) -> int:
        """Elements of the left operand as it is stored (without the repeats of its windows)."""
        return self.rows * self.depth // self.kernel_positions

    @property
    def right_elements(self) -> int:
        return self.depth * self.cols

    @property
    def stored_elements(self) -> int:
        """Elements of both operands as they are stored (the left one without its repeats)."""
        return self.left_elements + self.right_elements

    @property
    def transposed_elements(self) -> int:
        """Elements of the operands read as transposed views (``left_transposed``, ``right_transposed``), as stored."""
        return self.left_elements * self.left_transposed + self.right_elements * self.right_transposed

    @property
    def flops(self) -> int:
        return 2 * self.rows * self.depth * self.cols

    @property
    def swappable(self) -> bool:
        """Whether the product is a plain matrix product both ways round, ``out.T = right.T @ left.T`` (one kernel
        position), so that the planner may swap its operands."""
        return self.kernel_positions == 1 and self.depth == self.channels

    def swapped(self) -> "MatrixProduct":
        """The same product with its operands swapped (poplin's ``swapOperands`` transform): ``cols x depth`` by
        ``depth x rows``."""
        return replace(
            self,
            rows=self.cols,
            cols=self.rows,
            left_laid_out=self.right_laid_out,
            right_laid_out=self.left_laid_out,
            left_transposed=self.right_transposed,
            right_transposed=self.left_transposed,
        )


@dataclass(frozen=True)
class VectorPass:
    """One element-wise pass on the vector units: the popops ``codelet`` (a name in ``hardware.VECTOR``:
    "add", "relu", "exp", ...) over ``elements`` outputs. ``broadcast`` is the size of an operand broadcast
    along them (a bias, a per-channel scale): every tile must receive its share of it first. ``gathered`` is how
    many values of its operands the pass reads in a layout of its own, not where they were made (popnn's pooling
    plans its own partition of the windows): the pass's tiles first receive them, spread as its elements are.
    ``bias``: the broadcast operand is the op's bias, added to its matrix product's output (poplin's ``addBias``)
    and laid out for that add (``createBiases``): a tile receives only the part other tiles hold."""

    codelet: str
    elements: int
    broadcast: int = 0
    gathered: int = 0
    bias: bool = False

    def __post_init__(self):
        if self.codelet not in VECTOR_CODELETS:
            raise ValueError(f"VectorPass: no vector codelet {self.codelet!r}: use one of {', '.join(VECTOR_CODELETS)}")


@dataclass(frozen=True)
class Reduction:
    """``popops::reduce`` of ``elements`` values, spread over the tiles, into ``outputs`` values (a bias
    gradient, a loss mean, a normalisation's statistics): reduced on each tile, then the partials exchanged
    and reduced again until one value per output is left."""

    elements: int
    outputs: int


def elementwise(codelet: str, elements: int, broadcast: int = 0, bias: bool = False) -> tuple:
    """The ``vector`` work of one element-wise pass (none for no elements)."""
    return (VectorPass(codelet, int(elements), int(broadcast), bias=bias),) if elements > 0 else ()


def reduction(elements: int, outputs: int) -> tuple:
    """The ``vector`` work of one reduction (none when nothing is reduced: as many outputs as inputs)."""
    return (Reduction(int(elements), max(1, int(outputs))),) if elements > outputs else ()


@dataclass(frozen=True)
class OpCost:
    """Work of one op application: FLOPs, bytes read and written, how it splits, and the matrix
    products among its FLOPs (none for a vector-unit op)."""

    flops: int
    bytes_in: int
    bytes_out: int
    grains: int
    products: tuple = ()
    vector: tuple | None = None
    """The vector-unit work, in order: VectorPass and Reduction items (``()``: none). Not given, it is one
    "add" element per vector FLOP (a stated approximation for ops that do not say more)."""

    def __post_init__(self):
        if self.grains < 1:
            object.__setattr__(self, "grains", 1)
        if self.vector is None:
            object.__setattr__(self, "vector", elementwise("add", self.vector_flops))

    @property
    def flops_per_grain(self) -> float:
        return self.flops / self.grains

    @property
    def vector_flops(self) -> int:
        """The FLOPs that are not matrix products: they run on the vector units."""
        return max(0, self.flops - sum(p.flops for p in self.products))

    def scaled(self, factor: float) -> "OpCost":
        """The same op shape doing ``factor`` times the arithmetic (e.g. a backward pass)."""
        return OpCost(
            int(self.flops * factor),
            self.bytes_in,
            self.bytes_out,
            self.grains,
            self.products * max(1, int(factor)) if self.products else (),
            self.vector * max(1, int(factor)),
        )

    def __add__(self, other: "OpCost") -> "OpCost":
        return OpCost(
            self.flops + other.flops,
            self.bytes_in + other.bytes_in,
            self.bytes_out + other.bytes_out,
            max(self.grains, other.grains),
            self.products + other.products,
            self.vector + other.vector,
        )
