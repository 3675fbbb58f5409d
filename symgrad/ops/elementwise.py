"""Elementwise functions: abs, exp, log, trigonometric, activations, clamp, where, maximum."""
from __future__ import annotations

from typing import Callable

import numpy as np

from .kernels import _FLOAT_SCALARS, _sym_map, sym_relation, sym_where
from . import dtype_rules as R
from .compare import EQ, GE, GT, LE, LOGICAL_AND, LOGICAL_OR, LT
from .indexing import MASKED_FILL_SCALAR
from .record import Op
from .tables import (FORMULA, INVERSE_OF, NOT_FINITE, NO_VECTOR_FORM, POINTWISE, ROLES, STEP,
                     CHOOSES, SYNONYM)

__all__ = ["ABS", "SIGN", "SGN", "EXP", "LOG", "SQRT", "SIN", "COS", "TAN", "TANH",
           "TANH_BACKWARD", "SIGMOID_BACKWARD", "SIGMOID", "RELU", "THRESHOLD_BACKWARD", "CLAMP",
           "CLAMP_TENSOR", "WHERE", "MAXIMUM", "MINIMUM"]

# Drawings: an op's local derivative is its rule printed (symgrad.ops.formula); a
# ``local=`` below overrides it where the printed rule reads worse than the label:
# brackets joined as [min ≤ x ≤ max], relu's [x > 0] (its rule reads its result), and ties
# halved in maximum/minimum.


def _relu(a):
    # PyTorch keeps what is not below zero as it is: NaN, and -0.0 with its sign.
    if a.__class__ in _FLOAT_SCALARS:  # a 0-d tensor's numpy scalar, without np.where
        return a.__class__(0.0) if a < 0 else a
    return np.where(a < 0, np.zeros((), np.result_type(a)), a)


def _sign(a):
    # sign of a bool tensor is itself (numpy's sign has no bool loop); PyTorch's sign is
    # (0 < a) - (a < 0), so NaN has sign 0 (numpy's is NaN).
    kind = np.result_type(a).kind
    if kind == "b":
        return np.array(a, copy=True)
    out = np.sign(a)
    if kind == "f":
        out = np.where(np.isnan(a), np.zeros((), out.dtype), out)[()]
    return out


def _threshold_backward(g, s, threshold):
    if g.__class__ in _FLOAT_SCALARS and s.__class__ in _FLOAT_SCALARS:
        # 0-d: numpy scalars, without np.where's ~2 us (and its 0-d array result)
        return g.__class__(0.0) if s <= threshold else g
    # As PyTorch: zero where self <= threshold, so a NaN lets the gradient through.
    return np.where(s <= threshold, 0.0, g)


def _clamp(a, lo, hi):
    # As PyTorch: a value is replaced only where it is past a bound (NaN and -0.0 stay).
    if lo is not None:
        a = np.where(a < lo, lo, a)
    if hi is not None:
        a = np.where(a > hi, hi, a)
    return a


def _clamp_tensor(a, lo, hi):
    # PyTorch's clamp with tensor bounds: NaN in the input or in a bound is NaN; otherwise
    # as with number bounds.  (Between equal zeros, 0.0 and -0.0, PyTorch's scalar path
    # keeps the input and its vectorized path returns the bound: the scalar one here.)
    if np.result_type(a, *(b for b in (lo, hi) if b is not None)).kind != "f":
        return _clamp(a, lo, hi)
    nan = np.isnan(a)
    for bound in (lo, hi):
        if bound is not None:
            nan = nan | np.isnan(bound)
    return np.where(nan, np.nan, _clamp(a, lo, hi))[()]


def _clamp_bound_grad(m, grad, self, min, max, which: str):
    # PyTorch's clamp_backward_min_max: a bound gets the gradient where it is the result.
    if min is not None and max is not None:
        if which == "min":
            held = m.call(LOGICAL_AND, m.call(LT, self, min), m.call(LT, min, max))
        else:
            held = m.call(LOGICAL_OR, m.call(GT, self, max), m.call(LT, max, min))
        return m.call(WHERE, held, grad, 0.0)
    held = m.call(LT, self, min) if which == "min" else m.call(GT, self, max)
    return m.call(WHERE, held, grad, 0.0)


