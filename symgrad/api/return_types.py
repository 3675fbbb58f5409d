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

__all__ = ["max", "min", "MinMax", "slogdet", "linalg_slogdet", "sort", "topk", "kthvalue",
           "median", "nanmedian", "histogram"]


def _pair(name: str, first: str, second: str, doc: str) -> type:
    """A two-field named result as PyTorch's structseq: a tuple with named fields, built
    from the two values or from one sequence, printed as PyTorch prints it."""
    def __new__(cls, a, b=None):
        if b is None:  # PyTorch's structseq also takes one sequence
            a, b = a
        return tuple.__new__(cls, (a, b))

    def __repr__(self) -> str:
        return f"torch.return_types.{name}(\n{first}={self[0]!r},\n{second}={self[1]!r})"

    def __reduce__(self):
        return type(self), (tuple(self),)
    return type(name, (tuple,), {
        "__slots__": (), "__module__": "torch.return_types", "__doc__": doc,
        "n_fields": 2, "n_sequence_fields": 2, "n_unnamed_fields": 0,
        "__new__": __new__, "__repr__": __repr__, "__reduce__": __reduce__,
        first: property(operator.itemgetter(0)), second: property(operator.itemgetter(1))})


max = _pair("max", "values", "indices",  # noqa: A001 - PyTorch's name
            "``torch.return_types.max(values=..., indices=...)``.")
min = _pair("min", "values", "indices",  # noqa: A001 - PyTorch's name
            "``torch.return_types.min(values=..., indices=...)``.")
slogdet = _pair("slogdet", "sign", "logabsdet",
                "``torch.return_types.slogdet(sign=..., logabsdet=...)``.")
linalg_slogdet = _pair("linalg_slogdet", "sign", "logabsdet",
                       "``torch.return_types.linalg_slogdet(sign=..., logabsdet=...)``.")


sort = _pair("sort", "values", "indices", "``torch.return_types.sort(values=..., indices=...)``.")
topk = _pair("topk", "values", "indices", "``torch.return_types.topk(values=..., indices=...)``.")
kthvalue = _pair("kthvalue", "values", "indices",
                 "``torch.return_types.kthvalue(values=..., indices=...)``.")
median = _pair("median", "values", "indices",
               "``torch.return_types.median(values=..., indices=...)``.")
nanmedian = _pair("nanmedian", "values", "indices",
                  "``torch.return_types.nanmedian(values=..., indices=...)``.")
histogram = _pair("histogram", "hist", "bin_edges",
                  "``torch.return_types.histogram(hist=..., bin_edges=...)``.")


def MinMax(values, indices, kind: str = "max"):  # noqa: N802
    """The named pair of ``max(dim)`` (``kind="max"``) or ``min(dim)``."""
    return (max if kind == "max" else min)(values, indices)
