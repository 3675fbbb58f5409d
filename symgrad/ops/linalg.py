"""Linear algebra: dot, mm, mv, bmm."""
from __future__ import annotations

import numpy as np

from .arithmetic import _maybe_multiply
from .kernels import _strides
from .matrices import OUTER
from .shapes import T, TRANSPOSE
from . import dtype_rules as R
from . import shape_rules as W
from .record import Op
from .tables import WORK

__all__ = ["MATMUL", "DOT", "MM", "ADDMM", "MV", "BMM"]

# Drawings: an op's local derivative is its rule printed (symgrad.ops.formula); a
# ``local=`` below overrides it where the printed rule reads worse than the label:
# transposes: a matrix product's local derivative is shown as Xᵀ.


def _column_major(sizes, strides) -> bool:
    return len(strides) == 2 and strides[0] == 1 and strides[1] == sizes[0]


def _mm_mat1_backward(m, grad, mat2, sizes, strides):
    # PyTorch's mm_mat1_backward: a column-major mat1 gets a column-major gradient
    # (the same values; the double-backward graph has PyTorch's nodes).
    if _column_major(sizes, strides):
        return m.call(T, mat2 @ m.call(T, grad))
    return grad @ m.call(T, mat2)


def _mm_mat2_backward(m, grad, mat1, sizes, strides):
    # PyTorch's mm_mat2_backward, likewise (nn.Linear's ``weight.t()`` is column-major).
    if _column_major(sizes, strides):
        return m.call(T, m.call(T, grad) @ mat1)
    return m.call(T, mat1) @ grad


def _mm_self_grad(m, grad, mat2, self, sizes, strides, mat2_sizes, mat2_strides):
    return _mm_mat1_backward(m, grad, mat2, sizes, strides)


def _mm_mat2_grad(m, grad, mat2, self, sizes, strides, mat2_sizes, mat2_strides):
    return _mm_mat2_backward(m, grad, self, mat2_sizes, mat2_strides)


def _no_bool(kernel: str) -> dict:
    return {"bool": (NotImplementedError, f'"{kernel}" not implemented for \'Bool\'')}


#: float32 products whose second operand (its last two dimensions) has at most this many
#: elements, and that take at most :data:`EXACT_WORK` multiply-adds, are accumulated in
#: float64 and rounded once: each element is then the correctly rounded product (bar a
#: double rounding once in ~10^7) whatever the number of rows, so a row computed alone
#: (vmap's per-sample loop) has the bits of the same row of a batched product, as PyTorch's
#: vmap gives (OpenBLAS's sgemm rounds a row differently by the number of rows it is
#: given).  Larger products keep float32's speed (float64 costs them 2.5x).
EXACT_FLOAT32 = 1 << 16
EXACT_WORK = 1 << 22


def _matmul(a, b):
    """``np.matmul``, float32 accumulated in float64 as :data:`EXACT_FLOAT32` says (where
    no partial sum can overflow float32: an overflow stays float32's inf or nan)."""
    if (getattr(a, "dtype", None) == np.float32 and getattr(b, "dtype", None) == np.float32
            and 0 < b.size and int(np.prod(b.shape[-2:])) <= EXACT_FLOAT32 and a.size
            and a.size * (b.shape[-1] if b.ndim > 1 else 1) <= EXACT_WORK):
        with np.errstate(over="ignore", invalid="ignore"):
            bound = float(np.max(np.abs(a))) * float(np.max(np.abs(b))) * b.shape[
                -2 if b.ndim > 1 else 0]
        if bound < 1e37:
            return np.matmul(a.astype(np.float64), b.astype(np.float64)).astype(np.float32)
    return np.matmul(a, b)


DOT = Op("dot", inputs=("self", "tensor"), forward=_matmul, saves=("self", "tensor"),
         refuse=_no_bool("dot"),
         ranks=((1,), (1,)),
         dtype=R.promote_strict,
         grads=(lambda m, grad, self, tensor: grad * tensor,
                lambda m, grad, self, tensor: grad * self),
         symbol="dot", infix="⟨{self}, {tensor}⟩", commutative=True,
         method="dot", function="dot", expr="dot")


