"""Methods Graphcore's port adds to ``keras.Model``: gradient accumulation and replication options.

They only record options; the IPU executor reads them when it compiles. Outside an IPU scope
they have no effect, as on the real system.
"""
from ..keras.models import Model
from . import pipelining
from .gradient_accumulation import GradientAccumulationReductionMethod
from .pipelining import model_options as _options


def set_gradient_accumulation_options(self, gradient_accumulation_steps_per_replica=None,
                                      gradient_accumulation_reduction_method="sum", **kwargs):
    """Accumulate the gradients of ``gradient_accumulation_steps_per_replica`` micro-batches before each
    weight update, reduced as Graphcore's Keras does: summed by default ('sum'), or 'mean' or
    'running_mean' (see ``ipu.gradient_accumulation``: k micro-batches of b with 'sum' step like one
    batch of k*b at k times the learning rate; with 'mean' like one batch of k*b)."""
    steps = gradient_accumulation_steps_per_replica
    if steps is not None and (isinstance(steps, bool) or not isinstance(steps, int) or steps < 1):
        raise ValueError(f"gradient_accumulation_steps_per_replica must be a positive integer, got {steps!r}")
    method = GradientAccumulationReductionMethod.parse(gradient_accumulation_reduction_method)
    _options(self).update(gradient_accumulation_steps_per_replica=steps,
                          gradient_accumulation_reduction_method=method, **kwargs)


def set_replication_options(self, replicated_metric_reduction_method="mean", **kwargs):
    """Metrics of the replicas are averaged; other replication options are recorded only."""
    _options(self).update(replicated_metric_reduction_method=replicated_metric_reduction_method, **kwargs)


def install():
    Model.set_gradient_accumulation_options = set_gradient_accumulation_options
    Model.set_replication_options = set_replication_options
    pipelining.install()
