"""``nn.Sequential``, ``nn.ModuleList``, ``nn.ModuleDict``: modules holding modules.

Example:

>>> from ipu_teach import torch
>>> layers = torch.nn.ModuleList([torch.nn.Linear(2, 2) for _ in range(3)])
>>> len(layers), len(list(layers.parameters()))
(3, 6)
"""

from collections import OrderedDict

from .module import Module


class _ModuleSequence(Module):
    """Modules registered under their positions "0", "1"...: indexing, length, iteration, append."""

    def __getitem__(self, index):
        if isinstance(index, slice):
            return self._of(list(self._modules.items())[index])  # PyTorch keeps the names
        return list(self._modules.values())[index]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self


class Sequential(_ModuleSequence):
    """Calls its modules one after the other (given as arguments, or one OrderedDict naming them)."""

    def __init__(self, *modules):
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], OrderedDict):
            for name, module in modules[0].items():
                self.add_module(name, module)
        else:
            for module in modules:
                self.append(module)

    _of = staticmethod(lambda items: Sequential(OrderedDict(items)))

    def forward(self, input):  # noqa: A002
        for module in self._modules.values():
            input = module(input)
        return input


class ModuleList(_ModuleSequence):
    """A list of modules, registered (their parameters are the owner's); it has no forward."""

    def __init__(self, modules=None):
        super().__init__()
        for module in modules or ():
            self.append(module)

    _of = staticmethod(lambda items: ModuleList(module for _, module in items))

    def extend(self, modules):
        for module in modules:
            self.append(module)
        return self


class ModuleDict(Module):
    """A dict of modules, registered under their keys."""

    def __init__(self, modules=None):
        super().__init__()
        for name, module in dict(modules or {}).items():
            self.add_module(name, module)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def keys(self):
        return self._modules.keys()

    def values(self):
        return self._modules.values()

    def items(self):
        return self._modules.items()
