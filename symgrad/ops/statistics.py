"""Reductions and statistics beyond sum and mean: prod, var, std, logsumexp, amax, amin,
cumsum, cumprod (and flip, which the cumulative ops' gradients use); median and nanmedian
(with dim: values and indices), histc, histogram, bincount, bucketize (quantile is
PyTorch's composite of sort, gather and lerp: its front end, ``api.statistics``).

The gradients are PyTorch's formulas (``prod_backward``, ``var_backward``,
``std_backward``, ``logsumexp_backward``, ``scale_grad_by_count``, the reversed cumulative
sum): ``grad * (result / self)`` for a product without zeros, ``2/(N - correction) *
grad * (self - mean)`` for a variance, ``grad * exp(self - result)`` for logsumexp.
"""
from __future__ import annotations

import numpy as np

from . import dtype_rules as R
from .compare import EQ, NE
from .dtypes import float64 as _dt_float64
from .dtypes import int32, int64
from .elementwise import EXP, WHERE
from .indexing import MASKED_FILL_SCALAR
from .kernels import _dims, _sym_map, _sym_reduce, total
from . import shape_rules as W
from .record import Op, not_implemented
from .tables import WORK
from .indexing import SLICE
from .layers import CONSTANT_PAD_ND
from .shapes import SQUEEZE_DIM, TRANSPOSE
from .reductions import MEAN_DIM, _evenly, _keep, refuse_empty

__all__ = ["PROD", "PROD_DIM", "VAR", "STD", "LOGSUMEXP", "AMAX", "AMIN", "FLIP", "CUMSUM",
           "CUMPROD", "MEDIAN", "MEDIAN_DIM", "MEDIAN_INDICES", "NANMEDIAN", "NANMEDIAN_DIM",
           "NANMEDIAN_INDICES", "QUANTILE", "NANQUANTILE", "UNSQUEEZE_", "TRANSPOSE_", "HISTC",
           "HISTOGRAM", "HISTOGRAM_EDGES", "BINCOUNT", "BINCOUNT_WEIGHTS", "BUCKETIZE"]

# Drawings: an op's local derivative is its rule printed (symgrad.ops.formula); a
# ``local=`` below overrides it where the printed rule reads worse than the label:
# named quantities (mean, N - c, ∏) and words.


def _axes(dim, ndim: int) -> tuple:
    """The reduced axes: all of them for ``None`` or ``()`` (amax's "every dim")."""
    if dim is None or (isinstance(dim, (tuple, list)) and not dim):
        return tuple(range(ndim))
    return tuple(_dims(dim, ndim)) if ndim else ()


def _count(shape: tuple, dim) -> int:
    return int(np.prod([shape[d] for d in _axes(dim, len(shape))], dtype=np.int64))


def _restored(g, shape, dim, keepdim):
    """``g`` with the reduced axes back (for dim None or (): every axis)."""
    if keepdim or not shape:
        return g
    return _keep(g, shape, _axes(dim, len(shape)), False)


# -- products ---------------------------------------------------------------------------------
def _prod_grad(m, grad, self, result, dim=None, keepdim=False):
    # PyTorch's prod_backward: result / self without zeros; with a zero anywhere in the
    # tensor, the product of the other entries (prod_safe_zeros_backward), built from
    # differentiable ops (so second derivatives are PyTorch's too).
    shape = m.shape(self)
    if not shape:
        return grad
    if dim is not None:
        grad, result = (_restored(t, shape, (dim,), keepdim) for t in (grad, result))
    if not _has_zero(self):
        return grad * (result / self)
    if dim is None:
        if isinstance(self, np.ndarray) and int(np.sum(self == 0)) > 1:
            return np.zeros_like(self)  # (PyTorch's shortcut when no graph is recorded)
        flat = m.reshape(self, (-1,))
        return m.reshape(grad * _exclusive_products(m, flat, 0), shape)
    return grad * _exclusive_products(m, self, dim % len(shape))


