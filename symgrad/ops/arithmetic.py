"""``+ - * / **``, negation and reciprocal, with the Scalar overloads PyTorch's formulas use."""
from __future__ import annotations

import operator

import numpy as np

from . import dtype_rules as R
from .compare import EQ, GE, LOGICAL_AND
from .elementwise import LOG, WHERE
from .kernels import check_exact_power
from .record import Op

__all__ = ["ADD", "ADD_ALPHA", "SUB", "SUB_ALPHA", "RSUB", "MUL", "MUL_SCALAR", "ADD_SCALAR",
           "SUB_SCALAR", "DIV_SCALAR", "DIV", "RECIPROCAL", "NEG", "POW", "POW_TENSOR", "RPOW"]

# Drawings: an op's local derivative is its rule printed (symgrad.ops.formula); a
# ``local=`` below overrides it where the printed rule reads worse than the label:
# pow's exponent - 1 and log, which the rules compute on numbers (float(exponent)), and alpha,
# which they test in Python (alpha == 1).


_NEGATIVE_POWER = "Integers to negative integer powers are not allowed."


def _check_exact_power(a, b) -> None:
    """Refuse powers of numbers (SymPy values) too large to compute exactly."""
    if np.asarray(a).dtype != object and np.asarray(b).dtype != object:
        return
    for base, e in np.broadcast(np.asarray(a, dtype=object), np.asarray(b, dtype=object)):
        check_exact_power(base, e)


def _pow_scalar(a, exponent):
    _check_exact_power(a, exponent)
    if exponent == -0.5 and np.result_type(a).kind == "f":
        # PyTorch's kernel takes rsqrt for -0.5: NaN at -inf, -inf at -0.0 (C's pow: 0, inf)
        with np.errstate(divide="ignore", invalid="ignore"):
            return (1 / np.sqrt(a))[()]
    try:
        return np.power(a, exponent)
    except ValueError:  # numpy's refusal of int ** negative int, in PyTorch's words
        raise RuntimeError(_NEGATIVE_POWER) from None


def _power(a, b):
    """Elementwise ``a ** b``; integers to negative integer powers as PyTorch's kernel
    gives them (1 and -1 keep their powers, anything else truncates to 0)."""
    _check_exact_power(a, b)
    try:
        return np.power(a, b)
    except ValueError:
        a, b = np.asarray(a), np.asarray(b)
        ones = np.where(a == -1, 1 - 2 * (b % 2), a == 1).astype(np.result_type(a, b))
        return np.where(b < 0, ones, np.power(a, np.maximum(b, 0)))


_NEGATION = ("Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
             "to invert a mask, use the `~` or `logical_not()` operator instead.")


# A float type wide enough to hold a product of two of these exactly enough that one
# rounding to the narrow type is the fused multiply-add's (and its range past overflow).
_WIDER = {np.dtype(np.float32): np.float64, np.dtype(np.float64): np.longdouble}


def fused_multiply_add(a, b, c):
    """``a * b + c`` rounded once, as PyTorch's vectorized kernels compute it (``fmadd``):
    no overflow of ``a * b`` alone, the sign of a product too small to represent.

    Computed in the next wider float type (where the platform has one: numpy's longdouble
    is double on some), else as ``a * b + c``.
    """
    dtype = np.result_type(a, b, c)
    wide = _WIDER.get(dtype)
    if wide is None or np.finfo(wide).nmant <= np.finfo(dtype).nmant:
        return a * b + c
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.asarray(np.asarray(a, wide) * np.asarray(b, wide) + np.asarray(c, wide))
    return out.astype(dtype)


def _add_alpha(a, b, alpha):
    if alpha == 1:
        return a + b
    if np.result_type(a, b, alpha).kind == "f" and np.result_type(a, b).kind != "O":
        return fused_multiply_add(b, alpha, a)
    return a + alpha * b


def _times(alpha, b):
    # alpha * b, except that alpha 1 leaves b alone (bool operands stay bool).
    return b if alpha == 1 else alpha * b


def _maybe_multiply(m, grad, alpha):
    # PyTorch's maybe_multiply: a gradient times alpha (mul.Scalar), unless alpha is 1.
    return grad if alpha == 1 else m.mul_scalar(grad, alpha)


