"""Matrix functions: trace, det, inverse, solve, diag (as PyTorch's ``diag_embed`` and
``diagonal_copy``).

The gradients are the matrix-calculus identities PyTorch uses (for invertible ``A``):
``d det(A) = det(A) A⁻ᵀ``, ``d A⁻¹ = -A⁻ᵀ G A⁻ᵀ``, and for ``X = A⁻¹B``:
``dB = A⁻ᵀ G``, ``dA = -dB Xᵀ``.  ``LU`` and ``pivots`` are saved as PyTorch shows them
(partial pivoting, 1-based pivots as LAPACK's).
"""
from __future__ import annotations

import numpy as np

from . import dtype_rules as R
from .kernels import _sympy
from .layers import CONSTANT_PAD_ND as _PAD
from .record import Op
from .shapes import TRANSPOSE, UNSQUEEZE
from .triangular import DIAGONAL
from . import shape_rules as W
from .tables import DECOMPOSED, INVERSE_OF, RATIONAL, ROLES, TRANSPOSE_INVARIANT, WORK

__all__ = ["TRACE", "LINALG_DET", "LINALG_SLOGDET", "LINALG_INV_EX", "LINALG_SOLVE_EX",
           "DIAG_EMBED", "DIAGONAL_COPY", "OUTER", "LOGDET", "DIAG", "KRON"]

# Drawings: an op's local derivative is its rule printed (symgrad.ops.formula); a
# ``local=`` below overrides it where the printed rule reads worse than the label:
# matrix calculus (A⁻ᵀ) and words.


def _lu(a) -> tuple:
    """LU with partial pivoting, packed as LAPACK's getrf (``L`` below the diagonal with a
    unit diagonal, ``U`` on and above), and its 1-based int32 pivots."""
    a = np.asarray(a)
    if a.dtype == object:  # (symbolic entries: PyTorch's LU is a numeric artefact; none)
        return np.zeros(a.shape), np.zeros(a.shape[:-1], dtype=np.int32)
    lu = np.array(a, dtype=a.dtype)
    n = lu.shape[-1]
    piv = np.zeros(lu.shape[:-1], dtype=np.int32)
    flat, pflat = lu.reshape(-1, n, n), piv.reshape(-1, n)
    for m, p in zip(flat, pflat):
        for k in range(n):
            r = k + int(np.argmax(np.abs(m[k:, k])))
            p[k] = r + 1
            if r != k:
                m[[k, r]] = m[[r, k]]
            if m[k, k] != 0:
                m[k + 1:, k] /= m[k, k]
                m[k + 1:, k + 1:] -= np.outer(m[k + 1:, k], m[k, k + 1:])
    return lu, piv


def _sym_matrix(a):
    return _sympy().Matrix(np.asarray(a, dtype=object).tolist())


def _object(matrix) -> np.ndarray:
    out = np.empty(matrix.shape, dtype=object)
    out[...] = matrix.tolist()
    return out


def _mT(m, a):
    return m.call(TRANSPOSE, a, -2, -1)


# -- trace ------------------------------------------------------------------------------------
def _trace_grad(m, grad, self_sym_sizes):
    n, k = self_sym_sizes
    eye = np.eye(n, k, dtype=np.asarray(getattr(grad, "_data", grad)).dtype)
    return m.broadcast_to(grad, tuple(self_sym_sizes)) * eye


TRACE = Op("trace", linear=True, forward=lambda a: np.asarray(np.trace(a)),
           saves=("self_sym_sizes",),
           ranks=((2,),), grads=(_trace_grad,), local=("I",), symbol="trace",
           method="trace", function="trace", expr="trace")


# -- determinant ---------------------------------------------------------------------------------
# (the determinants' LU is of Aᵀ: LAPACK reads the row-major A as its transpose)
_DET_LU = {"LU": lambda arrays, attrs: _lu(np.swapaxes(arrays[0], -1, -2))[0],
           "pivots": lambda arrays, attrs: _lu(np.swapaxes(arrays[0], -1, -2))[1]}


def _det(a):
    a = np.asarray(a)
    if a.dtype == object:
        return np.asarray(_sym_matrix(a).det(), dtype=object)
    with np.errstate(all="ignore"):  # (PyTorch gives inf silently, as here)
        return np.asarray(np.linalg.det(a), dtype=a.dtype)


LINALG_DET = Op("linalg_det", inputs=("A",), square=True, forward=_det, dtype=R.floating,
                saves=("A", "LU", "pivots", "result"), ranks=((2,),),
                derive=_DET_LU,
                grads=(lambda m, grad, A, LU, pivots, result:
                       _mT(m, m.call(LINALG_INV_EX, A)) * (grad * result),),
                local=("det({A})·{A}⁻ᵀ",), symbol="det", expr="det")


def _logabsdet(a):
    a = np.asarray(a)
    if a.dtype == object:
        sp = _sympy()
        return np.asarray(sp.log(sp.Abs(_sym_matrix(a).det())), dtype=object)
    with np.errstate(all="ignore"):
        return np.asarray(np.linalg.slogdet(a)[1], dtype=a.dtype)


