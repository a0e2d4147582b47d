"""Learning-rate schedulers (``torch.optim.lr_scheduler.StepLR``, ``ExponentialLR``): each ``step()`` sets every
group's ``lr`` from its initial one, as PyTorch's closed forms give.

Example:

>>> from ipu_teach import torch
>>> opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
>>> sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
>>> for _ in range(3):
...     opt.step(); sched.step()
>>> sched.get_last_lr()
[0.5]
"""


class LRScheduler:
    def __init__(self, optimizer, last_epoch=-1):
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            group.setdefault("initial_lr", group["lr"])
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self.step()

    def factor(self, epoch: int) -> float:
        raise NotImplementedError

    def step(self, epoch=None):
        self.last_epoch = self.last_epoch + 1 if epoch is None else epoch
        for group, base in zip(self.optimizer.param_groups, self.base_lrs):
            group["lr"] = base * self.factor(self.last_epoch)
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def get_last_lr(self):
        return list(self._last_lr)

    def state_dict(self):
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)


class StepLR(LRScheduler):
    """``lr = initial_lr * gamma ** (epoch // step_size)``."""

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def factor(self, epoch):
        return self.gamma ** (epoch // self.step_size)


class ExponentialLR(LRScheduler):
    """``lr = initial_lr * gamma ** epoch``."""

    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def factor(self, epoch):
        return self.gamma**epoch
