"""The program PopART builds: what a PopTorch program runs where Graphcore's TensorFlow would run something else.

PopTorch hands a model's graph to PopART, which builds the Poplar program with its own ops. For the same model the
matrix products, element-wise ops and reductions are poplibs' calls either way, but some of PopART's ops are not
TensorFlow's: its optimizer decomposes each weight's update into several ops (its ``SGD0Decompose``,
``SGD2Decompose`` and ``AdamDecompose`` patterns), its ``Nll`` loss masks torch's ignored label and counts the
samples left on the device, and PopTorch ends every loss with an ``IdentityLoss``; each op's opx lowers it to popops
calls, one compute set each (an expression of several ops given to one ``popops::map`` is one fused vertex). This
module says which, from PopART's source (graphcore/popart @d2f20d78db91f62a22dc39470e294b0d987055c5) and what
PopTorch passes it (graphcore/poptorch @c2a8b17762f1d7106f7bf048ff011ab4fee7685e); :func:`.lowering.lower` lowers
them when the program comes from PopTorch. Not lowered yet: dropout's random seed ops (RandomSetup's GetRandomSeed
and ModifyRandomSeed), the programs' copies, and the decompositions of RMSprop and LAMB.

Which framework builds a program follows from the front end that calls it (``Setup.host_api``): this is the one
switch, :func:`builder_for`, and both roads to a PopTorch program take it (``ipu_teach.poptorch``'s trainingModel
and inferenceModel, and a Keras model compiled with the "poptorch" host API, as bench_fidelity's PopTorch cases are).
A program whose calls cost as another front end's says who built it (``IPUExecutor(program_builder=...)``: the
PopXL cases, called as PopTorch calls, built as PopXL programs).

Example:

>>> from ipu_teach.ipu import popart_program
>>> popart_program.builder_for("poptorch"), popart_program.builder_for("keras")
('popart', 'tensorflow')
>>> from ipu_teach import keras
>>> [p.name.split("/")[0] for p in popart_program.weight_update_passes(keras.optimizers.SGD(momentum=0.9))]
['SGD1AcclUpdate', 'Accumulate', 'SGD1VarUpdate', 'SGD1VarUpdate']
"""

from __future__ import annotations

from dataclasses import dataclass

from ..autograd.cost import elementwise, reduction
from ..keras.optimizers import SGD, Adam

BUILDERS = {"keras": "tensorflow", "custom_loop": "tensorflow", "poptorch": "popart"}
"""Which framework builds the program each front end (``hardware.HOST_APIS``) calls: Graphcore's TensorFlow for
Keras and custom loops, PopART for PopTorch."""

PROGRAM_BUILDERS = ("tensorflow", "popart", "popxl")
"""The frameworks a program can come from. ``"popxl"``: a PopXL program, which PopART lowers too, but whose ops
are the ones its author wrote (the PopXL tutorials' SGD is one ``ops.scaled_add_`` per weight, as Graphcore's
TensorFlow's): lowered as TensorFlow's; its calls cost as PopTorch's (host API "poptorch")."""


def builder_for(host_api: str, program_builder: str | None = None) -> str:
    """The framework that builds the program ``host_api`` calls (one of :data:`PROGRAM_BUILDERS`):
    ``program_builder`` when given, else the front end's own (:data:`BUILDERS`)."""
    if program_builder is not None:
        if program_builder not in PROGRAM_BUILDERS:
            raise ValueError(f"program builder {program_builder!r} is not one of {PROGRAM_BUILDERS}")
        return program_builder
    if host_api not in BUILDERS:
        raise ValueError(
            f"host API {host_api!r} is not one of {tuple(BUILDERS)}: say which front end calls the program"
        )
    return BUILDERS[host_api]