def _exclusive_products(m, x, dim: int):
    """For each entry of ``x``, the product of the others along ``dim``: the products
    before it times those after it (cumprod of the entries shifted by a one)."""
    shape = m.shape(x)
    n = shape[dim]
    if n == 1:
        return m.new_zeros(x, shape) + 1.0
    pad = (0, 0) * (len(shape) - 1 - dim) + (1, 0)
    before = m.call(CUMPROD, m.call(CONSTANT_PAD_ND, m.call(SLICE, x, dim, 0, n - 1, 1),
                                    pad, 1.0), dim)
    rest = m.call(FLIP, m.call(SLICE, x, dim, 1, n, 1), (dim,))
    after = m.call(FLIP, m.call(CUMPROD, m.call(CONSTANT_PAD_ND, rest, pad, 1.0), dim), (dim,))
    return before * after


def _values(x) -> np.ndarray:
    """The numbers of a tensor or an array (the rules run on either)."""
    return np.asarray(getattr(x, "_data", x))


def _has_zero(self) -> bool:
    arr = _values(self)  # (SymPy entries, dtype object, are never known to be 0)
    return arr.dtype != object and bool(np.any(arr == 0))


def _constant(m, values: np.ndarray, like):
    """``values`` as a gradient term of ``like``'s kind and dtype, needing no gradient."""
    return m.new_zeros(like, values.shape) + values.astype(_values(like).dtype)


PROD = Op("prod", forward=lambda a: np.prod(a), dtype=R.sum_dtype, saves=("result", "self"),
          sym=lambda a: np.prod(np.asarray(a, dtype=object)),
          grads=(lambda m, grad, result, self: _prod_grad(m, grad, self, result),),
          local=("∏/{self}",), method="prod", function="prod", expr="prod")
PROD_DIM = Op("prod", 1, attrs=("dim", "keepdim"), dtype=R.sum_dtype,
              forward=lambda a, dim, keepdim: np.prod(a, axis=dim, keepdims=keepdim),
              sym=lambda a, dim, keepdim: np.prod(np.asarray(a, dtype=object), axis=dim,
                                                  keepdims=keepdim),
              saves=("dim", "keepdim", "result", "self"),
              grads=(lambda m, grad, dim, keepdim, result, self:
                     _prod_grad(m, grad, self, result, dim, keepdim),),
              local=("∏/{self}",), symbol="prod dim={dim}")


# -- variance and standard deviation ------------------------------------------------------
def _var(a, dim, correction, keepdim, wide: bool = False):
    # (float32 as PyTorch's CPU kernel: accumulated in float64, rounded once at the end, or
    # kept wide for std's square root; ``wide`` returns the float64 value)
    a = np.asarray(a)
    if a.dtype == np.float32:
        out = _var(a.astype(np.float64), dim, correction, keepdim)
        return out if wide else out.astype(np.float32)
    axes = _axes(dim, np.ndim(a))
    ddof = 1 if correction is None else correction
    a = np.asarray(a)
    if a.dtype == object:
        mean = np.sum(a, axis=axes, keepdims=True) / _count(a.shape, dim)
        return np.sum((a - mean) ** 2, axis=axes, keepdims=keepdim) / (
            _count(a.shape, dim) - ddof)
    with np.errstate(divide="ignore", invalid="ignore"):  # (N <= correction: inf or nan)
        mean = np.mean(a, axis=axes, keepdims=True) if a.size else np.zeros(())
        out = np.asarray(np.sum((a - mean) ** 2, axis=axes, keepdims=keepdim)
                         / np.float64(_count(a.shape, dim) - ddof)).astype(a.dtype)
    # of no elements: NaN, as PyTorch (its mean is NaN), not 0 / -correction
    return np.full_like(out, np.nan) if a.size == 0 else out


def _var_grad(m, grad, self, dim, correction, keepdim):
    shape = m.shape(self)
    n = _count(shape, dim) - (1 if correction is None else correction)
    g = _restored(grad, shape, dim, keepdim)
    mean = m.call(MEAN_DIM, self, _axes(dim, len(shape)), True) if shape else self
    scale = 2.0 / n if n else float("inf")  # (as PyTorch's double division: N = c gives inf)
    return m.mul_scalar(g, scale) * (self - mean)