def _selected(m, grad, self, other, lost):
    # maximum/minimum: half the gradient each on ties, none where the input lost (PyTorch:
    # where(self == other, grad / 2, grad).masked_fill_(self < other, 0)).
    halved = m.call(WHERE, m.call(EQ, self, other), m.div_scalar(grad, 2), grad)
    return m.call(MASKED_FILL_SCALAR, halved, lost, 0.0)


def _clamp_mask(m, x, lo, hi):
    mask = True
    if lo is not None:
        mask = m.call(GE, x, lo)
    if hi is not None:
        mask = m.call(LE, x, hi) if lo is None else m.call(LOGICAL_AND, mask, m.call(LE, x, hi))
    return mask


ABS = Op("abs", elementwise=True, forward=np.abs, saves=("self",), sym="Abs",
         refuse={"bool": (NotImplementedError, '"abs_cpu" not implemented for \'Bool\'')},
         grads=(lambda m, grad, self: grad * m.call(SGN, self),),
         method=("abs", "__abs__"), inplace="abs_", function="abs", expr="abs")


# sign and sgn: zero gradient, but recorded, so that abs's gradient stays connected to its
# input (a second derivative of zero, not "does not require grad"), as in PyTorch.
SIGN = Op("sign", elementwise=True,
          forward=_sign, sym="sign", grads=(lambda m, grad: m.zeros_like(grad),),
          method="sign", inplace="sign_", function="sign", expr="sign")


SGN = Op("sgn", forward=_sign, sym="sign", saves=("result", "self"),
         grads=(lambda m, grad, result, self: m.zeros_like(grad),),
         method="sgn", inplace="sgn_", function="sgn")


EXP = Op("exp", elementwise=True, dtype=R.floating, forward=np.exp, saves=("result",), sym="exp",
         grads=(lambda m, grad, result: grad * result,),
         method="exp", inplace="exp_", function="exp", expr="exp")


LOG = Op("log", elementwise=True,
         dtype=R.floating, forward=np.log, domain=(0, np.inf), saves=("self",), sym="log",
         grads=(lambda m, grad, self: grad / self,),
         method="log", inplace="log_", function="log", expr=("log", "ln"))


SQRT = Op("sqrt", elementwise=True,
          dtype=R.floating, forward=np.sqrt, domain=(0, np.inf), saves=("result",),
          sym="sqrt",
          grads=(lambda m, grad, result: grad / m.mul_scalar(result, 2),),
          method="sqrt", inplace="sqrt_", function="sqrt", expr="sqrt")


SIN = Op("sin", elementwise=True, dtype=R.floating, forward=np.sin, saves=("self",), sym="sin",
         grads=(lambda m, grad, self: grad * m.call(COS, self),),
         method="sin", inplace="sin_", function="sin", expr="sin")


COS = Op("cos", elementwise=True, dtype=R.floating, forward=np.cos, saves=("self",), sym="cos",
         grads=(lambda m, grad, self: grad * -m.call(SIN, self),),
         method="cos", inplace="cos_", function="cos", expr="cos")


TAN = Op("tan", elementwise=True, dtype=R.floating, forward=np.tan, domain=(-np.pi / 2, np.pi / 2),
         saves=("result",), sym="tan",
         grads=(lambda m, grad, result: grad * m.add_scalar(result ** 2, 1),),
         method="tan", inplace="tan_", function="tan", expr="tan")


TANH = Op("tanh", elementwise=True,
          dtype=R.floating, forward=np.tanh, saves=("result",), sym="tanh",
          grads=(lambda m, grad, result: m.call(TANH_BACKWARD, grad, result),),
          method="tanh", inplace="tanh_", function="tanh", functional="tanh", expr="tanh")