@dataclass(frozen=True)
class UpdatePass:
    """One popops call of a PopART optimizer op, one compute set: ``name`` is the op and the call's debug name in
    its opx, ``codelet`` the ``hardware.VECTOR`` codelet that costs it. ``over_weight`` False: it works on the
    one-value optimizer scalar (the negated learning rate), not on the weight. ``tensor_scale``: its scale is
    an optimizer value held as a tensor (not a constant), which every tile of the weight receives first."""

    name: str
    codelet: str
    over_weight: bool = True
    tensor_scale: bool = False
    fused: int = 1
    """A fused ``popops::map`` expression (codelet ``"map_expression_op"``): its ops times its inputs over the
    weight, which Poplar's estimate of the vertex it generates charges per element (``hardware.VECTOR``)."""
    reads_gradient: bool = False
    """The first pass in the weight's layout that reads its gradient (or adds it to the optimizer state laid out like
    the weight): the gradient arrives there in its exchange (``lowering.with_gradient_arrival``)."""


_NEGATE = "add"
"""Negating or multiplying a float costs as ADD does (popops' binary and unary ops of one cycle per vector)."""

SGD0_VAR_UPDATE = (
    # SGD0VarUpdateOpx::grow (willow/src/popx/op/sgd0varupdatex.cpp): the weight-decay scale factor wdsf0 is not a
    # constant when the learning rate is not (WeightDecayScaleFactor0Helper::isConst, compoundscalarhelper.cpp),
    # so w *= wdsf0 is always a compute set; then neg(slr0) and w += -slr0 * g
    UpdatePass("SGD0VarUpdate/nonConstWeightDecay", "add", tensor_scale=True),
    UpdatePass("SGD0VarUpdate/neg", _NEGATE, over_weight=False),
    UpdatePass("SGD0VarUpdate/nonConstScaledSubtract", "scaled_add", tensor_scale=True, reads_gradient=True),
)
"""SGD without momentum: PopART's SGD0 (sgd.cpp, SGD::createOp: no momentum -> SGD0ComboOp; SGD0Decompose makes it
one SGD0VarUpdateOp without gradient accumulation)."""

SGD2_UPDATE = (
    # SGD2Decompose::acclUpdate (willow/src/patterns/sgd2decompose.cpp): SGD2PartialAcclUpdateOp, an
    # SGD1AcclUpdateOp lowered by SGD1AcclUpdateOpx::grow: accl *= smm1 (momentum, not constant); its
    # accl += swd1 * w is left out when the weight decay is the constant 0
    UpdatePass("SGD1AcclUpdate/nonConstMomentumScaling", "add", tensor_scale=True),
    # then an AccumulateOp (DampenedAdd, dpsf1 = 1 - dampening a constant 1): AccumulateOpx's "constAdd"
    UpdatePass("Accumulate/constAdd", "scaled_add", reads_gradient=True),
    # then SGD2VarUpdateOp, an SGD1VarUpdateOp: neg(slr1) and w += -slr1 * accl (SGD1VarUpdateOpx::grow)
    UpdatePass("SGD1VarUpdate/neg", _NEGATE, over_weight=False),
    UpdatePass("SGD1VarUpdate/nonConstScaledSubtractSGD1", "scaled_add", tensor_scale=True),
)
"""SGD with momentum: PopTorch's SGD, torch's or its own, keeps separate accumulators unless use_combined_accum is set
(python/_optimizer_attributes.py: _OptimizerType.SGD2; popart_compiler CompilerImpl.cpp:
SGDAccumulatorAndMomentum::Separate) -> SGD2ComboOp (sgd.cpp), decomposed per weight into these three ops (the
combined accumulator's SGD1Decompose makes as many compute sets, in another order).
Their state is the velocity ``Accl1___<weight>`` (reservedAccl1Prefix, tensornames.hpp): PopVision's
``Accl1___fc1.weight``."""

ZERO_ACCUMULATOR = UpdatePass("AccumulatorZero/zero", "add")
"""With gradient accumulation, each weight's accumulator is zeroed after its update (OptimizerDecompose::
zeroAccumulator, willow/src/patterns/optimizerdecompose.cpp; popops::zero), beside the accumulation itself."""


def _fused(name: str, ops: int, inputs: int, reads_gradient: bool = False) -> UpdatePass:
    """A ``popops::map`` of an expression of ``ops`` ops over ``inputs`` tensors the size of the weight."""
    return UpdatePass(name, "map_expression_op", fused=ops * inputs, reads_gradient=reads_gradient)


