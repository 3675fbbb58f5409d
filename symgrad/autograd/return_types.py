"""Named results of ``max(dim)`` and ``min(dim)``, printed as PyTorch prints them."""
from __future__ import annotations

from typing import NamedTuple

__all__ = ["MinMax"]


class _Pair(NamedTuple):
    values: object
    indices: object


class MinMax(_Pair):
    """``torch.return_types.max(values=..., indices=...)``."""

    def __new__(cls, values, indices, kind: str = "max"):
        self = super().__new__(cls, values, indices)
        self._kind = kind
        return self

    def __repr__(self) -> str:
        return (f"torch.return_types.{self._kind}(\nvalues={self.values!r},\n"
                f"indices={self.indices!r})")