def _sign(arrays, attrs):
    a = np.asarray(arrays[0])
    if a.dtype == object:
        return np.asarray(_sympy().sign(_sym_matrix(a).det()), dtype=object)
    with np.errstate(all="ignore"):
        return np.asarray(np.linalg.slogdet(a)[0], dtype=a.dtype)


def _slogdet_grad(m, grad, A, LU, pivots, sign):
    # A⁻ᵀ·grad.  Recorded (create_graph), as PyTorch's slogdet_backward records it: the
    # solve of Aᵀ X = (grad·I)ᵀ, grad·I a diag_embed of grad expanded to n; elsewhere
    # (arrays, the symbolic and matrix algebras) as the product it is.
    if not m.records:
        return _mT(m, m.call(LINALG_INV_EX, A)) * grad
    n = m.shape(A)[-1]
    d = m.call(DIAG_EMBED, m.broadcast_to(m.call(UNSQUEEZE, grad, -1), (n,)), 0, -2, -1)
    return m.call(LINALG_SOLVE_EX, _mT(m, A), _mT(m, d), True)


# PyTorch's linalg_slogdet: one node, two outputs; the forward computes logabsdet, the one
# with a gradient (the front end makes the sign, output 0, from the derived "sign").
LINALG_SLOGDET = Op("linalg_slogdet", inputs=("A",), square=True, forward=_logabsdet,
                    dtype=R.floating,
                    outputs=("sign", "logabsdet"),
                    saves=("A", "LU", "pivots", "sign"), ranks=((2,),),
                    derive={**_DET_LU, "sign": _sign},
                    grads=(_slogdet_grad,),
                    local=("{A}⁻ᵀ",), symbol="log|det|")


# -- inverse and solve -------------------------------------------------------------------------
def _inv(a):
    a = np.asarray(a)
    if a.dtype == object:
        return _object(_sym_matrix(a).inv())
    with np.errstate(all="ignore"):
        return np.linalg.inv(a)


LINALG_INV_EX = Op("linalg_inv_ex", inputs=("A",), square=True, forward=_inv, dtype=R.floating,
                   saves=("inverse",), ranks=((2,),),
                   grads=(lambda m, grad, inverse:
                          -(_mT(m, inverse) @ grad @ _mT(m, inverse)),),
                   local=("-{A}⁻ᵀ(·){A}⁻ᵀ",), symbol="inverse", expr="inverse")


def _solve(a, b, left):
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype == object or b.dtype == object:
        x = _sym_matrix(a).LUsolve(_sym_matrix(b if b.ndim == 2 else b[:, None]))
        out = _object(x)
        return out if b.ndim == 2 else out[:, 0]
    with np.errstate(all="ignore"):
        return np.linalg.solve(a, b if b.ndim == 2 else b[:, None]).reshape(b.shape)


def _solve_grad_B(m, grad, A, LU, left, pivots, result):
    return m.call(LINALG_SOLVE_EX, _mT(m, A), grad, True)


def _solve_grad_A(m, grad, A, LU, left, pivots, result):
    gB = _solve_grad_B(m, grad, A, LU, left, pivots, result)
    if len(m.shape(result)) == 1:
        return -m.call(OUTER, gB, result)
    return -(gB @ _mT(m, result))


LINALG_SOLVE_EX = Op("linalg_solve_ex", inputs=("A", "B"), attrs=("left",), forward=_solve,
                     dtype=R.promote, saves=("A", "LU", "left", "pivots", "result"),
                     ranks=((2,), (1, 2)),
                     derive={"LU": lambda arrays, attrs: _lu(arrays[0])[0],
                             "pivots": lambda arrays, attrs: _lu(arrays[0])[1]},
                     grads=(_solve_grad_A, _solve_grad_B),
                     local=("-{A}⁻ᵀ(·)Xᵀ", "{A}⁻ᵀ"), symbol="solve",
                     expr="solve", expr_args=(True,))


# -- diagonals ---------------------------------------------------------------------------------
def _diag_embed(v, offset, dim1, dim2):
    # the last dim of v as the diagonals of (batches of) matrices in dims dim1, dim2
    v = np.asarray(v)
    n = v.shape[-1] + abs(offset)
    shape = v.shape[:-1] + (n, n)
    out = np.zeros(shape, dtype=v.dtype) if v.dtype != object else np.full(shape, 0,
                                                                           dtype=object)
    idx = np.arange(v.shape[-1])
    out[..., idx + max(-offset, 0), idx + max(offset, 0)] = v
    if v.ndim == 1 and dim1 % 2 == 0 and dim2 % 2 == 1:
        return out
    return np.ascontiguousarray(np.moveaxis(out, (-2, -1), (dim1 % out.ndim, dim2 % out.ndim)))


def _diagonal(a, offset, dim1, dim2):
    return np.array(np.diagonal(a, offset, dim1, dim2))


