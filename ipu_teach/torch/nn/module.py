"""``nn.Module``: parameters, buffers and sub-modules registered by attribute assignment, as PyTorch does.

Calling a module runs its ``forward`` inside ``autograd.scope(<its qualified name>)``, so the ops it applies
are named after it on the simulated IPU (a profile's layers are the model's modules, as PopTorch names
them after the PyTorch module hierarchy).

Example:

>>> from ipu_teach import torch
>>> net = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU())
>>> [name for name, _ in net.named_parameters()]
['0.weight', '0.bias']
>>> sorted(net.state_dict())
['0.bias', '0.weight']
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from ...autograd import scope
from ..dtype import dtype as torch_dtype
from ..dtype import to_numpy
from ..tensor import Tensor
from .parameter import Parameter


class Module:
    """The base class of every layer and model (``torch.nn.Module``)."""

    training: bool

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError(f"Module.__init__() takes no arguments, got {args or kwargs}")
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent", set())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "_scope_name", "")
        object.__setattr__(self, "_forward_pre_hooks", OrderedDict())

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    def __call__(self, *args, **kwargs):
        for hook in list(self.__dict__.get("_forward_pre_hooks", {}).values()):
            changed = hook(self, args)
            if changed is not None:  # PyTorch: a hook may replace the positional inputs
                args = changed if isinstance(changed, tuple) else (changed,)
        with scope(self._scope_name or type(self).__name__):
            return self.forward(*args, **kwargs)

    def register_forward_pre_hook(self, hook) -> RemovableHandle:
        """Call ``hook(module, args)`` before each ``forward`` (PopTorch's ``BeginBlock`` is one); returns a handle
        whose ``remove()`` unregisters it."""
        hooks = self.__dict__.setdefault("_forward_pre_hooks", OrderedDict())
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        return handle

    # ---- registration -------------------------------------------------------------------------------------
    def _registry(self):
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign before Module.__init__() call: call super().__init__() first")
        return self._parameters, self._buffers, self._modules

    def __setattr__(self, name, value):
        if isinstance(value, (Parameter, Module)) or name in self.__dict__.get("_parameters", ()):
            parameters, buffers, modules = self._registry()
            for registry in (parameters, buffers, modules):
                registry.pop(name, None)
            self.__dict__.pop(name, None)
            if isinstance(value, Module):
                modules[name] = value
            else:
                if value is not None and not isinstance(value, Parameter):
                    raise TypeError(
                        f"cannot assign '{type(value).__name__}' as parameter '{name}' (torch.nn.Parameter or None "
                        "expected)"
                    )
                parameters[name] = value
        elif name in self.__dict__.get("_buffers", ()):
            self._buffers[name] = value
        elif name in self.__dict__.get("_modules", ()):
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as child module '{name}'")
            self._modules[name] = None
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        for registry in ("_parameters", "_buffers", "_modules"):
            found = self.__dict__.get(registry, {})
            if name in found:
                return found[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for registry in (self._parameters, self._buffers, self._modules):
            if name in registry:
                del registry[name]
                return
        object.__delattr__(self, name)

    def register_parameter(self, name, param):
        self.__setattr__(name, param)

    def register_buffer(self, name, tensor, persistent=True):
        parameters, buffers, modules = self._registry()
        if name in parameters or name in modules:
            raise KeyError(f"attribute '{name}' already exists")
        self.__dict__.pop(name, None)
        buffers[name] = tensor
        if not persistent:
            self._non_persistent.add(name)

    def add_module(self, name, module):
        self._registry()[2][name] = module

    register_module = add_module

    # ---- traversal ----------------------------------------------------------------------------------------
    def named_modules(self, memo=None, prefix=""):
        memo = set() if memo is None else memo
        if id(self) in memo:
            return
        memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is not None:
                yield from module.named_modules(memo, f"{prefix}.{name}" if prefix else name)

    def modules(self):
        return (module for _, module in self.named_modules())

    def named_children(self):
        return ((name, module) for name, module in self._modules.items() if module is not None)

    def children(self):
        return (module for _, module in self.named_children())

    def _named_members(self, registry, prefix, recurse):
        seen = set()
        modules = self.named_modules(prefix=prefix) if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for name, value in getattr(module, registry).items():
                if value is None or id(value) in seen:
                    continue
                seen.add(id(value))
                yield (f"{module_prefix}.{name}" if module_prefix else name), value

    def named_parameters(self, prefix="", recurse=True):
        return self._named_members("_parameters", prefix, recurse)

    def parameters(self, recurse=True):
        return (p for _, p in self.named_parameters(recurse=recurse))

    def named_buffers(self, prefix="", recurse=True):
        return self._named_members("_buffers", prefix, recurse)

    def buffers(self, recurse=True):
        return (b for _, b in self.named_buffers(recurse=recurse))

    # ---- state --------------------------------------------------------------------------------------------
    def state_dict(self, destination=None, prefix="", keep_vars=False):
        """Every parameter and persistent buffer by qualified name (detached tensors sharing the values)."""
        out = OrderedDict() if destination is None else destination
        for name, value in self._parameters.items():
            if value is not None:
                out[prefix + name] = value if keep_vars else value.detach()
        for name, value in self._buffers.items():
            if value is not None and name not in self._non_persistent:
                out[prefix + name] = value if keep_vars else value.detach()
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(out, prefix + name + ".", keep_vars)
        return out

    def load_state_dict(self, state_dict, strict=True):
        """Copy ``state_dict``'s values into this module's parameters and buffers, in place (a wrapped PopTorch
        model sees them). With ``strict`` every key must match; shapes must match always; nothing is changed
        when anything does not."""
        own = self.state_dict(keep_vars=True)
        missing = [key for key in own if key not in state_dict]
        unexpected = [key for key in state_dict if key not in own]
        errors = []
        if strict:
            if unexpected:
                errors.append("Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected) + ". ")
            if missing:
                errors.append("Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ". ")
        for key, target in own.items():
            if key in state_dict:
                shape = tuple(np.shape(getattr(state_dict[key], "array", state_dict[key])))
                if shape != tuple(target.array.shape):
                    errors.append(
                        f"size mismatch for {key}: copying a param with shape {list(shape)} from checkpoint, the "
                        f"shape in current model is {list(target.array.shape)}."
                    )
        if errors:
            raise RuntimeError(
                f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                + "\n\t".join(e.strip() for e in errors)
            )
        for key, target in own.items():
            if key in state_dict:
                value = getattr(state_dict[key], "array", state_dict[key])
                np.copyto(target.array, np.asarray(value), casting="unsafe")
        return _IncompatibleKeys(missing, unexpected)

    # ---- modes and gradients ------------------------------------------------------------------------------
    def train(self, mode=True):
        for module in self.modules():
            object.__setattr__(module, "training", bool(mode))
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad = requires_grad
        return self

    def zero_grad(self, set_to_none=True):
        for p in self.parameters():
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad = np.zeros_like(p.array)

    def apply(self, function):
        for module in self.children():
            module.apply(function)
        function(self)
        return self

    def to(self, *args, **kwargs):
        """Devices are accepted and ignored (the simulator's weights live on the host); a float dtype converts
        every floating parameter and buffer in place."""
        target = kwargs.get("dtype", next((a for a in args if isinstance(a, (torch_dtype, type, np.dtype))), None))
        if target is not None:
            self._convert(target)
        return self

    def _convert(self, dtype):
        for module in self.modules():
            for registry in (module._parameters, module._buffers):
                for value in registry.values():
                    if value is not None and value.array.dtype.kind == "f":
                        value.array = value.array.astype(to_numpy(dtype))
                        value.grad = None

    def float(self):
        return self.to(np.float32)

    def double(self):
        return self.to(np.float64)

    def half(self):
        return self.to(np.float16)

    def cpu(self):
        return self

    def extra_repr(self) -> str:
        return ""

    def __repr__(self):
        lines = [f"({name}): " + _indent(repr(module)) for name, module in self.named_children()]
        head = f"{type(self).__name__}({self.extra_repr()}"
        if not lines:
            return head + ")"
        return head + "\n  " + "\n  ".join(lines) + "\n)"

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._buffers) | set(self._modules))


class RemovableHandle:
    """What ``register_forward_pre_hook`` returns (``torch.utils.hooks.RemovableHandle``)."""

    _next_id = 0

    def __init__(self, hooks: OrderedDict):
        self.hooks, self.id = hooks, RemovableHandle._next_id
        RemovableHandle._next_id += 1

    def remove(self) -> None:
        self.hooks.pop(self.id, None)


class _IncompatibleKeys(tuple):
    """What ``load_state_dict`` returns: ``(missing_keys, unexpected_keys)``."""

    def __new__(cls, missing, unexpected):
        return super().__new__(cls, (missing, unexpected))

    missing_keys = property(lambda self: self[0])
    unexpected_keys = property(lambda self: self[1])

    def __repr__(self):
        return "<All keys matched successfully>" if not any(self) else super().__repr__()


def _indent(text: str) -> str:
    return text.replace("\n", "\n  ")


def name_scopes(model: Module) -> None:
    """Name every module of ``model`` after its path in it (``layer1.conv``), the names its ops are recorded
    under on the simulated IPU."""
    for name, module in model.named_modules():
        object.__setattr__(module, "_scope_name", name or type(model).__name__)


__all__ = ["Module", "Tensor", "name_scopes"]