# tanh's and sigmoid's gradients as their own ops, as in PyTorch (so that their graphs,
# and second derivatives, read TanhBackwardBackward0 / SigmoidBackwardBackward0).
TANH_BACKWARD = Op(
    "tanh_backward", inputs=("grad_output", "output"),
    forward=lambda g, y: g * (1 - y * y), saves=("grad_output", "output"),
    grads=(lambda m, grad, grad_output, output: m.call(TANH_BACKWARD, grad, output),
           lambda m, grad, grad_output, output: grad * (m.mul_scalar(output, -2) * grad_output)),
    doc="grad_output * (1 - output²)")


SIGMOID_BACKWARD = Op(
    "sigmoid_backward", inputs=("grad_output", "output"),
    forward=lambda g, y: g * (y * (1 - y)), saves=("grad_output", "output"),
    grads=(lambda m, grad, grad_output, output: m.call(SIGMOID_BACKWARD, grad, output),
           lambda m, grad, grad_output, output:
           grad * grad_output * m.add_scalar(m.mul_scalar(output, -2), 1)),
    doc="grad_output * output * (1 - output)")


SIGMOID = Op("sigmoid", elementwise=True, dtype=R.floating, saves=("result",), sym="sigmoid",
             forward=lambda a: 0.5 * np.tanh(0.5 * a) + 0.5,
             grads=(lambda m, grad, result: m.call(SIGMOID_BACKWARD, grad, result),),
             method="sigmoid", inplace="sigmoid_", function="sigmoid", functional="sigmoid",
             expr="sigmoid")


RELU = Op("relu", elementwise=True, functional="relu", forward=_relu, saves=("result",), sym="relu",
          refuse={"bool": (RuntimeError, "Boolean inputs not supported for relu")},
          grads=(lambda m, grad, result: m.call(THRESHOLD_BACKWARD, grad, result, 0),),
          local=("[{self} > 0]",),
          method="relu", inplace="relu_", function="relu", expr="relu")


# relu's gradient as its own op (PyTorch's threshold_backward): it stays connected to the
# relu's result, so second derivatives are zeros rather than "unused".
THRESHOLD_BACKWARD = Op(
    "threshold_backward", inputs=("grad_output", "self"), attrs=("threshold",),
    forward=lambda g, s, t: _threshold_backward(g, s, t),
    # (zero where self <= threshold, as PyTorch: not Heaviside's 1/2 at the threshold)
    sym=lambda g, s, t: sym_where(sym_relation("Le")(s, t), 0.0, g),
    saves=("self", "threshold"),
    grads=(lambda m, grad, self, threshold: m.call(THRESHOLD_BACKWARD, grad, self, threshold),
           lambda m, grad, self, threshold: m.zeros_like(grad)),
    doc="grad_output where self > threshold")
NO_VECTOR_FORM.register(STEP, THRESHOLD_BACKWARD)
POINTWISE.register(True, TANH_BACKWARD, SIGMOID_BACKWARD, THRESHOLD_BACKWARD)


CLAMP = Op("clamp", 1, attrs=("min", "max"), forward=_clamp, saves=("self", "min", "max"),
           dtype=R.clamp,
           sym="clamp",
           grads=(lambda m, grad, self, min, max:
                  m.call(WHERE, _clamp_mask(m, self, min, max), grad, 0.0),),
           local=("[min ≤ {self} ≤ max]",),
           method="clamp", function="clamp", inplace="clamp_")


