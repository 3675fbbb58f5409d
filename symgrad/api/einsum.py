"""``einsum``, ``tensordot`` and ``inner`` as compositions of other ops, as PyTorch runs
them: diagonals and permutations of each operand, sums over labels only one operand has,
and a contraction of two operands as one ``bmm`` between views (``tensordot``: one
``mm``).

Examples
--------
>>> import symgrad as torch
>>> a = torch.ones(2, 3, requires_grad=True)
>>> torch.einsum("ij->ji", a).grad_fn
<PermuteBackward0 object at ...>
"""
from __future__ import annotations

import math
import string
import warnings

import numpy as np

from .. import ops as O
from .apply import apply
from .core import Tensor
from .construct import tensor
from .linalg import bmm, linalg_cross, mm
from .return_types import _pair as _named_pair
from .shapes import _wrap_dim

__all__ = ["einsum", "tensordot", "inner", "addmv", "baddbmm", "dist", "logcumsumexp",
           "cummax", "cummin", "cross", "unique", "cdist"]


def _parse(equation: str, operands) -> tuple:
    """(labels of each operand, labels of the output), ``...`` spelled out."""
    equation = equation.replace(" ", "")
    lhs, arrow, rhs = equation.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the "
                           "equation" if len(terms) < len(operands) else
                           "einsum(): fewer operands were provided than specified in the "
                           "equation")
    spare = [c for c in string.ascii_uppercase + string.ascii_lowercase
             if c not in equation][::-1]
    ell = max((t.ndim - (len(term) - 3) for t, term in zip(operands, terms)
               if "..." in term), default=0)
    batch = "".join(spare.pop() for _ in range(ell))
    labels = []
    for t, term in zip(operands, terms):
        if "..." in term:
            n = t.ndim - (len(term) - 3)
            term = term.replace("...", batch[ell - n:])
        if len(term) != t.ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation "
                               f"({len(term)}) does not match the number of dimensions "
                               f"({t.ndim}) for operand {len(labels)}"
                               + ("" if "..." in lhs else " and no ellipsis was given"))
        labels.append(term)
    if arrow:
        out = rhs.replace("...", batch)
    else:
        counts = {c: sum(term.count(c) for term in labels) for c in "".join(labels)}
        out = batch + "".join(sorted(c for c, k in counts.items() if k == 1 and c not in batch))
    return labels, out


def _diagonals(t: Tensor, term: str) -> tuple:
    """``t`` with each repeated label taken once (its diagonal, last), and its labels."""
    while len(set(term)) != len(term):
        c = next(c for c in term if term.count(c) > 1)
        i = term.index(c)
        j = term.index(c, i + 1)
        t = t.diagonal(0, i, j)
        term = term[:i] + term[i + 1:j] + term[j + 1:] + c
    return t, term


def _sum_labels(t: Tensor, term: str, keep: set) -> tuple:
    drop = [k for k, c in enumerate(term) if c not in keep]
    if not drop:
        return t, term
    return t.sum(drop), "".join(c for c in term if c in keep)


def _pair(a: Tensor, ta: str, b: Tensor, tb: str, keep: set) -> tuple:
    """The contraction of two operands over the labels they share that ``keep`` lacks."""
    a, ta = _sum_labels(a, ta, keep | set(tb))
    b, tb = _sum_labels(b, tb, keep | set(ta))
    batch = [c for c in ta if c in tb and c in keep]
    summed = [c for c in ta if c in tb and c not in keep]
    left = [c for c in ta if c not in tb]
    right = [c for c in tb if c not in ta]
    size = {c: n for term, t in ((ta, a), (tb, b)) for c, n in zip(term, t.shape)}
    for c in batch:
        size[c] = max(a.shape[ta.index(c)], b.shape[tb.index(c)])
    if not summed:
        order = batch + left + right
        ea = a.permute(*[ta.index(c) for c in batch + left]).reshape(
            *[a.shape[ta.index(c)] for c in batch + left], *[1] * len(right))
        eb = b.permute(*[tb.index(c) for c in batch + right]).reshape(
            *[b.shape[tb.index(c)] for c in batch], *[1] * len(left),
            *[b.shape[tb.index(c)] for c in right])
        return ea * eb, "".join(order)
    n = {k: math.prod(size[c] for c in cs) for k, cs in
         (("b", batch), ("l", left), ("r", right), ("s", summed))}
    pa = a.permute(*[ta.index(c) for c in batch + left + summed])
    pb = b.permute(*[tb.index(c) for c in batch + summed + right])
    pa = pa.expand(*[size[c] for c in batch + left + summed]).reshape(n["b"], n["l"], n["s"])
    pb = pb.expand(*[size[c] for c in batch + summed + right]).reshape(n["b"], n["s"], n["r"])
    out = bmm(pa, pb).view(*[size[c] for c in batch + left + right])
    return out, "".join(batch + left + right)


