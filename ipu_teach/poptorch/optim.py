"""``poptorch.optim``: PyTorch's optimizers with PopTorch's extra arguments (``loss_scaling``, ``accum_type``,
``velocity_scaling``...). Loss scaling multiplies the loss's gradient and divides the update by the same factor,
so in the simulator's float32 numerics it changes nothing; it is kept for ``setOptimizer`` and printing.

Example:

>>> from ipu_teach import poptorch, torch
>>> opt = poptorch.optim.SGD(torch.nn.Linear(2, 1).parameters(), lr=0.1, loss_scaling=128.0)
>>> opt.param_groups[0]["lr"], opt.loss_scaling
(0.1, 128.0)
"""

from ..torch import optim


def _poptorch(base):
    class Optimizer(base):
        def __init__(self, params, *args, loss_scaling=None, accum_type=None, velocity_accum_type=None,
                     first_order_momentum_accum_type=None, second_order_momentum_accum_type=None,
                     velocity_scaling=None, use_combined_accum=None, max_grad_norm=None, bias_correction=None,
                     **kwargs):  # fmt: skip
            super().__init__(params, *args, **kwargs)
            self.loss_scaling = 1.0 if loss_scaling is None else float(loss_scaling)
            self.accum_type = accum_type

    Optimizer.__name__ = Optimizer.__qualname__ = base.__name__
    Optimizer.__doc__ = f"PopTorch's {base.__name__}: ``torch.optim.{base.__name__}`` with ``loss_scaling``."
    return Optimizer


SGD = _poptorch(optim.SGD)
Adam = _poptorch(optim.Adam)
AdamW = _poptorch(optim.AdamW)
RMSprop = _poptorch(optim.RMSprop)