DIAG_EMBED = Op("diag_embed", attrs=("offset", "dim1", "dim2"), forward=_diag_embed,
                saves=("dim1", "dim2", "offset"), ranks=((1, 2),),
                grads=(lambda m, grad, dim1, dim2, offset:  # (a view: DiagonalBackward0)
                       m.call(DIAGONAL, grad, offset, dim1, dim2),),
                local=("the diagonal",), symbol="diag")


def _diagonal_grad(m, grad, dim1, dim2, offset, self_sym_sizes):
    n, k = self_sym_sizes
    square = m.call(DIAG_EMBED, grad, offset, -2, -1)  # (len + |offset|)²
    side = m.shape(square)[0]
    return m.call(_PAD, square, (0, k - side, 0, n - side), 0) if (n, k) != (side, side) \
        else square


DIAGONAL_COPY = Op("diagonal_copy", attrs=("offset", "dim1", "dim2"), forward=_diagonal,
                   node="DiagonalBackward0_copy",
                   saves=("dim1", "dim2", "offset", "self_sym_sizes"), ranks=((2,),),
                   grads=(_diagonal_grad,), local=("1 on the diagonal",), symbol="diagonal")


# -- compositions with a name in the expression language ------------------------------------
# (no node of their own: PyTorch records what they are made of)
OUTER = Op("outer", inputs=("self", "vec2"), forward=np.multiply.outer, composite=True,
           method="outer", function="outer", expr="outer", symbol="⊗",
           doc="the outer product self vec2ᵀ: a view of self times vec2 (MulBackward0)")
DECOMPOSED.register(lambda a, b: a.reshape((a.shape[0], 1)) * b, OUTER)


LOGDET = Op("logdet", inputs=("self",), square=True, forward=lambda a: np.log(np.linalg.det(a)),
            composite=True, method="logdet", function="logdet", expr="logdet",
            symbol="log det",
            doc="log(det(self)): slogdet's logabsdet where the sign is +1, else nan")


DIAG = Op("diag", inputs=("self",), forward=np.diag, composite=True, function="diag",
          expr="diag", symbol="diag",
          doc="a vector as the diagonal of a matrix (DiagEmbedBackward0), or a matrix's "
              "diagonal (DiagonalBackward0_copy)")


KRON = Op("kron", inputs=("self", "other"), forward=np.kron, composite=True, method="kron",
          function="kron", expr="kron", symbol="⊗",
          doc="the Kronecker product: views of both, their product, a view of it")


# What the matrix algebra knows of them (symgrad.ops.tables): the inverse undoes itself.
ROLES.trace = TRACE
ROLES.diagonal = DIAG
ROLES.inverse = LINALG_INV_EX
INVERSE_OF.register(LINALG_INV_EX, LINALG_INV_EX)
TRANSPOSE_INVARIANT.register(True, TRACE, LINALG_DET, LOGDET)

# The work they ask for (symgrad.symbolic.budget): det, logdet, inverse and solve by
# symbolic elimination on the whole square matrix.
WORK.register(W.outer, OUTER)
WORK.register(W.kron, KRON)
WORK.register(W.diag, DIAG)
WORK.register(W.trace, TRACE)
WORK.register(W.elimination_scalar, LINALG_DET, LOGDET)
WORK.register(W.elimination_same, LINALG_INV_EX)
WORK.register(W.solve, LINALG_SOLVE_EX)
RATIONAL.register(True, LOGDET, LINALG_INV_EX, LINALG_SOLVE_EX)


# -- forward mode (symgrad.ops.jvp): how each op's JVP is derived -----------------------
from . import jvp as _fwd  # noqa: E402
from .tables import JVP as _JVP  # noqa: E402

_JVP.register(_fwd.LINEAR, DIAG_EMBED, DIAGONAL_COPY)


def _det_jvp(m, tangents, args, attrs, result, saved):
    # det(A) tr(A⁻¹ T) (Jacobi's formula)
    return result * m.call(TRACE, m.call(LINALG_INV_EX, args[0]) @ tangents[0])


def _inv_jvp(m, tangents, args, attrs, result, saved):
    return -(result @ tangents[0] @ result)


def _solve_jvp(m, tangents, args, attrs, result, saved):
    # X = A⁻¹ B: Ẋ = A⁻¹ (Ḃ - Ȧ X)
    (a, b), (ta, tb) = args, tangents
    rhs = tb if ta is None else (-(ta @ result) if tb is None else tb - ta @ result)
    return m.call(LINALG_SOLVE_EX, a, rhs, *attrs)


_JVP.register(_det_jvp, LINALG_DET)
_JVP.register(_inv_jvp, LINALG_INV_EX)
_JVP.register(_solve_jvp, LINALG_SOLVE_EX)


def _logabsdet_jvp(m, tangents, args, attrs, result, saved):
    # tr(A⁻¹ Ȧ)
    return m.call(TRACE, m.call(LINALG_INV_EX, args[0]) @ tangents[0])


_JVP.register(_logabsdet_jvp, LINALG_SLOGDET)