MM = Op("mm", inputs=("self", "mat2"), forward=_matmul, refuse=_no_bool("addmm_impl_cpu_"),
        # (in the order PyTorch unpacks them: an in-place change to both reports mat2)
        saves=("mat2", "self", "self_sym_sizes", "self_sym_strides", "mat2_sym_sizes",
               "mat2_sym_strides"),
        derive={"self_sym_strides": lambda arrays, attrs: _strides(arrays[0]),
                "mat2_sym_sizes": lambda arrays, attrs: tuple(np.shape(arrays[1])),
                "mat2_sym_strides": lambda arrays, attrs: _strides(arrays[1])},
        # PyTorch's mm_mat1_backward/mm_mat2_backward pick a memory layout from the
        # sizes and strides; the values do not depend on it.
        saved_for={"self_sym_strides": ("self",), "mat2_sym_strides": ("mat2",)},
        ranks=((2,), (2,)),
        dtype=R.promote_strict,
        grads=(_mm_self_grad, _mm_mat2_grad),
        local=("{mat2}ᵀ", "{self}ᵀ"),
        symbol="@", infix="{self} {mat2}",
        method="mm", function="mm")


# addmm: beta * self + alpha * (mat1 @ mat2), what nn.functional.linear records for a
# matrix input with a bias (self, the bias, broadcasts).
ADDMM = Op("addmm", inputs=("self", "mat1", "mat2"), attrs=("beta", "alpha"),
           forward=lambda b, m1, m2, beta, alpha: beta * b + alpha * _matmul(m1, m2),
           saves=("alpha", "beta", "mat1", "mat1_sym_sizes", "mat1_sym_strides", "mat2",
                  "mat2_sym_sizes", "mat2_sym_strides"),
           derive={"mat1_sym_sizes": lambda arrays, attrs: tuple(np.shape(arrays[1])),
                   "mat1_sym_strides": lambda arrays, attrs: _strides(arrays[1]),
                   "mat2_sym_sizes": lambda arrays, attrs: tuple(np.shape(arrays[2])),
                   "mat2_sym_strides": lambda arrays, attrs: _strides(arrays[2])},
           saved_for={"mat1": ("mat2",), "mat2": ("mat1",),
                      "mat1_sym_strides": ("mat1",), "mat2_sym_strides": ("mat2",)},
           ranks=((0, 1, 2), (2,), (2,)), broadcasts=True, dtype=R.promote_strict,
           grads=(lambda m, grad, alpha, beta, mat1, s1, st1, mat2, s2, st2:
                  _maybe_multiply(m, grad, beta),
                  lambda m, grad, alpha, beta, mat1, s1, st1, mat2, s2, st2:
                  _maybe_multiply(m, _mm_mat1_backward(m, grad, mat2, s1, st1), alpha),
                  lambda m, grad, alpha, beta, mat1, s1, st1, mat2, s2, st2:
                  _maybe_multiply(m, _mm_mat2_backward(m, grad, mat1, s2, st2), alpha)),
           local=("β", "{mat2}ᵀ", "{mat1}ᵀ"), symbol="addmm",
           method="addmm", function="addmm")


MV = Op("mv", inputs=("self", "vec"), forward=_matmul, saves=("self", "vec"),
        refuse=_no_bool("addmv_impl_cpu"),
        ranks=((2,), (1,)),
        dtype=R.promote_strict,
        grads=(lambda m, grad, self, vec: m.call(OUTER, grad, vec),
               lambda m, grad, self, vec: m.call(T, self) @ grad),
        local=("{vec}ᵀ", "{self}ᵀ"),
        symbol="@", infix="{self} {vec}",
        method="mv", function="mv")


BMM = Op("bmm", inputs=("self", "mat2"), forward=_matmul, saves=("self", "mat2"),
         refuse=_no_bool("bmm"),
         ranks=((3,), (3,)),
         dtype=R.promote_strict,
         grads=(lambda m, grad, self, mat2: grad @ m.call(TRANSPOSE, mat2, -1, -2),
                lambda m, grad, self, mat2: m.call(TRANSPOSE, self, -1, -2) @ grad),
         local=("{mat2}ᵀ", "{self}ᵀ"),
         symbol="@",
         function="bmm")

# ``matmul`` is PyTorch's composite: its front end picks dot, mv, mm or bmm (and views)
# by the operands' ranks, so it records no node of its own.
MATMUL = Op("matmul", inputs=("self", "other"), forward=_matmul, composite=True,
            method="matmul", function="matmul", expr="matmul", symbol="@",
            doc="the matrix product: dot, mv, mm or bmm by the operands' ranks")


# The work they ask for (symgrad.symbolic.budget): the inner size per element.
WORK.register(W.dot, DOT)
WORK.register(W.matmul, MATMUL)