VAR = Op("var", attrs=("dim", "correction", "keepdim"), dtype=R.floating, forward=_var,
         saves=("correction", "dim", "keepdim", "self"),
         grads=(lambda m, grad, correction, dim, keepdim, self:
                _var_grad(m, grad, self, dim, correction, keepdim),),
         local=("2({self} - mean)/(N - c)",), symbol="var", method="var", function="var",
         expr="var")


def _std(a, dim, correction, keepdim):
    v = _var(a, dim, correction, keepdim, wide=True)
    if np.asarray(v).dtype == object:
        return _sym_map("sqrt", v)
    kind = np.asarray(a).dtype
    return np.sqrt(v).astype(kind) if kind.kind == "f" else np.sqrt(v)


def _std_grad(m, grad, correction, dim, keepdim, result, self):
    half = m.call(MASKED_FILL_SCALAR, grad / m.mul_scalar(result, 2), m.call(EQ, result, 0), 0.0)
    return _var_grad(m, half, self, dim, correction, keepdim)


STD = Op("std", attrs=("dim", "correction", "keepdim"), dtype=R.floating, forward=_std,
         saves=("correction", "dim", "keepdim", "result", "self"), grads=(_std_grad,),
         local=("({self} - mean)/((N - c)·σ)",), symbol="std", method="std", function="std",
         expr="std")


# -- logsumexp, amax, amin ----------------------------------------------------------------
def _logsumexp(a, dim, keepdim):
    axes = _axes(dim, np.ndim(a))
    a = np.asarray(a)
    if a.dtype == object:
        return _sym_map("log", np.sum(_sym_map("exp", a), axis=axes, keepdims=keepdim))
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        top = np.max(a, axis=axes, keepdims=True) if a.size else np.zeros(())
        top = np.where(np.isfinite(top), top, 0)
        out = np.log(np.sum(np.exp(a - top), axis=axes, keepdims=True)) + top
    return out if keepdim else np.squeeze(out, axis=axes) if axes else out


LOGSUMEXP = Op("logsumexp", attrs=("dim", "keepdim"), dtype=R.floating, forward=_logsumexp,
               saves=("dim", "keepdim", "result", "self"),
               grads=(lambda m, grad, dim, keepdim, result, self:
                      _restored(grad, m.shape(self), dim, keepdim)
                      * m.call(EXP, self - _restored(result, m.shape(self), dim, keepdim)),),
               local=("softmax({self})",), symbol="logsumexp", method="logsumexp",
               function="logsumexp", expr="logsumexp", expr_args=(-1,))


def _extreme(kind: str) -> Op:
    np_fn = np.max if kind == "Max" else np.min

    def forward(a, dim, keepdim):
        refuse_empty("amax" if kind == "Max" else "amin", a, dim)
        axes = _axes(dim, np.ndim(a))
        if np.asarray(a).dtype == object:
            return _sym_reduce(kind, a, axes, keepdim)
        return np.asarray(np_fn(a, axis=axes, keepdims=keepdim))

    def grad(m, g, dim, keepdim, result, self):
        shape = m.shape(self)
        mask = m.call(EQ, self, _restored(result, shape, dim, keepdim))
        count = total(m, mask, _axes(dim, len(shape)), True)
        return (_restored(g, shape, dim, keepdim) / count) * mask

    name = "amax" if kind == "Max" else "amin"
    return Op(name, attrs=("dim", "keepdim"), forward=forward,
              saves=("dim", "keepdim", "result", "self"), grads=(grad,),
              local=(f"[{{self}} = {name[1:]}]/count",), symbol=name, method=name,
              function=name)


AMAX, AMIN = _extreme("Max"), _extreme("Min")


# -- flip and the cumulative ops ---------------------------------------------------------------
FLIP = Op("flip", attrs=("dims",), forward=lambda a, dims: np.flip(a, tuple(dims)),
          saves=("dims",),
          grads=(lambda m, grad, dims: m.call(FLIP, grad, dims),),
          local=("reversed",), symbol="flip", view=False, method="flip", function="flip")


def _reversed_cumsum(m, g, dim):
    return m.call(FLIP, m.call(CUMSUM, m.call(FLIP, g, (dim,)), dim), (dim,))