# ``x + y`` is PyTorch's add with alpha 1 (AddBackward0 shows _saved_alpha = 1); any other
# alpha, ``x.add(y, alpha=2)``, is the same node saving its alpha: one op for each, so that
# the common case keeps no attribute.
ADD = Op("add", inputs=("self", "other"), broadcasts=True, dtype=R.promote,
         forward=operator.add, grads=(lambda m, grad: grad, lambda m, grad: grad),
         consts={"alpha": 1}, doc="self + other",
         symbol="+", infix="{self} + {other}", commutative=True,
         method=("add", "__add__", "__radd__"), function="add")


ADD_ALPHA = Op("add", key="add_alpha", inputs=("self", "other"), attrs=("alpha",),
               broadcasts=True, dtype=R.alpha, saves=("alpha",),
               forward=_add_alpha,
               grads=(lambda m, grad, alpha: grad,
                      lambda m, grad, alpha: _maybe_multiply(m, grad, alpha)),
               local=("1", "{alpha}"), doc="self + alpha * other",
               symbol="+", infix="{self} + {alpha}·{other}")


SUB = Op("sub", inputs=("self", "other"), broadcasts=True, dtype=R.sub,
         forward=operator.sub, grads=(lambda m, grad: grad, lambda m, grad: -grad),
         consts={"alpha": 1}, doc="self - other",
         symbol="−", infix="{self} − {other}",
         method=("sub", "__sub__"), function="sub")


SUB_ALPHA = Op("sub", key="sub_alpha", inputs=("self", "other"), attrs=("alpha",),
               broadcasts=True, dtype=R.sub_alpha, saves=("alpha",),
               forward=lambda a, b, alpha: _add_alpha(a, b, -alpha),
               grads=(lambda m, grad, alpha: grad,
                      lambda m, grad, alpha: _maybe_multiply(m, -grad, alpha)),
               local=("1", "-{alpha}"), doc="self - alpha * other",
               symbol="−", infix="{self} − {alpha}·{other}")


RSUB = Op("rsub", 1, inputs=("self",), attrs=("other", "alpha"), dtype=R.sub_alpha,
          forward=lambda a, other, alpha: other - _times(alpha, a), saves=("alpha",),
          grads=(lambda m, grad, alpha: _maybe_multiply(m, -grad, alpha),),
          local=("-{alpha}",), doc="other - alpha * self, other a Python number",
          symbol="{other} −", infix="{other} − {self}")


MUL = Op("mul", inputs=("self", "other"), broadcasts=True, dtype=R.promote,
         forward=operator.mul, saves=("self", "other"),
         grads=(lambda m, grad, self, other: grad * other,
                lambda m, grad, self, other: grad * self),
         doc="self * other",
         symbol="×", infix="{self}·{other}", commutative=True,
         method=("mul", "__mul__", "__rmul__"), function="mul")


# Inside PyTorch's backward formulas ``scalar * tensor`` is mul.Scalar: MulBackward1, one
# input.  (From Python, ``5 * x`` wraps 5 as a tensor: MulBackward0 with a None edge.)
MUL_SCALAR = Op("mul", 1, inputs=("self",), attrs=("other",), dtype=R.promote,
                forward=np.multiply, saves=("other",),
                grads=(lambda m, grad, other: m.mul_scalar(grad, other),),
                doc="self * other, other a number inside a gradient rule",
                symbol="× {other}", infix="{other}·{self}")


# The other Scalar overloads PyTorch's formulas use: AddBackward1, SubBackward1, DivBackward1.
ADD_SCALAR = Op("add", 1, inputs=("self",), attrs=("other",), forward=np.add,
                grads=(lambda m, grad: grad,),
                doc="self + other, other a number inside a gradient rule",
                symbol="+ {other}", infix="{self} + {other}")


SUB_SCALAR = Op("sub", 1, inputs=("self",), attrs=("other",), forward=np.subtract,
                dtype=R.sub,
                grads=(lambda m, grad: grad,),
                doc="self - other, other a number inside a gradient rule",
                symbol="− {other}", infix="{self} − {other}")


