"""``torch.utils.data``: datasets, samplers, collation and the ``DataLoader``.

Layer: above the tensor API (imports ``symgrad.api`` and ``symgrad.multiprocessing``),
below nothing; the symbolic layers, drawings and the CLI never import it.

Examples
--------
>>> import symgrad as torch
>>> from symgrad.utils.data import DataLoader, TensorDataset
>>> x = torch.tensor([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
>>> y = torch.tensor([0.0, 1.0, 1.0, 0.0])
>>> for xb, yb in DataLoader(TensorDataset(x, y), batch_size=3):
...     print(xb.shape, yb)
torch.Size([3, 2]) tensor([0., 1., 1.])
torch.Size([1, 2]) tensor([0.])
"""
from __future__ import annotations

from .collate import default_collate, default_convert
from .dataloader import DataLoader
from .dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset,
                      Subset, TensorDataset, random_split)
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler,
                      SubsetRandomSampler, WeightedRandomSampler)
from .worker import WorkerInfo, get_worker_info

__all__ = ["BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset",
           "IterableDataset", "RandomSampler", "Sampler", "SequentialSampler", "StackDataset",
           "Subset", "SubsetRandomSampler", "TensorDataset", "WeightedRandomSampler",
           "WorkerInfo", "default_collate", "default_convert", "get_worker_info",
           "random_split"]
