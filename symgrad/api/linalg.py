"""Matrix products: ``matmul`` (``@``) built as PyTorch builds it, ``mm``, ``mv``, ``dot``
and ``bmm`` with PyTorch's checks.

Examples
--------
>>> import symgrad as torch
>>> a, b = torch.ones(2, 3), torch.ones(3)
>>> (a @ b).grad_fn, matmul(a, b)
(None, tensor([3., 3.]))
"""
from __future__ import annotations

import builtins

import numpy as np

from .. import ops as O
from .apply import apply
from .construct import tensor
from .core import Tensor
from .messages import _SCALAR_NAMES
from .methods import where
from .return_types import linalg_slogdet as LinalgSlogdetResult
from .return_types import slogdet as SlogdetResult
from .shapes import _broadcast_sizes, _strides, _wrap_dim

__all__ = ["matmul", "mm", "mv", "dot", "bmm", "det", "inverse", "logdet", "slogdet", "solve",
           "outer", "diag", "trace", "kron"]


def matmul(a: Tensor, b: Tensor) -> Tensor:
    """PyTorch's matmul, built from the same ops in the same order (``_matmul_impl``).

    dot, mv or mm by the ranks; a batched operand is folded into a matrix for mm/mv
    when that needs no copy, else both are broadcast and multiplied with bmm.
    """
    if not isinstance(b, Tensor):
        b = tensor(b)
    da, db = a.ndim, b.ndim
    if da == 0 or db == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{da}D and {db}D")
    if da == 1 and db == 1:
        return dot(a, b)
    if da == 2 and db == 1:
        return mv(a, b)
    if da == 1 and db == 2:
        out = apply(O.SQUEEZE_, (mm(a.unsqueeze(0), b),), (0,))
        out._vc[0] += 1  # squeeze_ changed the product in place
        return out
    if da == 2 and db == 2:
        return mm(a, b)
    if _should_fold(a, b):
        transpose = db > da
        t1 = b.mT if transpose else a
        t2 = (a.t() if da == 2 else a) if transpose else b
        out_shape = tuple(t1.shape[:-1])
        t1 = t1.reshape(int(np.prod(out_shape)), t1.shape[-1])
        if t2.ndim == 2:
            out = apply(O.UNSAFE_VIEW, (mm(t1, t2),), (out_shape + (t2.shape[1],),))
            return out.mT.contiguous() if transpose else out
        return apply(O.UNSAFE_VIEW, (mv(t1, t2),), (out_shape,))
    n = a.shape[-2] if da > 1 else 1
    m1 = a.shape[-1]
    batch1 = tuple(a.shape[:builtins.max(da - 2, 0)])
    m2 = b.shape[-2] if db > 1 else b.shape[0]
    p = b.shape[-1] if db > 1 else 1
    batch2 = tuple(b.shape[:builtins.max(db - 2, 0)])
    if da == 3 and db == 3 and batch1[0] != batch2[0]:
        if batch1[0] == 1 and a.requires_grad:
            return matmul(a.squeeze(0), b)
        if batch2[0] == 1 and b.requires_grad:
            return matmul(a, b.squeeze(0))
    batch = _broadcast_sizes(batch1, batch2)
    count = int(np.prod(batch))
    a3 = a.expand(batch + (n, m1)).reshape(count, n, m1)
    if db == 1:
        b3 = b.expand(batch + (m2,)).reshape(count, m2).unsqueeze(2)
    else:
        b3 = b.expand(batch + (m2, p)).reshape(count, m2, p)
    out_shape = batch + ((n,) if da > 1 else ()) + ((p,) if db > 1 else ())
    out = bmm(a3, b3)
    if db == 1:
        out = out.squeeze(-1)
    return apply(O.UNSAFE_VIEW, (out,), (out_shape,))


def _should_fold(a: Tensor, b: Tensor) -> bool:
    """PyTorch's rule for folding a batched operand into a matrix (no copy, or a copy
    that keeps the backward small)."""
    a_larger = a.ndim >= b.ndim
    shape, strides = tuple(a.shape), _strides(a)
    if not a_larger:  # b.mT
        shape = tuple(b.shape[:-2]) + (b.shape[-1], b.shape[-2])
        s = _strides(b)
        strides = s[:-2] + (s[-1], s[-2])
    if not (len(shape) >= 3 and (b.ndim if a_larger else a.ndim) <= 2):
        return False
    if (b if a_larger else a).requires_grad:
        return True
    if a.ndim == 2:
        return False
    if 0 in shape:
        return True
    return builtins.all(strides[i] == strides[i + 1] * shape[i + 1]
                        for i in range(len(shape) - 2))


def bmm(a: Tensor, b: Tensor) -> Tensor:
    """Batched matrix product of two 3-D tensors (``BmmBackward0``)."""
    if a.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if b.shape[0] != a.shape[0] or b.shape[1] != a.shape[2]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{a.shape[0]}, {a.shape[2]}] but got: [{b.shape[0]}, "
                           f"{b.shape[1]}].")
    return apply(O.BMM, (a, b))