def adam_update_passes(weight_decay: float, decoupled: bool, accumulation: int = 1) -> tuple:
    """The compute sets of PopART's Adam (``decoupled`` False: PopTorch's Adam, weight decay as L2 regularisation) or
    AdamW (True: decoupled weight decay; PopTorch's popart_compiler/source/CompilerImpl.cpp gives PopART's Adam
    WeightDecayMode::L2Regularization for the one, Decay for the other) update of one weight, as AdamDecompose
    (willow/src/patterns/adamdecompose.cpp) splits PopTorch's optimizer (python/_optimizer_attributes.py and optim.py:
    betas, epsilon, weight decay and loss scaling not passed by the user are constants, AdamW's decay 0.01; the learning
    rate never is; those passed are tensors, a few more ops not modelled here): the accumulated gradient scaled by 1 /
    accumulation (gradUnscale, a ScaleOp: PopART's gradient scaling, compoundscalarhelper.cpp AdamGradientScalingHelper,
    with the mean's Post strategy), with L2 regularisation ``grad += wd * w`` (regularizeL2: a ScaledAdd, even for a
    weight decay of 0), the two moments (AccumulateOpx's constMovingAverage and constMovingAverageSquare maps,
    accumulatex.cpp), the accumulator's zeroing with gradient accumulation, AdamUpdaterOpx's step count and its one map
    of the bias-corrected update (adamupdaterx.cpp: m / (1 - b1^t) / (sqrt(v / (1 - b2^t)) + eps), plus wd * w for
    AdamW's non-zero decay), then AdamVarUpdateOpx's negated learning rate and ``w += -lr * update``
    (adamvarupdatex.cpp). Their state is ``Accl1___<weight>`` and ``Accl2___<weight>`` (adam.hpp's m and v) and the step
    ``Step___<weight>``."""
    decay = decoupled and weight_decay != 0.0
    return (
        UpdatePass("Scale/gradUnscale", "add"),
        *(() if decoupled else (UpdatePass("ScaledAdd/weightDecayScale", "scaled_add"),)),
        _fused("Accumulate/constMovingAverage", ops=3, inputs=2, reads_gradient=True),  # b1 * m + (1 - b1) * g
        _fused("Accumulate/constMovingAverageSquare", ops=4, inputs=2),  # b2 * v + (1 - b2) * g * g
        *((ZERO_ACCUMULATOR,) if accumulation > 1 else ()),
        UpdatePass("AdamUpdater/updateStep", "add", over_weight=False),
        # the bias corrections (sub, pow each), m and v divided by them, sqrt, + eps, the division: 9 ops over m
        # and v; AdamW's decay adds w's multiply and the add, over w as a third input
        _fused("AdamUpdater/map", ops=11 if decay else 9, inputs=3 if decay else 2),
        UpdatePass("AdamVarUpdate/leaningRate", _NEGATE, over_weight=False),  # sic: PopART's debug name
        UpdatePass("AdamVarUpdate/varUpdate", "scaled_add", tensor_scale=True),
    )


def weight_update_passes(optimizer, accumulation: int = 1) -> tuple | None:
    """The compute sets PopART's update of one weight runs, in order, for a Keras ``optimizer`` standing for a
    PopTorch one (``ipu_teach.poptorch`` maps torch's SGD to Keras' SGD with its momentum, Adam and AdamW to Keras'
    Adam with their ``weight_decay`` and, for AdamW, ``decoupled_weight_decay`` True: :func:`adam_update_passes`);
    None for an optimizer whose PopART decomposition is not modelled here (RMSprop, LAMB: costed as Graphcore's
    TensorFlow's one update op). PopTorch's constness: the learning rate is never a constant (``isNeverConst``,
    python/_optimizer_attributes.py), the momentum is not when it is set; SGD's weight decay, dampening, velocity and
    loss scaling are taken at their constant defaults. Gradient accumulation (``accumulation`` > 1) adds the
    accumulator's zeroing; its accumulation is lowered beside it as for TensorFlow. Nesterov momentum's extra
    SGD1Nesterov op is not modelled."""
    if isinstance(optimizer, Adam):
        decoupled = getattr(optimizer, "decoupled_weight_decay", False)
        return adam_update_passes(getattr(optimizer, "weight_decay", 0.0), decoupled, accumulation)
    if not isinstance(optimizer, SGD):  # a user's subclass of SGD updates as SGD does
        return None
    passes = SGD2_UPDATE if getattr(optimizer, "momentum", 0.0) else SGD0_VAR_UPDATE
    return passes + ((ZERO_ACCUMULATOR,) if accumulation > 1 else ())


