"""Tensor's reductions: ``sum``, ``mean``, ``max``/``min`` (with ``dim``: values and
indices), ``argmax``, ``all``/``any``, ``norm``, ``softmax``/``log_softmax``.

Examples
--------
>>> import symgrad as torch
>>> x = torch.tensor([[1., 5.], [4., 2.]], requires_grad=True)
>>> x.sum(0), x.max(1).indices
(tensor([5., 7.], grad_fn=<SumBackward1>), tensor([1, 0]))
"""
from __future__ import annotations

import builtins
import warnings

import numpy as np

from .. import ops as O
from ..ir.node import GRAD_MODE
from .apply import apply
from .core import Tensor
from .messages import _SCALAR_NAMES, _all_any_error, _format_order
from .methods import maximum, minimum
from . import return_types
from .return_types import MinMax
from .shapes import _check_dims, _wrap_dim

__all__: list = []


def _aliases(dim, keepdim, axis, keepdims):
    """PyTorch's numpy-style aliases: ``axis`` for ``dim``, ``keepdims`` for ``keepdim``."""
    return (dim if axis is None else axis), (keepdim if keepdims is None else keepdims)


def _dim_tuple(dim, ndim: int) -> tuple:
    """``dim`` (an int or several) as PyTorch's dim list, each checked, none twice."""
    dims = (dim,) if isinstance(dim, (builtins.int, np.integer)) else tuple(dim)
    seen = set()
    for d in dims:
        w = _wrap_dim(d, ndim)
        if w in seen:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        seen.add(w)
    return dims


