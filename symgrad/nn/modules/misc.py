"""Shape and regularisation modules: ``nn.Flatten``, ``nn.Unflatten``, ``nn.Dropout``,
``nn.Dropout2d``;
``nn.DataParallel`` (one CPU: it runs its module)."""
from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["Flatten", "Unflatten", "Dropout", "Dropout2d", "DataParallel"]


class Flatten(Module):
    """Flattens dimensions ``start_dim`` to ``end_dim`` (by default all but the batch)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Splits dimension ``dim`` into ``unflattened_size``."""

    def __init__(self, dim: int, unflattened_size) -> None:
        super().__init__()
        self.dim, self.unflattened_size = dim, unflattened_size

    def forward(self, input):
        shape = list(input.shape)
        d = self.dim % len(shape)
        return input.view(*shape[:d], *self.unflattened_size, *shape[d + 1:])

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class Dropout(Module):
    """Zeroes elements with probability ``p`` while training (``model.train()``); the
    identity in ``model.eval()``."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout2d(Dropout):
    """Zeroes whole channels with probability ``p`` while training (``F.dropout2d``)."""

    def forward(self, input):
        return F.dropout2d(input, self.p, self.training, self.inplace)


class DataParallel(Module):
    """Runs ``module`` (PyTorch splits batches over GPUs; there is one CPU here)."""

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0):
        super().__init__()
        self.module, self.dim = module, dim
        self.device_ids = []

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)
