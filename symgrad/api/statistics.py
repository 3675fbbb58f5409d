"""Tensor's statistics: ``median``/``nanmedian`` (with ``dim``: values and indices),
``quantile``/``nanquantile`` (PyTorch's composite: the ops it records), ``histc``,
``histogram``, ``bincount``, and the function ``bucketize``.

Examples
--------
>>> import symgrad as torch
>>> x = torch.tensor([[1., 5., 2.], [4., 3., 0.]], requires_grad=True)
>>> x.median(), x.median(1).indices
(tensor(2., grad_fn=<MedianBackward0>), tensor([2, 1]))
>>> x.quantile(0.5, dim=1)
tensor([2., 3.], grad_fn=<SqueezeBackward4>)
>>> torch.histc(x.detach(), bins=2, min=0, max=6)
tensor([3., 3.])
"""
from __future__ import annotations

import builtins
import numbers

import numpy as np

from .. import ops as O
from ..ops import dtypes as _dt
from .apply import apply
from .construct import tensor
from .core import Tensor
from .messages import _SCALAR_NAMES
from .return_types import histogram as HistogramResult
from .return_types import median as MedianResult
from .return_types import nanmedian as NanmedianResult
from .shapes import _wrap_dim

__all__ = ["bucketize"]

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _not_implemented_for(kernel: str, t: Tensor) -> NotImplementedError:
    return NotImplementedError(f'"{kernel}" not implemented for '
                               f"'{_SCALAR_NAMES[t.dtype.name]}'")


class _Statistics:
    """Tensor's statistics (attached by ``api.tensor``)."""

    # -- median ---------------------------------------------------------------------------
    def median(self, dim=None, keepdim=False):
        """The lower of the two middle values (``MedianBackward0``); along ``dim``, values
        and indices (``torch.return_types.median``, ``MedianBackward1``)."""
        return self._median(dim, keepdim, "median", O.MEDIAN, O.MEDIAN_DIM, O.MEDIAN_INDICES,
                            MedianResult)

    def nanmedian(self, dim=None, keepdim=False):
        """:meth:`median` of the values that are not NaN."""
        return self._median(dim, keepdim, "nanmedian", O.NANMEDIAN, O.NANMEDIAN_DIM,
                            O.NANMEDIAN_INDICES, NanmedianResult)

    def _median(self, dim, keepdim, name, full, along, pick, result):
        if self.dtype is _dt.bool:
            raise _not_implemented_for(f"{name}_cpu" if dim is None else f"{name}_out", self)
        if dim is None:
            return apply(full, (self,))
        d = _wrap_dim(dim, self.ndim)
        if self.ndim and not self.shape[d]:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
        attrs = (dim, builtins.bool(keepdim))
        return result(apply(along, (self,), attrs), apply(pick, (self,), attrs))

    # -- quantile -------------------------------------------------------------------------
    def quantile(self, q, dim=None, keepdim=False, *, interpolation="linear"):
        """The ``q``-th quantiles (all elements, or along ``dim``), interpolated between the
        two nearest values as ``interpolation`` says; recorded as PyTorch composes it (sort,
        view, gather, lerp, squeeze: ``SqueezeBackward4``)."""
        return _quantile(self, q, dim, keepdim, interpolation, False)

    def nanquantile(self, q, dim=None, keepdim=False, *, interpolation="linear"):
        """:meth:`quantile` of the values that are not NaN."""
        return _quantile(self, q, dim, keepdim, interpolation, True)

    # -- histograms -----------------------------------------------------------------------
    def histc(self, bins=100, min=0, max=0):  # noqa: A002 - PyTorch's names
        """Counts in ``bins`` bins of equal width between ``min`` and ``max`` (the data's
        own range when both are 0); values outside are left out.  No gradient."""
        if not self.dtype.is_floating_point:
            raise _not_implemented_for("histogram_cpu", self)
        if bins <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for "
                               "dimension 0")
        lo, hi = float(min), float(max)
        if lo == hi and self.numel():
            lo, hi = float(np.min(self._data)), float(np.max(self._data))
        if not (np.isfinite(lo) and np.isfinite(hi)):
            raise RuntimeError(f"torch.histc: range of [{_c_number(lo)}, {_c_number(hi)}] "
                               "is not finite")
        if lo > hi:
            raise RuntimeError("torch.histc: max must be larger than min")
        return apply(O.HISTC, (self,), (int(bins), float(min), float(max)))

    def histogram(self, bins=100, *, range=None, weight=None, density=False):  # noqa: A002
        """``(hist, bin_edges)`` (``torch.return_types.histogram``): ``bins`` bins of equal
        width over ``range`` (the data's own by default), or the given edges; ``weight``
        sums weights instead of counting, ``density`` divides by total and width.  One
        ``NotImplemented`` node for both when the input requires grad, as in PyTorch."""
        if not self.dtype.is_floating_point:
            raise _not_implemented_for("histogramdd", self)
        edges = None
        if isinstance(bins, Tensor):
            edges, bins = bins._data.astype(self._data.dtype), bins.numel() - 1
        elif bins <= 0:
            raise RuntimeError(f"torch.histogramdd(): bins must be > 0, but got {bins} for "
                               "dimension 0")
        if range is not None:
            lo, hi = (float(v) for v in range)
            if lo > hi:
                raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got "
                                   f"min {_c_number(lo)} max {_c_number(hi)} for dimension 0")
            range = (lo, hi)
        w = None if weight is None else np.asarray(weight._data)
        hist = apply(O.HISTOGRAM, (self,), (int(bins), range, edges, w, builtins.bool(density)))
        bin_edges = apply(O.HISTOGRAM_EDGES, (self,), (int(bins), range, edges))
        node = hist.grad_fn
        if node is not None:  # (one node, two outputs: see ops.statistics.HISTOGRAM)
            bin_edges.grad_fn, bin_edges._output_nr, bin_edges._multi_output = node, 0, True
        return HistogramResult(hist, bin_edges)

    def bincount(self, weights=None, minlength=0):
        """How many times each value ``0 .. max`` occurs (summed ``weights`` instead, a
        ``NotImplemented`` node when they require grad)."""
        if self.dtype.is_floating_point or self.dtype is _dt.bool:
            raise _not_implemented_for("bincount_cpu", self)
        if minlength < 0:
            raise RuntimeError("minlength should be >= 0")
        if self.ndim != 1 or (self.numel() and int(np.min(self._data)) < 0):
            raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
        if weights is None:
            return apply(O.BINCOUNT, (self,), (int(minlength),))
        if weights.ndim != 1 or weights.numel() != self.numel():
            raise RuntimeError("weights should be 1-d and have the same length as input")
        return apply(O.BINCOUNT_WEIGHTS, (self, weights), (int(minlength),))


