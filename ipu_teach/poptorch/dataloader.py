"""``poptorch.DataLoader``: a ``torch.utils.data.DataLoader`` whose batches are the *combined* batch.

One model call takes ``batch_size x deviceIterations x replicationFactor x gradientAccumulation`` samples
(PopTorch's python/__init__.py: ``_combined_batch_size``), which the model splits into micro-batches of
``batch_size``. ``drop_last`` defaults to True, so every combined batch is full.

Example:

>>> from ipu_teach import poptorch, torch
>>> data = torch.utils.data.TensorDataset(torch.arange(100).float())
>>> loader = poptorch.DataLoader(poptorch.Options().deviceIterations(5), data, batch_size=4)
>>> loader.combinedBatchSize, len(loader), next(iter(loader))[0].shape
(20, 5, torch.Size([20]))
"""

from ..torch.utils import data
from .enums import DataLoaderMode
from .options import Options


class DataLoader(data.DataLoader):
    """A DataLoader whose batches are PopTorch's combined batch: ``batch_size`` times the iterations, replicas and
    accumulated micro-batches of ``options`` (``combinedBatchSize``), so that each batch is one model call's.

    Example:

    >>> from ipu_teach import poptorch, torch
    >>> opts = poptorch.Options().deviceIterations(5).replicationFactor(2)
    >>> loader = poptorch.DataLoader(opts, torch.utils.data.TensorDataset(torch.arange(100).float()), batch_size=4)
    >>> loader.combinedBatchSize, len(loader)
    (40, 2)
    """

    def __init__(
        self,
        options,
        dataset=None,
        batch_size=1,
        shuffle=None,
        num_workers=0,
        drop_last=True,
        persistent_workers=None,
        auto_distributed_partitioning=True,
        mode=DataLoaderMode.Sync,
        async_options=None,
        rebatched_worker_size=None,
        **kwargs,
    ):
        if not isinstance(options, Options):
            raise TypeError(
                f"poptorch.DataLoader: options must be a poptorch.Options, got {type(options).__name__}: PopTorch's "
                "DataLoader takes the options first, poptorch.DataLoader(options, dataset, batch_size=...)"
            )
        self.options = options
        self.batches_per_call = options.device_iterations * options.replication_factor
        self.batches_per_call *= options.Training.gradient_accumulation
        self.combinedBatchSize = batch_size * self.batches_per_call  # noqa: N815 (PopTorch's name)
        super().__init__(
            dataset, batch_size=self.combinedBatchSize, shuffle=bool(shuffle), drop_last=drop_last, **kwargs
        )