class _Reductions:
    """Tensor's reductions (attached by ``api.tensor``)."""

    # ``axis`` is PyTorch's numpy-style alias of ``dim`` (x.sum(axis=0)).
    def sum(self, dim=None, keepdim=False, *, dtype=None, axis=None, keepdims=None):
        dim, keepdim = _aliases(dim, keepdim, axis, keepdims)
        if dtype is not None and not dtype.is_floating_point and self.requires_grad \
                and GRAD_MODE.enabled:
            raise RuntimeError(f"Autograd not support dtype: {_SCALAR_NAMES[dtype.name]}")
        return self._reduce(O.SUM, O.SUM_DIM, dim, keepdim, dtype)

    def mean(self, dim=None, keepdim=False, *, dtype=None, axis=None, keepdims=None):
        dim, keepdim = _aliases(dim, keepdim, axis, keepdims)
        d = self._dtype if dtype is None else dtype
        if not d.is_floating_point:
            raise RuntimeError(
                "mean(): could not infer output dtype. "
                f"{'Input' if dtype is None else 'Optional'} dtype must be either a "
                f"floating point or complex dtype. Got: {_SCALAR_NAMES[d.name]}")
        return self._reduce(O.MEAN, O.MEAN_DIM, dim, keepdim, dtype)

    def _reduce(self, full, along, dim, keepdim, dtype):
        """sum/mean: over everything (``full``) or along dims (``along``), in ``dtype``."""
        if dim is not None:
            # PyTorch takes dims as a list: sum(0) saves (0,)
            dim = (dim,) if isinstance(dim, int) else tuple(dim)
            seen = set()
            for d in dim:
                w = _wrap_dim(d, self.ndim)
                if w in seen:
                    raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
                seen.add(w)
        cast = dtype is not None and dtype is not self._dtype
        if dim is None and not keepdim:
            return apply(O.OPS[full.key + "_dtype"], (self,), (dtype,)) if cast else \
                apply(full, (self,))
        if cast:
            return apply(O.OPS[along.key + "_dtype"], (self,), (dim, keepdim, dtype))
        return apply(along, (self,), (dim, keepdim))

    def _extreme(self, full, along, pick, dim, keepdim):
        if isinstance(dim, Tensor):
            return (maximum if full is O.MAX else minimum)(self, dim)
        if dim is None:
            if self.numel() == 0:
                raise RuntimeError(f"{full.name}(): Expected reduction dim to be specified "
                                   "for input.numel() == 0. Specify the reduction dim with "
                                   "the 'dim' argument.")
            return apply(full, (self,))
        d = _wrap_dim(dim, self.ndim)  # checked; the op keeps dim as given, as PyTorch does
        if self.ndim and not self._data.shape[d]:
            raise IndexError(f"{full.name}(): Expected reduction dim {d} to have non-zero size.")
        values = apply(along, (self,), (dim, keepdim))
        indices = apply(pick, (self,), (dim, keepdim))
        return MinMax(values, indices, full.name)

    def max(self, dim=None, keepdim=False, *, axis=None):
        dim = dim if axis is None else axis
        return self._extreme(O.MAX, O.MAX_DIM, O.OPS["max_indices"], dim, keepdim)

    def min(self, dim=None, keepdim=False, *, axis=None):
        dim = dim if axis is None else axis
        return self._extreme(O.MIN, O.MIN_DIM, O.OPS["min_indices"], dim, keepdim)

    # -- sorting ----------------------------------------------------------------------
    def sort(self, dim=-1, descending=False, *, stable=None):
        """Values and indices sorted along ``dim`` (``torch.return_types.sort``); with
        ``stable`` given, PyTorch's ``sort.stable`` overload (``SortBackward1``)."""
        _wrap_dim(dim, self.ndim)
        descending = builtins.bool(descending)
        if stable is None:
            values = apply(O.SORT, (self,), (dim, descending))
        else:
            values = apply(O.SORT_STABLE, (self,), (builtins.bool(stable), dim, descending))
        indices = apply(O.ARGSORT, (self,), (True, dim, descending))
        return return_types.sort(values, indices)

    def msort(self):
        """``sort(self, 0).values``."""
        return self.sort(0).values

    def argsort(self, dim=-1, descending=False, *, stable=False):
        """The indices of :meth:`sort` (ties in their order)."""
        _wrap_dim(dim, self.ndim)
        return apply(O.ARGSORT, (self,), (builtins.bool(stable), dim, builtins.bool(descending)))

    def topk(self, k, dim=-1, largest=True, sorted=True):
        """The ``k`` largest (``largest=False``: smallest) values along ``dim`` and their
        indices (``torch.return_types.topk``)."""
        d = _wrap_dim(dim, self.ndim)
        size = self._data.shape[d] if self.ndim else 1
        if not 0 <= k <= size:
            raise RuntimeError("selected index k out of range")
        attrs = (k, dim, builtins.bool(largest), builtins.bool(sorted))
        return return_types.topk(apply(O.TOPK, (self,), attrs),
                                 apply(O.TOPK_INDICES, (self,), attrs))

    def kthvalue(self, k, dim=-1, keepdim=False):
        """The ``k``-th smallest value along ``dim`` and its index
        (``torch.return_types.kthvalue``)."""
        d = _wrap_dim(dim, self.ndim)
        size = self._data.shape[d] if self.ndim else 1
        if not 1 <= k <= size:
            raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
        attrs = (k, dim, builtins.bool(keepdim))
        return return_types.kthvalue(apply(O.KTHVALUE, (self,), attrs),
                                     apply(O.KTHVALUE_INDICES, (self,), attrs))

    def argmax(self, dim=None, keepdim=False, *, axis=None):
        dim = dim if axis is None else axis
        if dim is not None:
            _wrap_dim(dim, self.ndim)
        if dim is None:
            if not self._data.size:
                raise IndexError("argmax(): Expected reduction dim to be specified for "
                                 "input.numel() == 0.")
            return apply(O.OPS["argmax"], (self.reshape(-1),), (0, False))
        return apply(O.OPS["argmax"], (self,), (dim, keepdim))

    def argmin(self, dim=None, keepdim=False, *, axis=None):
        dim = dim if axis is None else axis
        if dim is not None:
            _wrap_dim(dim, self.ndim)
        if dim is None:
            if not self._data.size:
                raise IndexError("argmin(): Expected reduction dim to be specified for "
                                 "input.numel() == 0.")
            return apply(O.OPS["argmin"], (self.reshape(-1),), (0, False))
        return apply(O.OPS["argmin"], (self,), (dim, keepdim))

    def all(self, *args, **kwargs):
        """Whether all elements (along ``dim``, if given) are true; ``keepdim`` as in sum."""
        return self._all_any("all", args, kwargs)

    def any(self, *args, **kwargs):
        """Whether any element (along ``dim``, if given) is true; ``keepdim`` as in sum."""
        return self._all_any("any", args, kwargs)

    def _all_any(self, name, args, kwargs):
        if len(args) > 2 or builtins.any(k not in ("dim", "keepdim") for k in kwargs):
            raise _all_any_error(name, args, kwargs)
        dim = args[0] if args else kwargs.get("dim")
        keepdim = args[1] if len(args) > 1 else kwargs.get("keepdim", False)
        is_int = isinstance(dim, (builtins.int, np.integer)) and not isinstance(
            dim, builtins.bool)
        if not (dim is None or is_int or (isinstance(dim, (tuple, list)) and builtins.all(
                isinstance(d, (builtins.int, np.integer)) for d in dim))) or not isinstance(
                    keepdim, builtins.bool):
            raise _all_any_error(name, args, kwargs)
        dims = (dim,) if is_int else dim
        if dims is not None:
            n = builtins.max(self.ndim, 1)
            seen = set()
            for d in dims:
                w = _wrap_dim(d, self.ndim)
                if w in seen:
                    raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
                seen.add(w)
            dims = tuple(d % n for d in dims) if self.ndim else None
        return apply(O.OPS[name], (self,), (dims, keepdim))

    # -- statistics -------------------------------------------------------------------
    def prod(self, dim=None, keepdim=False, *, dtype=None, keepdims=None):
        dim, keepdim = _aliases(dim, keepdim, None, keepdims)
        x = self if dtype is None else self.to(dtype)
        if dim is None:
            return apply(O.PROD, (x,))
        _wrap_dim(dim, self.ndim)
        return apply(O.PROD_DIM, (x,), (dim, keepdim))

    def var(self, dim=None, unbiased=None, keepdim=False, *, correction=None, keepdims=None):
        return self._moment(O.VAR, dim, unbiased, keepdim, correction, keepdims)

    def std(self, dim=None, unbiased=None, keepdim=False, *, correction=None, keepdims=None):
        return self._moment(O.STD, dim, unbiased, keepdim, correction, keepdims)

    def _moment(self, op, dim, unbiased, keepdim, correction, keepdims):
        dim, keepdim = _aliases(dim, keepdim, None, keepdims)
        if not self._dtype.is_floating_point:
            raise RuntimeError("std and var only support floating point and complex dtypes")
        if isinstance(dim, builtins.bool):  # x.var(False): the legacy ``unbiased``
            dim, unbiased = None, dim
        if correction is None and unbiased is not None:
            correction = 1 if unbiased else 0
        if dim is not None:
            dim = _dim_tuple(dim, self.ndim)
            if correction is None:
                correction = 1
        axes = range(self.ndim) if not dim else [d % builtins.max(self.ndim, 1) for d in dim]
        # (PyTorch's reduction factor is numel / output numel: 0 for an empty input)
        n = int(np.prod([self._data.shape[d] for d in axes])) if self._data.size else 0
        if n - (1 if correction is None else correction) <= 0:
            warnings.warn(f"{op.name}(): degrees of freedom is <= 0. Correction should be "
                          "strictly less than the reduction factor (input numel divided by "
                          "output numel). (Triggered internally at /__w/pytorch/pytorch/aten/"
                          "src/ATen/native/ReduceOps.cpp:1861.)", UserWarning, stacklevel=3)
        return apply(op, (self,), (dim, correction, keepdim))

    def logsumexp(self, dim, keepdim=False, *, keepdims=None):
        dim, keepdim = _aliases(dim, keepdim, None, keepdims)
        return apply(O.LOGSUMEXP, (self,), (_dim_tuple(dim, self.ndim), keepdim))

    def amax(self, dim=(), keepdim=False, *, keepdims=None):
        dim, keepdim = _aliases(dim, keepdim, None, keepdims)
        return apply(O.AMAX, (self,), (_dim_tuple(dim, self.ndim), keepdim))

    def amin(self, dim=(), keepdim=False, *, keepdims=None):
        dim, keepdim = _aliases(dim, keepdim, None, keepdims)
        return apply(O.AMIN, (self,), (_dim_tuple(dim, self.ndim), keepdim))

    def cumsum(self, dim, *, dtype=None):
        x = self if dtype is None else self.to(dtype)
        _wrap_dim(dim, self.ndim)
        return apply(O.CUMSUM, (x,), (dim,))

    def cumprod(self, dim, *, dtype=None):
        x = self if dtype is None else self.to(dtype)
        _wrap_dim(dim, self.ndim)
        return apply(O.CUMPROD, (x,), (dim,))

    def flip(self, *dims):
        dims = tuple(dims[0]) if len(dims) == 1 and isinstance(dims[0], (tuple, list)) \
            else dims
        _dim_tuple(dims, self.ndim)
        return apply(O.FLIP, (self,), (dims,))

    def norm(self, p="fro", dim=None, keepdim=False, dtype=None):
        """PyTorch's ``Tensor.norm``: a vector norm (``LinalgVectorNormBackward0``) of all
        elements or along ``dim``; ``"fro"`` is the 2-norm."""
        if isinstance(p, str):
            if not (p == "fro" and (dim is None or isinstance(dim, builtins.int)
                                    or len(dim) <= 2)):
                if p not in ("fro", "nuc"):
                    raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
                if self.ndim < 2:
                    raise RuntimeError("linalg.matrix_norm: The input tensor A must have at "
                                       "least 2 dimensions.")
                if dim is not None and not isinstance(dim, builtins.int) and len(dim) != 2:
                    raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                                       f"{' '.join(str(d) for d in dim)}")
                raise NotImplementedError("symgrad has no nuclear norm (it needs an SVD)")
            ord = 2
        else:
            ord = 2 if p is None else p
        if not self._dtype.is_floating_point:
            raise RuntimeError("linalg.vector_norm: Expected a floating point or complex "
                               f"tensor as input. Got {_SCALAR_NAMES[self._dtype.name]}")
        t = self if dtype is None else self.to(dtype)
        if dim is not None:
            dim = (dim,) if isinstance(dim, builtins.int) else tuple(dim)
            _check_dims(dim, t.ndim)
        if ord in (float("inf"), -float("inf")) and not t._data.size:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {_format_order(ord)} "
                               "norm on an empty tensor because the operation does not have "
                               "an identity")
        return apply(O.NORM, (t,), (ord, dim, keepdim))

    def softmax(self, dim=None, dtype=None, *, axis=None):
        return self._softmax(O.SOFTMAX, dim if axis is None else axis, dtype)

    def log_softmax(self, dim=None, dtype=None, *, axis=None):
        return self._softmax(O.LOG_SOFTMAX, dim if axis is None else axis, dtype)

    def _softmax(self, op, dim, dtype):
        if dim is None:
            raise TypeError(f'{op.name.strip("_")}() missing 1 required positional arguments: '
                            '"dim"')
        d = _wrap_dim(dim, self.ndim)
        t = self if dtype is None else self.to(dtype)  # PyTorch casts first: ToCopyBackward0
        if not t._dtype.is_floating_point:
            last = "_lastdim" if d == builtins.max(t.ndim, 1) - 1 else ""
            raise NotImplementedError(f'"{op.name.strip("_")}{last}_kernel_impl" not '
                                      f"implemented for '{_SCALAR_NAMES[t._dtype.name]}'")
        return apply(op, (t,), (dim,))