def dot(a: Tensor, b: Tensor) -> Tensor:
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    if a.shape[0] != b.shape[0]:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src "
            f"[{b.shape[0]}] to have the same number of elements, but got {a.shape[0]} and "
            f"{b.shape[0]} elements respectively")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{_SCALAR_NAMES[a.dtype.name]} and {_SCALAR_NAMES[b.dtype.name]}")
    return apply(O.DOT, (a, b))


def mm(a: Tensor, b: Tensor) -> Tensor:
    if a.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if b.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x"
                           f"{a.shape[1]} and {b.shape[0]}x{b.shape[1]})")
    return apply(O.MM, (a, b))


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)`` (``AddmmBackward0``), ``input`` broadcast."""
    for name, t in (("mat1", mat1), ("mat2", mat2)):
        if t.ndim != 2:
            raise RuntimeError(f"{name} must be a matrix, got {t.ndim}-D tensor")
    if mat1.dtype is not mat2.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got "
                           f"{_SCALAR_NAMES[mat1.dtype.name]} and "
                           f"{_SCALAR_NAMES[mat2.dtype.name]}")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x"
                           f"{mat1.shape[1]} and {mat2.shape[0]}x{mat2.shape[1]})")
    return apply(O.ADDMM, (input, mat1, mat2), (beta, alpha))


def mv(a: Tensor, v: Tensor) -> Tensor:
    if a.ndim != 2 or v.ndim != 1:
        if a.ndim == 0:
            raise IndexError("Dimension specified as 0 but tensor has no dimensions")
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {a.ndim}, {v.ndim}")
    if a.dtype is not v.dtype:
        names = [_SCALAR_NAMES[t.dtype.name] for t in (v, a, v)]
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                           f"{names[0]}, {names[1]}, and {names[2]}")
    if a.shape[1] != v.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({a.shape[0]}), mat "
                           f"({a.shape[0]}x{a.shape[1]}), vec ({v.shape[0]})")
    return apply(O.MV, (a, v))


def _square(name: str, A: Tensor) -> None:
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    if A.ndim > 2:
        raise NotImplementedError(f"{name}: batches of matrices are not supported by symgrad")
    if not A.dtype.is_floating_point:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {_SCALAR_NAMES[A.dtype.name]}")


def det(A: Tensor) -> Tensor:
    """The determinant of a square matrix (``LinalgDetBackward0``)."""
    _square("linalg.det", A)
    return apply(O.LINALG_DET, (A,))


def inverse(A: Tensor) -> Tensor:
    """The inverse of a square matrix (``LinalgInvExBackward0``); a singular one is an
    error, as in PyTorch."""
    _square("linalg.inv", A)
    if np.linalg.matrix_rank(A._data) < A.shape[-1]:
        raise LinAlgError("linalg.inv: The diagonal element "
                          f"{_singular_pivot(A._data)} is zero, the inversion could not be "
                          "completed because the input matrix is singular.")
    return apply(O.LINALG_INV_EX, (A,))


def slogdet(A: Tensor):
    """``torch.slogdet``: :func:`linalg_slogdet` named ``torch.return_types.slogdet``."""
    return SlogdetResult(*linalg_slogdet(A))


def linalg_slogdet(A: Tensor):
    """``(sign, logabsdet)`` of ``det(A)``: both outputs of one ``LinalgSlogdetBackward0``
    node, as in PyTorch (output 0, the sign, has no gradient: a gradient reaching only it
    leaves ``A.grad`` None)."""
    _square("linalg.slogdet", A)
    sign = tensor(np.linalg.slogdet(A._data)[0], dtype=A.dtype)
    logabsdet = apply(O.LINALG_SLOGDET, (A,))
    node = logabsdet.grad_fn
    if node is not None:  # (the op's node has both outputs: sign 0, logabsdet 1)
        sign.grad_fn, sign._output_nr, sign._multi_output = node, 0, True
    return LinalgSlogdetResult(sign, logabsdet)


def logdet(A: Tensor) -> Tensor:
    """``log(det(A))``: nan for a negative determinant, -inf for a singular matrix; as
    PyTorch composes it, ``where(sign == -1, nan, logabsdet)``."""
    _square("linalg.det", A)
    sign, logabsdet = slogdet(A)
    return where(sign == -1, float("nan"), logabsdet)


def solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:
    """``X`` with ``A @ X = B`` (``LinalgSolveExBackward0``); ``B`` a vector or a matrix."""
    _square("linalg.solve", A)
    if not left:
        raise NotImplementedError("linalg.solve: left=False is not supported by symgrad")
    rows = B.shape[0] if B.ndim else 0
    if B.ndim not in (1, 2) or rows != A.shape[-1]:
        cols = 1 if B.ndim == 1 else (B.shape[-1] if B.ndim else 0)
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                           f"AX = B ({A.shape[-2]}x{A.shape[-1]} and {rows}x{cols})")
    if np.linalg.matrix_rank(A._data) < A.shape[-1]:
        raise LinAlgError("linalg.solve: The solver failed because the input matrix is "
                          "singular.")
    return apply(O.LINALG_SOLVE_EX, (A, B), (True,))


def trace(input: Tensor) -> Tensor:
    """The sum of a matrix's diagonal (``TraceBackward0``)."""
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    return apply(O.TRACE, (input,))


