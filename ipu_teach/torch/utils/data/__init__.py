"""``torch.utils.data``: datasets and the DataLoader.

Example:

>>> from ipu_teach import torch
>>> data = torch.utils.data.TensorDataset(torch.arange(10).float(), torch.arange(10))
>>> [len(y) for _, y in torch.utils.data.DataLoader(data, batch_size=4)]
[4, 4, 2]
"""

from .dataloader import DataLoader, default_collate
from .dataset import ConcatDataset, Dataset, IterableDataset, Subset, TensorDataset, random_split

__all__ = [
    "ConcatDataset",
    "DataLoader",
    "Dataset",
    "IterableDataset",
    "Subset",
    "TensorDataset",
    "default_collate",
    "random_split",
]