def _cumsum(a, dim):
    if not np.ndim(a):
        return np.asarray(a)
    out = np.cumsum(a, axis=dim)
    # PyTorch accumulates from +0.0: a leading -0.0 gives 0.0
    return out + 0.0 if out.dtype.kind == "f" else out


CUMSUM = Op("cumsum", attrs=("dim",),
            forward=lambda a, dim: _cumsum(a, dim),
            dtype=R.sum_dtype, saves=("dim",),
            grads=(lambda m, grad, dim: _reversed_cumsum(m, grad, dim) if m.shape(grad)
                   else grad,),
            local=("1 for later entries",), symbol="cumsum dim={dim}", method="cumsum",
            function="cumsum", expr="cumsum", expr_args=(-1,))


def _cumprod_grad(m, grad, dim, result, self):
    shape = m.shape(self)
    if not shape or shape[dim] == 1:  # (PyTorch's shortcut: the gradient as it comes)
        return grad
    if not _has_zero(self):
        return _reversed_cumsum(m, grad * result, dim) / self
    # Slices along dim with a zero: d result_j / d self_i = prod_{k <= j, k != i} self_k,
    # as numbers; the other slices keep the formula above (differentiable there).
    a = np.moveaxis(_values(self), dim, -1)
    g = np.moveaxis(_values(grad), dim, -1)
    out = np.zeros(np.broadcast_shapes(a.shape, g.shape), dtype=a.dtype)
    n = a.shape[-1]
    for i in range(n):
        for j in range(i, n):
            part = np.prod(np.delete(a[..., :j + 1], i, axis=-1), axis=-1)
            out[..., i] += g[..., j] * part
    zero = m.call(EQ, self, 0)
    in_zero_slice = m.new_zeros(self, m.shape(self)) + np.moveaxis(
        np.broadcast_to(np.any(a == 0, axis=-1, keepdims=True), a.shape), -1, dim)
    smooth = _reversed_cumsum(m, grad * result, dim) / m.call(WHERE, zero, 1.0, self)
    return m.call(WHERE, m.call(NE, in_zero_slice, 0),
                  _constant(m, np.moveaxis(out, -1, dim), self), smooth)


CUMPROD = Op("cumprod", attrs=("dim",),
             forward=lambda a, dim: np.cumprod(a, axis=dim) if np.ndim(a) else np.asarray(a),
             dtype=R.sum_dtype, saves=("dim", "result", "self"), grads=(_cumprod_grad,),
             local=("∏ of the others up to each later entry",), symbol="cumprod dim={dim}",
             method="cumprod", function="cumprod")


# -- median and nanmedian ------------------------------------------------------------------
def _nan_mask(a: np.ndarray) -> np.ndarray:
    return np.isnan(a) if a.dtype.kind == "f" else np.zeros(a.shape, dtype=bool)