NLL_LOSS_OPS = ("SparseSoftmaxCrossEntropy",)
"""The recorded ops PopTorch hands PopART as a log-softmax and an ``Nll`` op: torch's ``cross_entropy`` and Keras'
sparse categorical cross-entropy standing for it (PopTorch's crossEntropyLossHandler and nllLossNdHandler,
poptorch/source/popart_canonicalization/LossOps.cpp). The recorded op already costs the log-softmax and picking each
sample's value; :func:`nll_ignore_index_work` is what PopART's Nll adds. torch's ``nll_loss`` on a model's own
log-softmax is recorded as a gather, which this does not see."""


def nll_ignore_index_work(samples: int, classes: int) -> tuple[tuple, tuple]:
    """``(forward, backward)``: the ``(name, vector work)`` PopART's Nll and NllGrad run for the ignore index and the
    mean, beyond the log-softmax and the pick. PopTorch always passes torch's ``ignore_index`` (default -100) to
    PopART's Nll (createNllloss, LossOps.cpp), so NllOpx (willow/src/popx/op/nllx.cpp) masks the samples whose label
    is the ignored one (applyMaskInPlaceForIgnoredIndex: NOT_EQUAL, cast, multiply), twice in the forward pass (in
    grow and in handleLossOutReducedToScalar), and a mean reduction divides by the samples left, counted on the
    device (applyScalingInPlaceForMeanReductionWithIgnoreIndex: a reduce, max(count, 1), a divide, a multiply);
    NllGradOpx masks and scales the gradient the same way, over every class of every sample."""

    def named(prefix: str, *parts) -> tuple:
        """``(prefix/name, work)`` of each ``(name, work items)`` part (a pass over nothing is no compute set)."""
        return tuple((f"{prefix}/{name}", work) for name, items in parts for work in items)

    def mask(over: int) -> tuple:
        return (
            ("notEqual", elementwise("add", samples)),
            ("cast", elementwise("cast", samples)),
            ("masked", elementwise("add", over)),
        )

    def mean(over: int) -> tuple:
        return (
            ("numNonIgnoredSamples", reduction(samples, 1)),
            ("numNonIgnoredSamples_min", elementwise("add", 1)),
            ("combinedLossScale", elementwise("divide", 1)),
            ("mean", elementwise("add", over, broadcast=1)),
        )

    again = tuple((f"{name}2", items) for name, items in mask(samples))  # handleLossOutReducedToScalar's own mask
    forward = named("Nll", *mask(samples), *again, *mean(samples))
    backward = named("NllGrad", *mask(samples * classes), *mean(samples * classes))
    return forward, backward


def identity_loss_work() -> tuple[tuple, tuple]:
    """``(forward, backward)``: the ``(name, vector work)`` of PopART's IdentityLoss and its gradient, which PopTorch
    puts after every loss (createIdentityloss at the end of each loss handler of LossOps.cpp; a loss of the user's
    own is marked with poptorch.identity_loss), with the loss's reduction, torch's default mean. IdentityLossOpx
    reduces its input, the loss already reduced to one value, with the scale 1/N (popops::reduce); IdentityLossGradOpx
    divides the gradient by N, zeroes the reference tensor and adds the gradient in (willow/src/popx/op/identityx.cpp:
    popops::map, popops::zero, popops::addInPlace), all on that one value."""
    return (
        (("IdentityLoss/reduce", elementwise("add", 1)[0]),),
        (
            ("IdentityLossGrad/div", elementwise("divide", 1)[0]),
            ("IdentityLossGrad/zero_identity_reference_tensor", elementwise("add", 1)[0]),
            ("IdentityLossGrad/add_gradient_to_reference", elementwise("add", 1)[0]),
        ),
    )