def bucketize(input, boundaries: Tensor, *, out_int32: bool = False,
              right: bool = False) -> Tensor:
    """The index of the bucket of each value of ``input`` between the sorted 1-D
    ``boundaries`` (``right``: a value equal to a boundary goes to the bucket above)."""
    if not isinstance(input, Tensor):
        input = tensor(input)
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return apply(O.BUCKETIZE, (input, boundaries), (builtins.bool(out_int32),
                                                    builtins.bool(right)))


def _c_number(v: float) -> str:
    """A double as PyTorch's messages print it (C++ streams: ``1``, ``1.5``, ``inf``; the
    NaN of a reduction, x86's default NaN, ``-nan``)."""
    if np.isnan(v):
        return "-nan"
    return "%g" % v


def _quantile(self: Tensor, q, dim, keepdim, interpolation, ignore_nan):
    """PyTorch's quantile_compute, op for op (so the graph has PyTorch's nodes)."""
    if isinstance(q, numbers.Real) and not isinstance(q, Tensor):
        if not 0 <= q <= 1:
            raise RuntimeError(f"quantile() q must be in the range [0, 1] but got "
                               f"{_c_number(float(q))}")
        scalar_q = True
    elif isinstance(q, Tensor):
        scalar_q = False
    else:
        name = "nanquantile" if ignore_nan else "quantile"
        raise TypeError(
            f"{name}() received an invalid combination of arguments - got "
            f"({type(q).__name__}), but expected one of:\n"
            f' * (Tensor q, int dim = None, bool keepdim = False, *, str interpolation = '
            f'"linear")\n * (float q, int dim = None, bool keepdim = False, *, str '
            f'interpolation = "linear")\n')
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError("quantile() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    if not self.numel():
        raise RuntimeError("quantile() input tensor must be non-empty")
    if not scalar_q and q.ndim > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if self.dtype not in (_dt.float32, _dt.float64):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if scalar_q:
        q = tensor(float(q), dtype=self.dtype)
    if q.dtype is not self.dtype:
        raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
    if not np.all((q._data >= 0) & (q._data <= 1)):
        raise RuntimeError("quantile() q values must be in the range [0, 1]")
    wrapped = None if dim is None else _wrap_dim(dim, self.ndim)

    if wrapped is not None and self.ndim:
        out_shape = list(self.shape)
        if keepdim:
            out_shape[wrapped] = 1
        else:
            del out_shape[wrapped]
    else:
        out_shape = [1] * self.ndim if keepdim else []
    out_shape.insert(0, q.numel() if q.ndim else 1)

    if wrapped is None:
        sorted_ = self.flatten().sort().values
    elif wrapped == self.ndim - 1:
        sorted_ = self.sort().values
    else:
        sorted_ = self.unsqueeze(-1).transpose(wrapped, -1).sort().values
    sorted_ = sorted_.view(out_shape[1:] + [sorted_.shape[-1]])

    nan = sorted_ != sorted_
    if ignore_nan:
        ranks = q * ((~nan).sum(-1, True) - 1)
        ranks = ranks.masked_fill(ranks < 0, 0)
    else:
        last = sorted_.shape[-1] - 1
        scaled = apply(O.OPS["mul1"], (q,), (last,))
        any_nan = nan.any(-1, True)
        shape = np.broadcast_shapes(tuple(scaled.shape), tuple(any_nan.shape))
        ranks = scaled.expand(shape).masked_fill(any_nan.expand(shape), last)
    if interpolation in ("lower", "higher", "nearest"):
        ranks = getattr(ranks, {"lower": "floor", "higher": "ceil",
                                "nearest": "round"}[interpolation])()
    below = ranks._data.astype(np.int64)
    values = apply(O.GATHER, (sorted_,), (-1, below))
    if interpolation in ("linear", "midpoint"):
        weights = (tensor(np.full(ranks.shape, 0.5), dtype=ranks.dtype)
                   if interpolation == "midpoint" else ranks - tensor(below))
        above = np.ceil(ranks._data).astype(np.int64)
        values = apply(O.OPS["lerp1"], (values, apply(O.GATHER, (sorted_,), (-1, above)),
                                        weights))
    if not q.ndim:
        return apply(O.SQUEEZE_, (values,), (-1,))
    values = apply(O.UNSQUEEZE_, (values,), (0,))
    values = apply(O.TRANSPOSE_, (values,), (0, -1))
    return apply(O.SQUEEZE_, (values,), (-1,))