def einsum(equation: str, *operands) -> Tensor:
    """Einstein summation over ``operands`` (a list of them is taken too)."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    labels, out = _parse(equation, operands)
    pieces = [_diagonals(t, term) for t, term in zip(operands, labels)]
    if len(pieces) == 1:
        t, term = _sum_labels(*pieces[0], set(out))
        if term == out and len(term) < len(pieces[0][1]):
            return t  # (a sum: SumBackward1, as PyTorch's)
    else:
        t, term = pieces[0]
        for k, (u, tu) in enumerate(pieces[1:], 1):
            later = set(out).union(*(set(p[1]) for p in pieces[k + 1:]))
            t, term = _pair(t, term, u, tu, later)
    if term == out and len(pieces) > 1:
        return t
    return t.permute(*[term.index(c) for c in out])


def tensordot(a: Tensor, b: Tensor, dims=2) -> Tensor:
    """Contract ``a``'s last and ``b``'s first ``dims`` dimensions (or the listed ones):
    one ``mm`` between permuted, flattened views, as PyTorch's."""
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        da, db = list(range(-dims, 0)), list(range(dims))
    else:
        da, db = ([d] if isinstance(d, int) else list(d) for d in dims)
    for x, y in zip(da, db):
        if a.shape[x] != b.shape[y]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{a.shape[x]} in dim {x} and second has size {b.shape[y]} "
                               f"in dim {y}")
    da = [d % max(a.ndim, 1) for d in da]
    db = [d % max(b.ndim, 1) for d in db]
    fa = [d for d in range(a.ndim) if d not in da]
    fb = [d for d in range(b.ndim) if d not in db]
    k = math.prod(a.shape[d] for d in da)
    ma = a.permute(*fa, *da).reshape(math.prod(a.shape[d] for d in fa), k)
    mb = b.permute(*db, *fb).reshape(k, math.prod(b.shape[d] for d in fb))
    return mm(ma, mb).view(*[a.shape[d] for d in fa], *[b.shape[d] for d in fb])


def inner(input: Tensor, other: Tensor) -> Tensor:
    """The sum of products over the last dimensions (``tensordot``; 0-d: a product)."""
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but "
                           f"got shapes {list(input.shape)} and {list(other.shape)}")
    return tensordot(input, other, ([-1], [-1]))


def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * (mat @ vec)`` (``AddmvBackward0``)."""
    if mat.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, {mat.ndim}, "
                           f"{vec.ndim}")
    if mat.shape[1] != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({mat.shape[0]}), mat "
                           f"({mat.shape[0]}x{mat.shape[1]}), vec ({vec.shape[0]})")
    return apply(O.ADDMV, (input, mat, vec), (beta, alpha))


def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * (batch1 @ batch2)`` batch by batch (``BaddbmmBackward0``)."""
    if batch1.ndim != 3 or batch2.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor" if batch1.ndim != 3 else
                           "batch2 must be a 3D tensor")
    if batch1.shape[2] != batch2.shape[1] or batch1.shape[0] != batch2.shape[0]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{batch1.shape[0]}, {batch1.shape[2]}] but got: "
                           f"[{batch2.shape[0]}, {batch2.shape[1]}].")
    return apply(O.BADDBMM, (input, batch1, batch2), (beta, alpha))


def dist(input: Tensor, other: Tensor, p=2) -> Tensor:
    """``||input - other||_p``, the operands broadcast (``DistBackward0``)."""
    return apply(O.DIST, (input, other), (p,))


def logcumsumexp(input: Tensor, dim: int) -> Tensor:
    """``log(cumsum(exp(input), dim))``, computed stably (``LogcumsumexpBackward0``)."""
    _wrap_dim(dim, input.ndim)
    return apply(O.LOGCUMSUMEXP, (input,), (dim,))


