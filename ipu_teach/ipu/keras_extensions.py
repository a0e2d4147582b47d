"""Methods Graphcore's port adds to ``keras.Model``: gradient accumulation and replication options.

They only record options; the IPU executor reads them when it compiles. Outside an IPU scope
they have no effect, as on the real system.
"""
from ..keras.models import Model
from . import keyword_checks, pipelining
from .pipelining import model_options as _options

_ACCUMULATION_REDUCTIONS = ("mean", "sum", "running_mean")


def set_gradient_accumulation_options(self, gradient_accumulation_steps_per_replica=None,
                                      gradient_accumulation_reduction_method="mean", **kwargs):
    """Accumulate the gradients of ``gradient_accumulation_steps_per_replica`` micro-batches before each
    weight update. ipu-teach averages them ('mean'), so accumulating k batches of b trains exactly as
    one batch of k*b does."""
    keyword_checks.check("set_gradient_accumulation_options", kwargs, keyword_checks.GRADIENT_ACCUMULATION_KEYWORDS,
                         keyword_checks.GRADIENT_ACCUMULATION_RESERVED)
    steps = gradient_accumulation_steps_per_replica
    if steps is not None and (isinstance(steps, bool) or not isinstance(steps, int) or steps < 1):
        raise ValueError(f"gradient_accumulation_steps_per_replica must be a positive integer, got {steps!r}")
    method = str(getattr(gradient_accumulation_reduction_method, "name", gradient_accumulation_reduction_method)).lower()
    if method != "mean":
        raise ValueError(f"gradient_accumulation_reduction_method={method!r}: ipu-teach implements 'mean' only "
                         f"(choices on the real system: {', '.join(_ACCUMULATION_REDUCTIONS)})")
    _options(self).update(gradient_accumulation_steps_per_replica=steps, **kwargs)


def set_replication_options(self, replicated_metric_reduction_method="mean", **kwargs):
    """Metrics of the replicas are averaged; other replication options are recorded only."""
    _options(self).update(replicated_metric_reduction_method=replicated_metric_reduction_method, **kwargs)


def set_infeed_queue_options(self, **kwargs):
    """Options of the queue that streams batches to the IPU (``prefetch_depth``...): recorded only; the
    simulated host link's cost does not depend on them."""
    _options(self).update(infeed_queue_options=dict(kwargs))


def set_outfeed_queue_options(self, **kwargs):
    """Options of the queue that streams results back (``buffer_depth``...): recorded only."""
    _options(self).update(outfeed_queue_options=dict(kwargs))


def install():
    Model.set_gradient_accumulation_options = set_gradient_accumulation_options
    Model.set_replication_options = set_replication_options
    Model.set_infeed_queue_options = set_infeed_queue_options
    Model.set_outfeed_queue_options = set_outfeed_queue_options
    pipelining.install()