def _median_all(a, ignore_nan: bool):
    """median() of every element: the lower of the two middle values; NaN if any is NaN
    (nanmedian: of the others, NaN if all are)."""
    flat = np.ravel(np.asarray(a))
    nan = _nan_mask(flat)
    if ignore_nan:
        flat = flat[~nan]
    elif nan.any():
        return np.asarray(np.nan, dtype=flat.dtype)
    if not flat.size:
        return np.asarray(np.nan, dtype=flat.dtype if flat.dtype.kind == "f" else np.float32)
    return np.asarray(np.sort(flat, kind="stable")[(flat.size - 1) // 2])


def _all_equivalent_nth(n: int) -> int:
    """Where libstdc++'s ``nth_element`` leaves position 0 of ``n`` elements none of which
    is less than another (nanmedian of an all-NaN row: PyTorch's index is that one)."""
    idx, first, last = list(range(n)), 0, n
    depth = 2 * (n.bit_length() - 1)
    while last - first > 3 and depth:
        depth -= 1
        mid = first + (last - first) // 2
        idx[first], idx[mid] = idx[mid], idx[first]  # (the median of three: the middle)
        lo, hi = first + 1, last
        while True:  # unguarded partition: every comparison is false
            hi -= 1
            if not lo < hi:
                break
            idx[lo], idx[hi] = idx[hi], idx[lo]
            lo += 1
        if lo <= 0:
            first = lo
        else:
            last = lo
    return idx[first] if first == 0 else idx[0]


def _median_indices(a, dim, keepdim, ignore_nan: bool) -> np.ndarray:
    """median(dim)'s indices, PyTorch's: the first NaN (median), else the middle of the
    values ordered by (value, index), NaN last (nanmedian: the middle of the others)."""
    a = np.asarray(a)
    if a.ndim == 0:
        return np.zeros((), dtype=np.int64)
    n = a.shape[dim]
    order = np.argsort(a, axis=dim, kind="stable")  # (NaN last; -0.0 ties 0.0)
    nan = _nan_mask(a)
    count = np.sum(~nan, axis=dim, keepdims=True) if ignore_nan else np.full(
        np.sum(nan, axis=dim, keepdims=True).shape, n)
    k = np.where(count > 0, (count - 1) // 2, 0)
    out = np.take_along_axis(order, k, axis=dim)
    if ignore_nan:
        out = np.where(count == 0, _all_equivalent_nth(n), out)
    else:
        out = np.where(nan.any(axis=dim, keepdims=True),
                       np.argmax(nan, axis=dim).reshape(k.shape) if n else k, out)
    return (out if keepdim else np.squeeze(out, axis=dim)).astype(np.int64)


def _median_dim(a, dim, keepdim, ignore_nan: bool):
    a = np.asarray(a)
    if a.ndim == 0:
        return a.copy()
    out = np.take_along_axis(a, _median_indices(a, dim, True, ignore_nan), axis=dim)
    return out if keepdim else np.squeeze(out, axis=dim)


def _selected(m, grad, dim, indices, keepdim, self_sym_sizes):
    return m.value_selecting_backward(grad, dim, indices, self_sym_sizes, keepdim)


def _median_ops(name: str, ignore_nan: bool) -> tuple:
    full = Op(name, forward=lambda a: _median_all(a, ignore_nan), saves=("result", "self"),
              grads=(lambda m, grad, result, self: _evenly(m, grad, self, result),),
              # (no expression-language name: an order has no SymPy form, as sort's)
              local=("[{self} = median]/count",), method=name, function=name)
    along = Op(name, 1, attrs=("dim", "keepdim"),
               saves=("dim", "indices", "keepdim", "self_sym_sizes"),
               forward=lambda a, dim, keepdim: _median_dim(a, dim, keepdim, ignore_nan),
               derive={"indices": lambda arrays, attrs:
                       _median_indices(arrays[0], *attrs, ignore_nan)},
               grads=(_selected,), local=("[the median]",), symbol=f"{name} dim={{dim}}")
    indices = Op(f"{name}_indices", attrs=("dim", "keepdim"), dtype=R.int64,
                 forward=lambda a, dim, keepdim: _median_indices(a, dim, keepdim, ignore_nan))
    return full, along, indices


MEDIAN, MEDIAN_DIM, MEDIAN_INDICES = _median_ops("median", False)
NANMEDIAN, NANMEDIAN_DIM, NANMEDIAN_INDICES = _median_ops("nanmedian", True)

# quantile(q, dim, keepdim, interpolation): PyTorch composes it of sort, gather and lerp
# (SqueezeBackward4 <- LerpBackward1 <- GatherBackward0 <- ... <- SortBackward0); the
# front end (api.statistics) records those ops.  ``forward`` is its numpy meaning.
QUANTILE = Op("quantile", attrs=("q",), composite=True, method="quantile", function="quantile",
              forward=lambda a, q: np.quantile(a, q))
# (the in-place shape changes quantile ends with, on its own result: not views)
UNSQUEEZE_ = Op("unsqueeze_", 1, attrs=("dim",), saves=("dim",),
                forward=lambda a, dim: np.expand_dims(a, int(dim)),
                grads=(lambda m, grad, dim: m.call(SQUEEZE_DIM, grad, dim),),
                local=("unsqueeze",))
TRANSPOSE_ = Op("transpose_", 1, attrs=("dim0", "dim1"), saves=("dim0", "dim1"),
                forward=lambda a, dim0, dim1: np.swapaxes(a, dim0, dim1),
                grads=(lambda m, grad, dim0, dim1: m.call(TRANSPOSE, grad, dim0, dim1),),
                local=("transpose",))
NANQUANTILE = Op("nanquantile", attrs=("q",), composite=True, method="nanquantile",
                 function="nanquantile", forward=lambda a, q: np.nanquantile(a, q))


# -- histograms, bincount and bucketize -----------------------------------------------------
def _edges(a, bins, lo, hi) -> np.ndarray:
    """``bins + 1`` evenly spaced edges in the input's dtype, as PyTorch's linspace kernel
    computes them there: from the start for the first half, from the end for the rest."""
    dt = np.asarray(a).dtype.type
    lo, hi, n = dt(lo), dt(hi), bins + 1
    step = (hi - lo) / dt(n - 1)
    i = np.arange(n)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.where(i < n // 2, lo + step * i.astype(dt), hi - step * (n - 1 - i).astype(dt))


def _bin_counts(a, edges, weight=None, density=False) -> np.ndarray:
    """Counts (or summed weights) per bin: left-closed bins, the last one closed, as
    ``torch.histogram``; values outside the edges are left out."""
    a = np.ravel(np.asarray(a))
    edges = np.asarray(edges)
    dt = edges.dtype
    n = edges.size - 1
    w = np.ones(a.shape) if weight is None else np.ravel(np.asarray(weight, dtype=np.float64))
    inside = (a >= edges[0]) & (a <= edges[-1]) if n > 0 else np.zeros(a.shape, dtype=bool)
    pos = np.searchsorted(edges, a[inside], side="right") - 1
    pos = np.minimum(pos, n - 1)
    hist = np.bincount(pos, weights=w[inside], minlength=n)[:n].astype(np.float64)
    if density:
        with np.errstate(divide="ignore", invalid="ignore"):
            hist = hist / (hist.sum() * np.diff(edges.astype(np.float64)))
    return hist.astype(dt)


def _histc(a, bins, lo, hi):
    a = np.asarray(a)
    if lo == hi and a.size:
        lo, hi = float(np.min(a)), float(np.max(a))
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    # PyTorch's histc puts a value in bin (x - min) * bins / (max - min), computed in the
    # input's dtype (no search of the edges, unlike histogram)
    dt = a.dtype.type
    lo, hi = dt(lo), dt(hi)
    x = np.ravel(a)
    x = x[(x >= lo) & (x <= hi)]
    with np.errstate(over="ignore", invalid="ignore"):
        pos = ((x - lo) * dt(bins) / (hi - lo)).astype(np.int64)
    pos = np.minimum(pos, bins - 1)
    return np.bincount(pos, minlength=bins)[:bins].astype(a.dtype)


def _histogram_range(a, bins, range_):
    a = np.asarray(a)
    lo, hi = range_ if range_ is not None else (
        (float(np.min(a)), float(np.max(a))) if a.size else (0.0, 0.0))
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5  # (torch.histogram: a range of nothing widened by 1)
    return _edges(a, bins, lo, hi)


def _histogram_edges(a, bins, range_, edges) -> np.ndarray:
    return np.asarray(edges) if edges is not None else _histogram_range(a, bins, range_)


HISTC = Op("histc", attrs=("bins", "min", "max"), forward=_histc, method="histc",
           function="histc", doc="counts in bins of equal width between min and max")

# torch.histogram: one node of two outputs (hist, bin_edges), "NotImplemented" when the
# input requires grad: backward raises.  symgrad's forward computes hist, its last output
# (the one the engine asks the rule about), so that a backward through hist raises as in
# PyTorch; bin_edges, made by the front end, is output 0 (PyTorch's 1).
HISTOGRAM = Op("histogram", attrs=("bins", "range", "edges", "weight", "density"),
               forward=lambda a, bins, range_, edges, weight, density: _bin_counts(
                   a, _histogram_edges(a, bins, range_, edges), weight, density),
               outputs=("bin_edges", "hist"), node="torch::autograd::NotImplemented",
               grads=(not_implemented("derivative for aten::histogram is not implemented",
                                      RuntimeError),),
               method="histogram", function="histogram")
HISTOGRAM_EDGES = Op("histogram_edges", attrs=("bins", "range", "edges"),
                     forward=_histogram_edges)


def _bincount_dtype(args, attrs):
    weights = args[1] if len(args) > 1 else None
    d = getattr(weights, "_dtype", None)
    if d is None:
        return R.int64(args, attrs)
    return d if d.name in ("float32", "float64") else _dt_float64


_bincount_dtype.fast = False


def _bincount(a, weights, minlength):
    # (apply converts integer operands of an op with a floating result: the values are
    # integers still)
    a = np.asarray(a).astype(np.int64)
    if weights is None:
        return np.bincount(a, minlength=minlength).astype(np.int64)
    w = np.asarray(weights)
    out = np.bincount(a, weights=w.astype(np.float64), minlength=minlength)
    return out.astype(w.dtype if w.dtype.kind == "f" else np.float64)


BINCOUNT = Op("bincount", attrs=("minlength",), dtype=_bincount_dtype,
              forward=lambda a, minlength: _bincount(a, None, minlength),
              method="bincount", function="bincount")
BINCOUNT_WEIGHTS = Op("bincount", 1, inputs=("self", "weights"), attrs=("minlength",),
                      dtype=_bincount_dtype, forward=_bincount,
                      node="torch::autograd::NotImplemented",
                      grads=(None, not_implemented("derivative for aten::bincount is not "
                                                   "implemented", RuntimeError)))


def _bucketize_dtype(args, attrs):
    return int32 if attrs[0] else int64


_bucketize_dtype.fast = False


def _bucketize(a, boundaries, out_int32, right):
    # (the index of the first boundary above the value, or at or above it with ``right``
    # False: numpy's side "left"; NaN sorts above every boundary)
    side = "right" if right else "left"
    out = np.searchsorted(np.asarray(boundaries), np.asarray(a), side=side)
    return np.asarray(out, dtype=np.int32 if out_int32 else np.int64)


BUCKETIZE = Op("bucketize", inputs=("self", "boundaries"), attrs=("out_int32", "right"),
               dtype=_bucketize_dtype, forward=_bucketize, function="bucketize",
               doc="the bucket of each value between sorted boundaries")

WORK.register(W.reduce_all, PROD, STD, VAR)
WORK.register(W.logsumexp, LOGSUMEXP)
WORK.register(W.last_axis, CUMSUM)


# -- forward mode (symgrad.ops.jvp): how each op's JVP is derived -----------------------
from . import jvp as _fwd  # noqa: E402
from .tables import JVP as _JVP  # noqa: E402

_JVP.register(_fwd.LINEAR, FLIP, CUMSUM)


from .reductions import SUM_DIM  # noqa: E402


def _logsumexp_jvp(m, tangents, args, attrs, result, saved):
    # sum(softmax(x) * t) along dim (PyTorch's logsumexp_jvp)
    (x,), (dim, keepdim), t = args, attrs, tangents[0]
    weights = m.call(EXP, x - _restored(result, m.shape(x), dim, keepdim))
    if not m.shape(x):
        return weights * t
    return m.call(SUM_DIM, weights * t, _axes(dim, len(m.shape(x))), keepdim)


_JVP.register(_logsumexp_jvp, LOGSUMEXP)
_JVP.register(_fwd.REDUCTION, PROD, PROD_DIM, VAR, STD, AMAX, AMIN)
# (PyTorch has no forward mode for these: its error)
_JVP.register(_fwd.unsupported("histogram"), HISTOGRAM)
_JVP.register(_fwd.unsupported("bincount"), BINCOUNT_WEIGHTS)


# -- vmap (symgrad.ops.batching): each op once on a batch, its dimensions past the batch's ----
from . import batching as _vmap  # noqa: E402
from .tables import BATCHING as _BATCHING  # noqa: E402

_BATCHING.register(_vmap.with_dims(FLIP), FLIP)
_BATCHING.register(_vmap.with_dim(CUMSUM), CUMSUM)