# -- forward mode (symgrad.ops.jvp): how each op's JVP is derived -----------------------
from . import jvp as _fwd  # noqa: E402
from .tables import JVP as _JVP  # noqa: E402

_JVP.register(_fwd.MULTILINEAR, DOT, MM, MV, BMM)


def _addmm_jvp(m, tangents, args, attrs, result, saved):
    # beta ṡ + alpha (ṁ1 m2 + m1 ṁ2)
    (_, mat1, mat2), (ts, t1, t2), (beta, alpha) = args, tangents, attrs
    product = None
    if t1 is not None:
        product = m.call(MM, t1, mat2)
    if t2 is not None:
        term = m.call(MM, mat1, t2)
        product = term if product is None else product + term
    total = None if product is None else m.mul_scalar(product, alpha)
    return plus_scaled_self(m, total, ts, beta, result)


def plus_scaled_self(m, total, ts, beta, result):
    """``total + beta·ṡ`` (ṡ broadcast to the result; either may be None): the self term
    of the JVPs of addmm, addmv and baddbmm."""
    if ts is None:
        return total
    term = m.mul_scalar(ts, beta)
    if tuple(m.shape(term)) != tuple(m.shape(result)):
        term = m.broadcast_to(term, m.shape(result))
    return term if total is None else total + term


_JVP.register(_addmm_jvp, ADDMM)


# -- vmap (symgrad.ops.batching): the products once on a batch -------------------------------
from . import batching as _vmap  # noqa: E402
from .reductions import SUM_DIM as _SUM_DIM  # noqa: E402
from .tables import BATCHING as _BATCHING  # noqa: E402


def fold_matmul(m, x, y, batched_right: bool = False):
    """``x @ y`` for every sample of a batch against one operand of at most two dimensions,
    as one matrix product on the backend ``m``: the batch folded into the rows (as
    PyTorch's ``matmul`` and its vmap rule for ``mm`` do), not one small product per
    sample (numpy's stacked ``@``).

    ``x`` is the batch, ``(B, ..., k)`` against ``y`` of shape ``(k, m)`` or ``(k,)``; with
    ``batched_right`` ``y`` is the batch, ``(B, ..., k, m)`` against ``x`` of shape
    ``(n, k)`` or ``(k,)`` (folded through the transposes)."""
    if batched_right:
        if len(m.shape(y)) < 2:
            return x @ y
        flat = len(m.shape(x)) == 2
        other = m.call(TRANSPOSE, x, -1, -2) if flat else x
        out = fold_matmul(m, m.call(TRANSPOSE, y, -1, -2), other)
        return m.call(TRANSPOSE, out, -1, -2) if flat else out
    shape = tuple(m.shape(x))
    if len(shape) < 2:
        return x @ y
    out = m.reshape(x, (-1, shape[-1])) @ y
    return m.reshape(out, shape[:-1] + tuple(m.shape(out))[1:])


def _matmul_batched(m, args, batched):
    """``a @ b`` for every sample: once, the batch dimension where broadcasting puts it."""
    a, b = args
    ra, rb = len(m.shape(a)) - batched[0], len(m.shape(b)) - batched[1]
    if batched[0] and not batched[1]:
        return fold_matmul(m, a, b) if rb <= 2 else None  # (B, ..., k) @ (k[, m])
    if batched[1] and not batched[0]:
        if ra > 2:
            return None
        if rb >= 2:  # (n, k) @ (B, ..., k, m)
            return fold_matmul(m, a, b, batched_right=True)
        return b @ (m.call(TRANSPOSE, a, 0, 1) if ra == 2 else a)  # a vector: (B, k) @ aᵀ
    if ra == rb >= 2:
        return a @ b
    if ra == rb == 1:
        return m.call(_SUM_DIM, a * b, (1,), False)
    return None


def _addmm_batched(m, args, batched):
    """``beta * bias + alpha * (m1 @ m2)`` of each sample, the product once."""
    bias, mat1, mat2, beta, alpha = args
    size = _vmap.size_of(m, args, batched)
    product = _vmap.rows(m, mat1, batched[1], size) @ mat2
    if alpha != 1:
        product = product * alpha
    if batched[0]:  # (its samples' dimensions lined up with the product's)
        shape = tuple(m.shape(bias))
        bias = m.reshape(bias, shape[:1] + (1,) * (len(m.shape(product)) - len(shape))
                         + shape[1:])
    return product + (bias if beta == 1 else bias * beta)


_BATCHING.register(_matmul_batched, MM, MV, DOT, BMM, MATMUL)
_BATCHING.register(_addmm_batched, ADDMM)
