"""PyTorch's optimizers (``torch.optim.SGD``, ``Adam``, ``AdamW``, ``RMSprop``), in numpy on each parameter.

Each ``step()`` applies PyTorch's documented update (torch/optim/sgd.py, adam.py, adamw.py, rmsprop.py, the
single-tensor implementations) to every parameter of every group that has a gradient, in the parameter's
dtype. ``param_groups`` hold the hyperparameters (a scheduler or a script changes ``lr`` there), ``state``
the per-parameter buffers, as in PyTorch.

Example:

>>> from ipu_teach import torch
>>> w = torch.nn.Parameter(torch.tensor([1.0, -1.0]))
>>> opt = torch.optim.SGD([w], lr=0.1, momentum=0.9)
>>> (w * w).sum().backward(); opt.step()
>>> w
Parameter containing:
tensor([ 0.8000, -0.8000], requires_grad=True)
"""

from __future__ import annotations

import math

import numpy as np

from ..tensor import Tensor


class Optimizer:
    defaults: dict

    def __init__(self, params, defaults):
        self.defaults = dict(defaults)
        self.state = {}
        self.param_groups = []
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, group):
        params = group["params"]
        params = [params] if isinstance(params, Tensor) else list(params)
        for p in params:
            if not isinstance(p, Tensor) or p.node is not None:
                raise TypeError(f"optimizer can only optimize Tensors that are leaves, but one of the params is {p!r}")
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append({**self.defaults, **group, "params": params})

    def zero_grad(self, set_to_none=True):
        for group in self.param_groups:
            for p in group["params"]:
                if set_to_none or p.grad is None:
                    p.grad = None
                else:
                    p.grad = np.zeros_like(p.array)

    def step(self, closure=None):
        loss = closure() if closure is not None else None
        for group in self.param_groups:
            for p in group["params"]:
                grad = Tensor.grad.fget(p)
                if grad is not None:
                    self._update(p.array, np.asarray(grad.array, p.array.dtype), self.state.setdefault(p, {}), group)
        return loss

    def _update(self, param, grad, state, group):
        raise NotImplementedError

    def state_dict(self):
        """The state and the groups, parameters by index (PyTorch's layout)."""
        index = {id(p): i for i, p in enumerate(p for g in self.param_groups for p in g["params"])}
        state = {index[id(p)]: {k: Tensor(np.array(v)) for k, v in s.items()} for p, s in self.state.items()}
        groups = [
            {**{k: v for k, v in g.items() if k != "params"}, "params": [index[id(p)] for p in g["params"]]}
            for g in self.param_groups
        ]
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        params = [p for g in self.param_groups for p in g["params"]]
        if len(state_dict["param_groups"]) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for group, saved in zip(self.param_groups, state_dict["param_groups"]):
            if len(saved["params"]) != len(group["params"]):
                raise ValueError(
                    "loaded state dict contains a parameter group that doesn't match the size of optimizer's group"
                )
            group.update({k: v for k, v in saved.items() if k != "params"})
        self.state = {
            params[int(i)]: {k: np.array(getattr(v, "array", v)) for k, v in s.items()}
            for i, s in state_dict["state"].items()
        }

    def __repr__(self):
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {k}: {v}" for k, v in sorted(group.items()) if k != "params"]
        return "\n".join(lines + [")"])


def _check(name, value, low=0.0):
    if value < low:
        raise ValueError(f"Invalid {name}: {value}")


class SGD(Optimizer):
    """``p -= lr * d``, d the gradient plus ``weight_decay * p``, through a momentum buffer when ``momentum``
    (``b = momentum * b + (1 - dampening) * d``, the first step ``b = d``; Nesterov: ``d + momentum * b``).

    Example:

    >>> from ipu_teach import torch
    >>> w = torch.nn.Parameter(torch.tensor([1.0]))
    >>> optimizer = torch.optim.SGD([w], lr=0.1)
    >>> (w * 3).sum().backward()                 # the gradient is 3
    >>> optimizer.step()
    >>> round(w.item(), 6)
    0.7
    """

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, maximize=False):
        for name, value in (("learning rate", lr), ("momentum value", momentum), ("weight_decay value", weight_decay)):
            _check(name, value)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(
            params,
            dict(
                lr=lr,
                momentum=momentum,
                dampening=dampening,
                weight_decay=weight_decay,
                nesterov=nesterov,
                maximize=maximize,
            ),
        )

    def _update(self, param, grad, state, group):
        d = -grad if group["maximize"] else grad
        if group["weight_decay"]:
            d = d + group["weight_decay"] * param
        momentum = group["momentum"]
        if momentum:
            buffer = state.get("momentum_buffer")
            if buffer is None:
                buffer = state["momentum_buffer"] = np.array(d, copy=True)
            else:
                buffer *= momentum
                buffer += (1 - group["dampening"]) * d
            d = d + momentum * buffer if group["nesterov"] else buffer
        param -= np.asarray(group["lr"] * d, param.dtype)