_CUMMAX = _named_pair("cummax", "values", "indices", "``torch.return_types.cummax``.")
_CUMMIN = _named_pair("cummin", "values", "indices", "``torch.return_types.cummin``.")


def _cumulative(input: Tensor, dim: int, kind: str):
    _wrap_dim(dim, input.ndim)
    op = O.CUMMAX if kind == "max" else O.CUMMIN
    values = apply(op, (input,), (dim,))
    indices = tensor(O.products.INDICES[kind](input._data, dim)[1])
    return (_CUMMAX if kind == "max" else _CUMMIN)(values, indices)


def cummax(input: Tensor, dim: int):
    """The running maximum along ``dim`` and its indices (``CummaxBackward0``)."""
    return _cumulative(input, dim, "max")


def cummin(input: Tensor, dim: int):
    """The running minimum along ``dim`` and its indices (``CumminBackward0``)."""
    return _cumulative(input, dim, "min")


def cross(input: Tensor, other: Tensor, dim=None) -> Tensor:
    """The vector product along ``dim`` (``LinalgCrossBackward0``): ``linalg.cross``;
    without ``dim``, the input's first dimension of length 3, with PyTorch's deprecation
    warning."""
    for k, (name, t) in enumerate((("input", input), ("other", other))):
        if not isinstance(t, Tensor):
            raise TypeError(f"cross(): argument '{name}' (position {k + 1}) must be Tensor, "
                            f"not {type(t).__name__}")
    if dim is None:
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\n"
                      "Please either pass the dim explicitly or simply use torch.linalg.cross."
                      "\nThe default value of dim will change to agree with that of "
                      "linalg.cross in a future release.", UserWarning, stacklevel=2)
        dim = next((d for d, n in enumerate(input.shape) if n == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    elif isinstance(dim, bool) or not isinstance(dim, (int, np.integer)):
        raise TypeError(f"cross(): argument 'dim' must be int, not {type(dim).__name__}")
    return linalg_cross(input, other, dim=dim)


def unique(input: Tensor, sorted=True, return_inverse=False, return_counts=False,
           dim=None):
    """The distinct values (or slices along ``dim``), sorted, with the inverse indices and
    the counts if asked (``Unique2Backward0``/``UniqueDimBackward0``: no derivative)."""
    data = np.asarray(input._data)
    if dim is None:
        values = apply(O.UNIQUE2, (input,), (sorted, return_inverse, return_counts))
        _, inverse, counts = np.unique(data, return_inverse=True, return_counts=True)
        inverse = inverse.reshape(data.shape)
    else:
        d = _wrap_dim(dim, input.ndim)
        values = apply(O.UNIQUE_DIM, (input,), (d, sorted, return_inverse, return_counts))
        _, inverse, counts = np.unique(data, axis=d, return_inverse=True, return_counts=True)
        inverse = inverse.reshape(-1)
    out = (values,) + ((tensor(inverse.astype(np.int64)),) if return_inverse else ()) + (
        (tensor(counts.astype(np.int64)),) if return_counts else ())
    return out[0] if len(out) == 1 else out


def cdist(x1: Tensor, x2: Tensor, p=2.0, compute_mode=None) -> Tensor:
    """The ``p``-norm distances between the rows of ``x1`` and those of ``x2``
    (``CdistBackward0``)."""
    if x1.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.ndim}D")
    if x2.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X2 got: {x2.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    return apply(O.CDIST, (x1, x2), (float(p),))


class _Products:
    """The Tensor methods of this module (attached by :mod:`symgrad.api.tensor`)."""

    def addmv(self, mat, vec, *, beta=1, alpha=1):
        return addmv(self, mat, vec, beta=beta, alpha=alpha)

    def baddbmm(self, batch1, batch2, *, beta=1, alpha=1):
        return baddbmm(self, batch1, batch2, beta=beta, alpha=alpha)

    def dist(self, other, p=2):
        return dist(self, other, p)

    def logcumsumexp(self, dim):
        return logcumsumexp(self, dim)

    def cummax(self, dim):
        return cummax(self, dim)

    def cummin(self, dim):
        return cummin(self, dim)

    def cross(self, other, dim=None):
        return cross(self, other, dim)

    def unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
        return unique(self, sorted, return_inverse, return_counts, dim)
