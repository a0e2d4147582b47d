"""``torch.utils.data``: datasets and the DataLoader."""

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