class Adam(Optimizer):
    """Adam (Kingma and Ba): moments of the gradient, bias-corrected; ``weight_decay`` adds ``wd * p`` to the
    gradient (L2), ``amsgrad`` divides by the largest second moment seen."""

    decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, maximize=False):
        _check("learning rate", lr)
        _check("epsilon value", eps)
        if not (0 <= betas[0] < 1 and 0 <= betas[1] < 1):
            raise ValueError(f"Invalid beta parameters: {betas}")
        super().__init__(
            params,
            dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize),
        )

    def _update(self, param, grad, state, group):
        beta1, beta2 = group["betas"]
        lr, eps, decay = group["lr"], group["eps"], group["weight_decay"]
        grad = -grad if group["maximize"] else grad
        if not state:
            state.update(step=0, exp_avg=np.zeros_like(param), exp_avg_sq=np.zeros_like(param))
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = np.zeros_like(param)
        state["step"] += 1
        step = state["step"]
        if decay and self.decoupled:
            param *= np.asarray(1 - lr * decay, param.dtype)
        elif decay:
            grad = grad + decay * param
        m, v = state["exp_avg"], state["exp_avg_sq"]
        m += (grad - m) * np.asarray(1 - beta1, m.dtype)  # torch's lerp_
        v *= beta2
        v += (1 - beta2) * grad * grad
        bias_correction1 = 1 - beta1**step
        bias_correction2_sqrt = math.sqrt(1 - beta2**step)
        second = v
        if group["amsgrad"]:
            np.maximum(state["max_exp_avg_sq"], v, out=state["max_exp_avg_sq"])
            second = state["max_exp_avg_sq"]
        denom = np.sqrt(second) / np.asarray(bias_correction2_sqrt, param.dtype) + np.asarray(eps, param.dtype)
        param -= np.asarray(lr / bias_correction1, param.dtype) * m / denom


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov and Hutter): ``p *= 1 - lr * weight_decay`` before the
    Adam step; default ``weight_decay=1e-2``."""

    decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, maximize=False):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize)


class RMSprop(Optimizer):
    """RMSprop: ``v = alpha * v + (1 - alpha) * g^2``, ``p -= lr * g / (sqrt(v) + eps)`` (centred: minus the
    squared mean gradient under the root; with momentum through a buffer)."""

    def __init__(
        self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False, maximize=False
    ):
        for name, value in (
            ("learning rate", lr),
            ("epsilon value", eps),
            ("momentum value", momentum),
            ("alpha value", alpha),
        ):
            _check(name, value)
        super().__init__(
            params,
            dict(
                lr=lr,
                alpha=alpha,
                eps=eps,
                weight_decay=weight_decay,
                momentum=momentum,
                centered=centered,
                maximize=maximize,
            ),
        )

    def _update(self, param, grad, state, group):
        alpha, eps, momentum = group["alpha"], group["eps"], group["momentum"]
        grad = -grad if group["maximize"] else grad
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * param
        if not state:
            state.update(step=0, square_avg=np.zeros_like(param))
            if momentum:
                state["momentum_buffer"] = np.zeros_like(param)
            if group["centered"]:
                state["grad_avg"] = np.zeros_like(param)
        state["step"] += 1
        v = state["square_avg"]
        v *= alpha
        v += (1 - alpha) * grad * grad
        if group["centered"]:
            g = state["grad_avg"]
            g += (grad - g) * np.asarray(1 - alpha, g.dtype)
            avg = np.sqrt(v - g * g) + np.asarray(eps, param.dtype)
        else:
            avg = np.sqrt(v) + np.asarray(eps, param.dtype)
        if momentum:
            buffer = state["momentum_buffer"]
            buffer *= momentum
            buffer += grad / avg
            param -= np.asarray(group["lr"], param.dtype) * buffer
        else:
            param -= np.asarray(group["lr"], param.dtype) * grad / avg
