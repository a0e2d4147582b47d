"""``torch.utils.data.DataLoader``: batches of a dataset, shuffled with a seedable generator, collated into tensors.

Samples are read in the calling process (``num_workers`` is accepted and ignored: the simulator has no worker
processes; a script's timing of data loading is not simulated here).

Example:

>>> from ipu_teach import torch
>>> data = torch.utils.data.TensorDataset(torch.arange(10).float(), torch.arange(10))
>>> loader = torch.utils.data.DataLoader(data, batch_size=4, drop_last=True)
>>> [tuple(x.shape) for x, _ in loader], len(loader)
([(4,), (4,)], 2)
"""

from collections.abc import Mapping, Sequence

import numpy as np

from ...random import numpy_generator
from ...tensor import Tensor, stack, tensor
from .dataset import IterableDataset


def default_collate(batch):
    """A list of samples as one batch: tensors and arrays stacked, numbers made a tensor, tuples and dicts
    collated field by field (PyTorch's ``default_collate``)."""
    first = batch[0]
    if isinstance(first, Tensor):
        if not any(t.requires_grad for t in batch):
            return Tensor(np.stack([t.array for t in batch]))
        return stack(batch)
    if isinstance(first, np.ndarray):
        return Tensor(np.stack(batch))
    if isinstance(first, (bool, int, float, np.number)):
        return tensor(batch, dtype=np.float64 if isinstance(first, float) else None)
    if isinstance(first, str):
        return list(batch)
    if isinstance(first, Mapping):
        return {key: default_collate([sample[key] for sample in batch]) for key in first}
    if isinstance(first, Sequence):
        if any(len(sample) != len(first) for sample in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        return (
            type(first)(default_collate(list(field)) for field in zip(*batch))
            if isinstance(first, tuple)
            else [default_collate(list(field)) for field in zip(*batch)]
        )
    raise TypeError(
        f"default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {type(first)}"
    )


class DataLoader:
    """Iterates over ``dataset`` in batches of ``batch_size`` (``shuffle``: a new order each epoch from
    ``generator``, else the default generator; ``drop_last``: drop an incomplete final batch).

    Example:

    >>> from ipu_teach import torch
    >>> data = torch.utils.data.TensorDataset(torch.arange(10).float())
    >>> loader = torch.utils.data.DataLoader(data, batch_size=4, drop_last=True)
    >>> len(loader), [batch[0].shape[0] for batch in loader]
    (2, [4, 4])
    """

    def __init__(
        self,
        dataset,
        batch_size=1,
        shuffle=False,
        sampler=None,
        batch_sampler=None,
        num_workers=0,
        collate_fn=None,
        pin_memory=False,
        drop_last=False,
        timeout=0,
        worker_init_fn=None,
        generator=None,
        prefetch_factor=None,
        persistent_workers=False,
        **kwargs,
    ):
        if batch_size is not None and (isinstance(batch_size, bool) or int(batch_size) < 1):
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if sampler is not None or batch_sampler is not None:
            raise NotImplementedError("DataLoader with a sampler or batch_sampler is not simulated by ipu-teach")
        if shuffle and isinstance(dataset, IterableDataset):
            raise ValueError(
                "DataLoader with IterableDataset: expected unspecified shuffle option, but got shuffle=True"
            )
        self.dataset, self.batch_size, self.shuffle, self.drop_last = dataset, batch_size, shuffle, drop_last
        self.num_workers, self.generator = num_workers, generator
        self.collate_fn = collate_fn or default_collate

    def _order(self):
        n = len(self.dataset)
        return numpy_generator(self.generator).permutation(n).tolist() if self.shuffle else range(n)

    def __iter__(self):
        if self.batch_size is None:
            yield from (self.dataset[i] for i in self._order())
            return
        samples = (
            iter(self.dataset)
            if isinstance(self.dataset, IterableDataset)
            else (self.dataset[i] for i in self._order())
        )
        batch = []
        for sample in samples:
            batch.append(sample)
            if len(batch) == self.batch_size:
                yield self.collate_fn(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.collate_fn(batch)

    def __len__(self):
        n = len(self.dataset)
        if self.batch_size is None:
            return n
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