DIV_SCALAR = Op("div", 1, inputs=("self",), attrs=("other",), forward=np.true_divide,
                saves=("other",), grads=(lambda m, grad, other: m.div_scalar(grad, other),),
                doc="self / other, other a number inside a gradient rule",
                symbol="÷ {other}", infix="{self}/{other}")


DIV = Op("div", inputs=("self", "other"), broadcasts=True, dtype=R.floating,
         forward=operator.truediv, saves=("self", "other"),
         grads=(lambda m, grad, self, other: grad / other,
                lambda m, grad, self, other: -grad * ((self / other) / other)),
         doc="self / other",
         symbol="÷", infix="{self}/{other}",
         method=("div", "__truediv__"), function="div")


RECIPROCAL = Op("reciprocal", dtype=R.floating, forward=lambda a: 1.0 / a, saves=("result",),
                grads=(lambda m, grad, result: -grad * (result * result),),
                sym="reciprocal", doc="1 / self",
                method="reciprocal", inplace="reciprocal_", function="reciprocal")


NEG = Op("neg", forward=operator.neg, refuse={"bool": (RuntimeError, _NEGATION)},
         grads=(lambda m, grad: -grad,), doc="-self",
         symbol="−", infix="−{self}",
         method=("neg", "__neg__"), inplace="neg_", function="neg")


_BOOL_POW = {"bool": (NotImplementedError, '"pow" not implemented for \'Bool\'')}


POW = Op("pow", inputs=("self",), attrs=("exponent",), dtype=R.pow_scalar,
         forward=_pow_scalar, refuse=_BOOL_POW, domain=(0, np.inf), saves=("self", "exponent"),
         grads=(lambda m, grad, self, exponent:
                m.zeros_like(grad) if exponent == 0
                # PyTorch's formula takes the exponent as a double: MulBackward1 saves 2.0.
                else grad * m.mul_scalar(self ** (float(exponent) - 1), float(exponent)),),
         local=("{exponent}·{self}^({exponent}-1)",), doc="self ** exponent (a number)",
         symbol="pow {exponent}", infix="{self}{exponent:sup}",
         method=("pow", "__pow__"), function="pow")


POW_TENSOR = Op("pow", 1, inputs=("self", "exponent"), broadcasts=True, dtype=R.promote,
                forward=_power, refuse=_BOOL_POW, domain=(0, np.inf),
                saves=("self", "exponent", "result"),
                grads=(lambda m, grad, self, exponent, result:
                       m.call(WHERE, m.call(EQ, exponent, 0), 0.0,
                               grad * (exponent * self ** m.sub_scalar(exponent, 1))),
                       # As PyTorch: 0 ** y has gradient 0 in y for y >= 0 (not nan).
                       lambda m, grad, self, exponent, result:
                       grad * m.call(WHERE, m.call(LOGICAL_AND, m.call(EQ, self, 0),
                                             m.call(GE, exponent, 0)),
                                      0.0, result * m.call(LOG, self))),
                local=("{exponent}·{self}^({exponent}-1)", "{self}^{exponent}·log {self}"),
                doc="self ** exponent (a tensor)",
                symbol="pow")


RPOW = Op("pow", 2, inputs=("exponent",), attrs=("self",), dtype=R.rpow,
          forward=lambda e, base: _power(base, e), refuse=_BOOL_POW,
          saves=("self", "exponent", "result"),
          grads=(lambda m, grad, self, exponent, result:
                 grad * m.mul_scalar(result, float(np.log(self))) if self != 0 else
                 grad * m.call(WHERE, m.call(GE, exponent, 0), 0.0, result * float("-inf")),),
          local=("{self}^{exponent}·log {self}",), doc="self ** exponent, self a number",
          symbol="pow")


# -- forward mode (symgrad.ops.jvp): how each op's JVP is derived -----------------------
from . import jvp as _fwd  # noqa: E402
from .tables import JVP as _JVP  # noqa: E402

_JVP.register(_fwd.ELEMENT_WISE, ADD, ADD_ALPHA, SUB, SUB_ALPHA, RSUB, MUL, MUL_SCALAR, ADD_SCALAR,
              SUB_SCALAR, DIV_SCALAR, DIV, RECIPROCAL, NEG, POW, POW_TENSOR, RPOW)
