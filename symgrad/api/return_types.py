"""Named results of ``max(dim)`` and ``min(dim)``, as PyTorch's ``torch.return_types``.

Examples
--------
>>> import symgrad as torch
>>> r = torch.tensor([[1., 5.], [4., 2.]]).max(1)
>>> type(r)
<class 'torch.return_types.max'>
>>> r.indices
tensor([1, 0])
>>> values, indices = r
>>> values
tensor([5., 4.])
"""
from __future__ import annotations

import operator

__all__ = ["max", "min", "MinMax", "slogdet"]


class _ValuesIndices(tuple):
    """A ``(values, indices)`` pair; the class name is the function's, as in PyTorch."""

    __slots__ = ()
    __module__ = "torch.return_types"
    n_fields = n_sequence_fields = 2
    n_unnamed_fields = 0

    def __new__(cls, values, indices=None):
        if indices is None:  # PyTorch's structseq also takes one sequence
            values, indices = values
        return tuple.__new__(cls, (values, indices))

    values = property(operator.itemgetter(0))
    indices = property(operator.itemgetter(1))

    def __repr__(self) -> str:
        return (f"torch.return_types.{type(self).__name__}(\nvalues={self.values!r},\n"
                f"indices={self.indices!r})")

    def __reduce__(self):
        return type(self), (tuple(self),)


class max(_ValuesIndices):  # noqa: A001 - PyTorch's name
    """``torch.return_types.max(values=..., indices=...)``."""

    __slots__ = ()
    __module__ = "torch.return_types"


class min(_ValuesIndices):  # noqa: A001 - PyTorch's name
    """``torch.return_types.min(values=..., indices=...)``."""

    __slots__ = ()
    __module__ = "torch.return_types"


def MinMax(values, indices, kind: str = "max") -> _ValuesIndices:  # noqa: N802
    """The named pair of ``max(dim)`` (``kind="max"``) or ``min(dim)``."""
    return (max if kind == "max" else min)(values, indices)



class slogdet(tuple):  # noqa: N801 - PyTorch's name
    """``torch.return_types.slogdet(sign=..., logabsdet=...)``."""

    __slots__ = ()
    __module__ = "torch.return_types"
    n_fields = n_sequence_fields = 2
    n_unnamed_fields = 0

    def __new__(cls, sign, logabsdet=None):
        if logabsdet is None:
            sign, logabsdet = sign
        return tuple.__new__(cls, (sign, logabsdet))

    sign = property(operator.itemgetter(0))
    logabsdet = property(operator.itemgetter(1))

    def __repr__(self) -> str:
        return (f"torch.return_types.slogdet(\nsign={self.sign!r},\n"
                f"logabsdet={self.logabsdet!r})")
