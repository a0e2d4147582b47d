"""Datasets (``torch.utils.data``): ``Dataset``, ``TensorDataset``, ``Subset``, ``ConcatDataset``, ``random_split``.

Example:

>>> from ipu_teach import torch
>>> data = torch.utils.data.TensorDataset(torch.arange(10), torch.arange(10) * 2)
>>> train, test = torch.utils.data.random_split(data, [0.8, 0.2], generator=torch.Generator().manual_seed(0))
>>> len(train), len(test), data[3]
(8, 2, (tensor(3), tensor(6)))
"""

import bisect
import math

import numpy as np

from ...random import numpy_generator


class Dataset:
    """A map-style dataset: ``__getitem__(index)`` and ``__len__``."""

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A dataset read by iterating (``__iter__``)."""

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")


class TensorDataset(Dataset):
    """Samples are the rows of tensors that share their first dimension."""

    def __init__(self, *tensors):
        if any(len(t) != len(tensors[0]) for t in tensors):
            raise ValueError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return len(self.tensors[0])


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, in that order.

    Example:

    >>> from ipu_teach import torch
    >>> data = torch.utils.data.TensorDataset(torch.arange(10).float())
    >>> part = torch.utils.data.Subset(data, range(2, 5))
    >>> len(part), part[0][0].item()
    (3, 2.0)
    """

    def __init__(self, dataset, indices):
        self.dataset, self.indices = dataset, list(indices)

    def __getitem__(self, index):
        if isinstance(index, list):
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

    def __len__(self):
        return len(self.indices)


class ConcatDataset(Dataset):
    def __init__(self, datasets):
        self.datasets = list(datasets)
        self.cumulative_sizes = list(np.cumsum([len(d) for d in self.datasets]))

    def __len__(self):
        return int(self.cumulative_sizes[-1]) if self.cumulative_sizes else 0

    def __getitem__(self, index):
        if index < 0:
            index += len(self)
        which = bisect.bisect_right(self.cumulative_sizes, index)
        start = 0 if which == 0 else int(self.cumulative_sizes[which - 1])
        return self.datasets[which][index - start]


def random_split(dataset, lengths, generator=None):
    """Split ``dataset`` into non-overlapping random subsets of the given lengths (or fractions summing to 1,
    the remainder spread round-robin, as PyTorch does). The permutation is numpy's, seeded by ``generator``."""
    total = len(dataset)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        sizes = [int(math.floor(total * fraction)) for fraction in lengths]
        for i in range(total - sum(sizes)):
            sizes[i % len(sizes)] += 1
        lengths = sizes
    if sum(lengths) != total:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    order = numpy_generator(generator).permutation(total).tolist()
    offsets = np.cumsum([0, *lengths])
    return [Subset(dataset, order[offsets[i] : offsets[i + 1]]) for i in range(len(lengths))]
