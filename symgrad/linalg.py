"""``torch.linalg``: ``det``, ``slogdet``, ``inv``, ``solve``, ``norm``, ``vector_norm``,
``matrix_norm`` (Frobenius), ``cross`` and ``LinAlgError``.

Examples
--------
>>> import symgrad as torch
>>> A = torch.tensor([[2.0, 1.0], [1.0, 3.0]], requires_grad=True)
>>> torch.linalg.det(A)
tensor(5., grad_fn=<LinalgDetBackward0>)
>>> torch.linalg.solve(A, torch.tensor([1.0, 2.0]))
tensor([0.2000, 0.6000], grad_fn=<LinalgSolveExBackward0>)
"""
from __future__ import annotations

from . import ops as O
from .api.apply import apply
from .api.core import Tensor
from .api.linalg import LinAlgError, det, solve
from .api.linalg import linalg_cross as cross
from .api.linalg import linalg_slogdet as slogdet
from .api.linalg import inverse as inv

__all__ = ["det", "slogdet", "inv", "solve", "norm", "vector_norm", "matrix_norm", "cross",
           "LinAlgError"]


def vector_norm(x: Tensor, ord: float = 2, dim=None, keepdim: bool = False, *,
                dtype=None) -> Tensor:
    """The ``ord``-norm of the entries (along ``dim``), ``LinalgVectorNormBackward0``."""
    if dim is not None:
        dim = (dim,) if isinstance(dim, int) else tuple(dim)
    x = x if dtype is None else x.to(dtype)
    return apply(O.NORM, (x,), (float(ord), dim, keepdim))


def matrix_norm(A: Tensor, ord="fro", dim=(-2, -1), keepdim: bool = False) -> Tensor:
    """The Frobenius norm over two dims (the only ``ord`` symgrad has)."""
    if ord != "fro":
        raise NotImplementedError(f"linalg.matrix_norm: ord={ord!r} is not supported by "
                                  "symgrad (only 'fro')")
    if A.ndim < 2:
        raise RuntimeError(f"linalg.matrix_norm: The input tensor A must have at least 2 "
                           f"dimensions.")
    return apply(O.NORM, (A,), (2.0, tuple(d % A.ndim for d in dim), keepdim))


def norm(A: Tensor, ord=None, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """``ord=None``: the 2-norm of all entries (Frobenius for a matrix); ``"fro"``: the
    Frobenius norm; a number with a vector (or ``dim``): the vector norm."""
    if ord is None:
        return vector_norm(A, 2, dim, keepdim, dtype=dtype)
    if ord == "fro":
        return matrix_norm(A if dtype is None else A.to(dtype), "fro",
                           (-2, -1) if dim is None else dim, keepdim)
    if A.ndim == 1 or (dim is not None and (isinstance(dim, int) or len(dim) == 1)):
        return vector_norm(A, ord, dim, keepdim, dtype=dtype)
    raise NotImplementedError(f"linalg.norm: matrix norms other than 'fro' are not "
                              f"supported by symgrad (ord={ord!r})")
