"""How gradients of several micro-batches and of several replicas become one weight update, as on the IPU.

Graphcore's Keras reduces the micro-batch gradients of one replica with
``GradientAccumulationReductionMethod`` (default SUM), then all-reduces the replicas' results with a
cross-replica SUM: under ``IPUStrategy`` ``num_replicas_in_sync`` is 1, so Keras neither divides the
loss by the number of replicas nor averages their gradients (graphcore/tensorflow
``tensorflow/python/ipu/ipu_strategy.py``: ``_num_replicas_in_sync`` returns 1, ``_reduce_to`` SUM is
``cross_replica_sum``). With R replicas of batch b and k micro-batches each, the update is therefore

- SUM (the default): the sum of the R*k micro-batch gradients, R*k times the gradient of one batch
  of R*k*b: plain SGD with learning rate lr takes the CPU's step for batch R*k*b and rate R*k*lr;
- MEAN: each micro-batch gradient scaled by 1/k first, R times the gradient of batch R*k*b;
- RUNNING_MEAN: the same mean, kept as ``acc*n/(n+1) + grad/(n+1)`` for the n-th micro-batch
  (n from 0), which never holds a sum k times larger (it matters in float16).

Sources: graphcore/tensorflow ``tensorflow/python/ipu/gradient_accumulation.py`` (the enum and its
``parse``: an enum member or its name in any case), ``tensorflow/python/ipu/ops/op_util.py``
(``accumulate_gradients`` scales each gradient in float32 before adding it), ``pipelining_ops.py``
(``_acc_grad_scale``: the running mean's scales), graphcore/keras ``keras/ipu/extensions/extensions_base.py``
(``set_gradient_accumulation_options`` and ``set_pipelining_options`` both set the one reduction method).
"""

from enum import Enum

import numpy as np


class GradientAccumulationReductionMethod(Enum):
    """SUM, MEAN or RUNNING_MEAN of the micro-batch gradients of one replica (see the module)."""

    SUM = 0
    MEAN = 1
    RUNNING_MEAN = 2

    @classmethod
    def parse(cls, reduction_method):
        """An enum member, or its name as a string in any case ('sum', 'Mean', 'RUNNING_MEAN')."""
        if isinstance(reduction_method, cls):
            return reduction_method
        if isinstance(reduction_method, str) and reduction_method.upper() in cls.__members__:
            return cls[reduction_method.upper()]
        raise ValueError(
            f"gradient_accumulation_reduction_method={reduction_method!r}: cannot parse it as one of "
            f"GradientAccumulationReductionMethod. Valid values are: {', '.join(cls.__members__)} "
            "(as a string in any case, such as 'sum', or as "
            "ipu.optimizers.GradientAccumulationReductionMethod.SUM)"
        )


def accumulate(micro_batch_gradients, method: GradientAccumulationReductionMethod) -> list:
    """One replica's accumulated gradients: ``micro_batch_gradients`` holds one list of arrays per
    micro-batch, in the order they ran; the arithmetic is the IPU's, in the gradients' own type."""
    count = len(micro_batch_gradients)
    accumulators = None
    for n, gradients in enumerate(micro_batch_gradients):
        if method is GradientAccumulationReductionMethod.SUM:
            accum_scale, grad_scale = None, None
        elif method is GradientAccumulationReductionMethod.MEAN:
            accum_scale, grad_scale = None, np.float32(1) / np.float32(count)
        else:
            grad_scale = np.float32(1) / np.float32(n + 1)
            accum_scale = np.float32(n) * grad_scale
        scaled = gradients if grad_scale is None else [g * grad_scale for g in gradients]
        if accumulators is None:
            accumulators = scaled
        elif accum_scale is None:
            accumulators = [a + g for a, g in zip(accumulators, scaled)]
        else:
            accumulators = [a * accum_scale + g for a, g in zip(accumulators, scaled)]
    return accumulators


def cross_replica_sum(replica_gradients) -> list:
    """The gradient all-reduce: the replicas' gradients summed, tensor by tensor, in replica order."""
    total = replica_gradients[0]
    for gradients in replica_gradients[1:]:
        total = [t + g for t, g in zip(total, gradients)]
    return total