def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """``input[i] * vec2[j]``: PyTorch's composition, a view times a vector."""
    for name, v in (("self", input), ("vec2", vec2)):
        if v.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {v.ndim}-D")
    return input.reshape(-1, 1) * vec2


def kron(input: Tensor, other: Tensor) -> Tensor:
    """The Kronecker product, as PyTorch composes it: each operand viewed with its sizes
    interleaved with ones, the product, viewed back (UnsafeViewBackward0, MulBackward0)."""
    n = max(input.ndim, other.ndim)
    sa = (1,) * (n - input.ndim) + tuple(input.shape)
    sb = (1,) * (n - other.ndim) + tuple(other.shape)
    a = apply(O.UNSAFE_VIEW, (input,), (tuple(d for s in sa for d in (s, 1)),))
    b = apply(O.UNSAFE_VIEW, (other,), (tuple(d for s in sb for d in (1, s)),))
    return apply(O.UNSAFE_VIEW, (a * b,), (tuple(p * q for p, q in zip(sa, sb)),))


def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """A 1-D tensor as the diagonal of a matrix (``DiagEmbedBackward0``), or a matrix's
    diagonal as a 1-D tensor (``DiagonalBackward0_copy``)."""
    if input.ndim == 1:
        return apply(O.DIAG_EMBED, (input,), (diagonal, -2, -1))
    if input.ndim == 2:
        return apply(O.DIAGONAL_COPY, (input,), (diagonal, 0, 1))
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")


def _singular_pivot(a) -> int:
    """The 1-based index of the first zero pivot of ``a``'s LU (LAPACK's message)."""
    lu, _ = O.matrices._lu(a)
    zero = np.flatnonzero(np.abs(np.diagonal(lu)) <= np.finfo(float).eps * np.abs(lu).max())
    return int(zero[0]) + 1 if zero.size else a.shape[-1]


def linalg_cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    """``torch.linalg.cross``: the vector product along ``dim`` (of length 3), the other
    dims broadcast (``LinalgCrossBackward0``), with PyTorch's checks in its order."""
    for k, (name, t) in enumerate((("input", input), ("other", other))):
        if not isinstance(t, Tensor):
            raise TypeError(f"linalg_cross(): argument '{name}' (position {k + 1}) must be "
                            f"Tensor, not {type(t).__name__}")
    if isinstance(dim, builtins.bool) or not isinstance(dim, (builtins.int, np.integer)):
        raise TypeError(f"linalg_cross(): argument 'dim' must be int, not {type(dim).__name__}")
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = _wrap_dim(int(dim), input.ndim)
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{input.shape[d]} and {other.shape[d]}")
    _broadcast_sizes(tuple(input.shape), tuple(other.shape))
    if input.dtype is not other.dtype:
        raise RuntimeError(f"expected scalar type {_SCALAR_NAMES[input.dtype.name]} but found "
                           f"{_SCALAR_NAMES[other.dtype.name]}")
    if input.dtype.name == "bool":
        raise NotImplementedError('"cross" not implemented for \'Bool\'')
    return apply(O.LINALG_CROSS, (input, other), (int(dim),))


class LinAlgError(RuntimeError):
    """``torch.linalg.LinAlgError``: a singular matrix where an inverse is needed."""


LinAlgError.__name__ = LinAlgError.__qualname__ = "_LinAlgError"


def _defers(other) -> bool:
    """``other`` handles operators with arrays itself (numpy's ``__array_ufunc__ = None``
    convention, NEP 13): ``t @ other`` is its reflected operator, as PyTorch's."""
    return not isinstance(other, Tensor) and getattr(type(other), "__array_ufunc__", 0) is None


class _LinearAlgebra:
    """Tensor's matrix products (attached by ``api.tensor``)."""

    def __matmul__(self, other):
        if _defers(other):
            return NotImplemented
        return matmul(self, other)

    def __rmatmul__(self, other):
        if _defers(other):
            return NotImplemented
        return matmul(tensor(other), self)

    def dot(self, other):
        return dot(self, other)

    def matmul(self, other):
        return matmul(self, other)

    def mm(self, other):
        return mm(self, other)

    def mv(self, other):
        return mv(self, other)

    def det(self):
        return det(self)

    def logdet(self):
        return logdet(self)

    def slogdet(self):
        return slogdet(self)

    def inverse(self):
        return inverse(self)

    def outer(self, vec2):
        return outer(self, vec2)

    def trace(self):
        return trace(self)

    def kron(self, other):
        return kron(self, other)

    def diag(self, diagonal: int = 0):
        return diag(self, diagonal)

    def addmm(self, mat1, mat2, *, beta=1, alpha=1):
        return addmm(self, mat1, mat2, beta=beta, alpha=alpha)