# clamp with tensor bounds (ClampBackward0): the bounds are differentiable inputs too.
CLAMP_TENSOR = Op("clamp", 0, inputs=("self", "min", "max"), broadcasts=True,
                  dtype=R.clamp_tensor, forward=_clamp_tensor, saves=("self", "min", "max"),
                  sym=lambda a, lo, hi: _sym_map("clamp", a, lo, hi),
                  grads=(lambda m, grad, self, min, max:
                         m.call(WHERE, _clamp_mask(m, self, min, max), grad, 0.0),
                         lambda m, grad, self, min, max:
                         _clamp_bound_grad(m, grad, self, min, max, "min"),
                         lambda m, grad, self, min, max:
                         _clamp_bound_grad(m, grad, self, min, max, "max")),
                  local=("[min ≤ {self} ≤ max]", "[{self} < min]", "[{self} > max]"))


WHERE = Op("where", inputs=("condition", "self", "other"), broadcasts=True,
           dtype=R.where, forward=np.where, sym=sym_where, saves=("condition",),
           grads=(None,
                  lambda m, grad, condition: m.call(WHERE, condition, grad, 0.0),
                  lambda m, grad, condition: m.call(WHERE, condition, 0.0, grad)),
           method="where", function="where")


def _pairwise(name: str, forward: Callable, sym: str, keep: str) -> Op:
    """``maximum``/``minimum`` (``forward``: ``np.maximum``): each input's gradient where it
    is the one kept (``keep``, ``"≥"``; ties: half to each)."""
    lose_self, lose_other = (LT, GT) if keep == "≥" else (GT, LT)
    return Op(name, inputs=("self", "other"), broadcasts=True, dtype=R.promote,
              forward=forward, saves=("self", "other"),
              sym=lambda a, b: _sym_map(sym, a, b),
              grads=(lambda m, grad, self, other:
                     _selected(m, grad, self, other, m.call(lose_self, self, other)),
                     lambda m, grad, self, other:
                     _selected(m, grad, self, other, m.call(lose_other, self, other))),
              local=(f"[{{self}} {keep} {{other}}]", f"[{{other}} {keep} {{self}}]"),
              commutative=True,
              method=name, function=name)


MAXIMUM = _pairwise("maximum", np.maximum, "Max", "≥")
MINIMUM = _pairwise("minimum", np.minimum, "Min", "≤")


# How the rules' calls of these read as text (symgrad.ops.formula).
FORMULA.register("|{self}|", ABS)
FORMULA.register("sign({self})", SGN)
FORMULA.register("√{self}", SQRT)
FORMULA.register("σ({self})", SIGMOID)


# What the matrix algebra knows of them: exp and log undo each other; |x|.
INVERSE_OF.register(LOG, EXP)
INVERSE_OF.register(EXP, LOG)
ROLES.absolute = ABS
CHOOSES.register(lambda condition, a, b: (condition, a, b), WHERE)
ROLES.sign = SIGN
SYNONYM.register(SIGN, SGN)  # on real numbers


def _first(mask, a) -> str | None:
    hits = np.asarray(a)[np.asarray(mask)]
    return f"{float(hits.ravel()[0]):.6g}" if hits.size else None


def _log_not_finite(a) -> str:
    v = _first(a < 0, a)
    if v is not None:
        return f"log of a negative number (log({v}) is nan)"
    return "log of zero (log(0) is -inf)"


def _sqrt_not_finite(a) -> str | None:
    v = _first(a < 0, a)
    return None if v is None else f"square root of a negative number (sqrt({v}) is nan)"


# Why the checker's expression is not finite here, in words (symgrad.symbolic.expression).
NOT_FINITE.register(_log_not_finite, LOG)
NOT_FINITE.register(_sqrt_not_finite, SQRT)
NOT_FINITE.register(lambda a: f"overflow: exp({_first(a > 709, a)}) is inf", EXP)


# -- forward mode (symgrad.ops.jvp): how each op's JVP is derived -----------------------
from . import jvp as _fwd  # noqa: E402
from .tables import JVP as _JVP  # noqa: E402

_JVP.register(_fwd.ELEMENT_WISE, SGN, TANH_BACKWARD, SIGMOID_BACKWARD, THRESHOLD_BACKWARD, CLAMP,
              CLAMP_TENSOR, WHERE, MAXIMUM, MINIMUM)
