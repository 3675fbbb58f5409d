"""The activation functions of deep learning that PyTorch runs as ops of their own
(``EluBackward0``, ``GeluBackward0``, ``SoftplusBackward0`` ...).

Their front ends, with PyTorch's options and ``inplace=``, are in
:mod:`symgrad.nn.functional.activation`; the expression language takes them with
PyTorch's default options (``softplus(x)`` is beta 1, threshold 20).  Gradients as in
PyTorch's ``derivatives.yaml``, written against the backend ``m`` so that one rule gives
numbers, recorded graphs and SymPy expressions.
"""
from __future__ import annotations

import math

import numpy as np

from . import dtype_rules as R
from .compare import GT, LOGICAL_AND, LT
from .elementwise import EXP, SIGMOID, SIGMOID_BACKWARD, TANH, WHERE
from .functions import ERF, LOG1P
from .kernels import _sympy
from .record import Op, not_implemented
from .tables import POINTWISE

__all__ = ["HARDTANH", "LEAKY_RELU", "LEAKY_RELU_", "ELU", "ELU_", "CELU", "CELU_", "GELU",
           "SILU", "MISH", "SOFTPLUS", "HARDSIGMOID", "HARDSWISH", "LOG_SIGMOID",
           "HARDTANH_BACKWARD", "LEAKY_RELU_BACKWARD", "ELU_BACKWARD", "GELU_BACKWARD",
           "SOFTPLUS_BACKWARD", "HARDSWISH_BACKWARD", "HARDSIGMOID_BACKWARD",
           "LOG_SIGMOID_BACKWARD"]

# Drawings: an op's local derivative is its rule printed (symgrad.ops.formula); a
# ``local=`` below overrides it where the printed rule reads worse than the label:
# named functions the rules spell out (σ, Φ, φ, sp) and brackets joined as [a < x < b].

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946
_GELU_K = math.sqrt(2.0 / math.pi)
_GELU_C = 0.044715


def _sym(fn, n: int = 1):
    """An elementwise SymPy definition: ``fn(sympy, x, *attrs)`` per element."""
    def on_arrays(*args):
        arrays, attrs = args[:n], args[n:]
        sp = _sympy()
        return np.frompyfunc(lambda *e: fn(sp, *e, *attrs), n, 1)(*arrays)
    return on_arrays


def _piecewise(sp, cond, a, b):
    return sp.Piecewise((a, cond), (b, True))


_NEGATIVE_SLOPE = ("In-place {} backward calculation is triggered with a negative slope which "
                   "is not supported. This is caused by calling in-place forward function with "
                   "a negative slope, please call out-of-place version instead.")
_LEAKY_MORE = (" File an issue at https://github.com/pytorch/pytorch if you do require "
               "supporting in-place leakRelu backward calculation with negative slope")


def _refuse_negative(slope: float, name: str) -> None:
    """PyTorch's in-place forms save the result, which cannot tell the branches apart
    under a negative slope: their backward refuses it."""
    if slope < 0:
        raise RuntimeError(_NEGATIVE_SLOPE.format(name)
                           + (_LEAKY_MORE if name == "leakyReLu" else ""))


# -- piecewise linear ---------------------------------------------------------------------
HARDTANH = Op("hardtanh", elementwise=True,
              functional="hardtanh", attrs=("min_val", "max_val"), dtype=R.same,
              forward=lambda a, lo, hi: np.where(a < lo, lo, np.where(a > hi, hi, a)),
              saves=("max_val", "min_val", "self"),
              sym=_sym(lambda sp, x, lo, hi: sp.Max(lo, sp.Min(x, hi))),
              grads=(lambda m, grad, max_val, min_val, self:
                     m.call(HARDTANH_BACKWARD, grad, self, min_val, max_val),),
              expr="hardtanh", expr_args=(-1.0, 1.0), expr_with={"relu6": (0, 6)})
LEAKY_RELU = Op("leaky_relu", elementwise=True,
                functional="leaky_relu", attrs=("negative_slope",), dtype=R.same,
                forward=lambda a, s: np.where(a > 0, a, a * s),
                saves=("negative_slope", "self"),
                sym=_sym(lambda sp, x, s: _piecewise(sp, x > 0, x, s * x)),
                grads=(lambda m, grad, negative_slope, self:
                       m.call(LEAKY_RELU_BACKWARD, grad, self, negative_slope, False),),
                expr="leaky_relu",
                expr_args=(0.01,))
# In place (F.leaky_relu(x, inplace=True)): the result is saved, as PyTorch does.
LEAKY_RELU_ = Op("leaky_relu", 1, attrs=("negative_slope",), dtype=R.same,
                 forward=LEAKY_RELU.forward, saves=("negative_slope", "result"),
                 sym=LEAKY_RELU.sym,
                 grads=(lambda m, grad, negative_slope, result:
                        _refuse_negative(negative_slope, "leakyReLu")
                        or m.call(LEAKY_RELU_BACKWARD, grad, result, negative_slope, True),),
                 local=LEAKY_RELU.local)
HARDSIGMOID = Op("hardsigmoid", elementwise=True, functional="hardsigmoid", dtype=R.floating,
                 forward=lambda a: np.clip(a / 6 + 0.5, 0.0, 1.0).astype(np.result_type(a)),
                 saves=("self",),
                 sym=_sym(lambda sp, x: sp.Max(0, sp.Min(1, x / 6 + sp.Rational(1, 2)))),
                 grads=(lambda m, grad, self: m.call(HARDSIGMOID_BACKWARD, grad, self),),
                 expr="hardsigmoid")
HARDSWISH = Op("hardswish", elementwise=True, functional="hardswish", dtype=R.floating,
               forward=lambda a: a * np.clip(a + 3, 0.0, 6.0) / 6,
               saves=("self",),
               sym=_sym(lambda sp, x: x * sp.Max(0, sp.Min(6, x + 3)) / 6),
               grads=(lambda m, grad, self: m.call(HARDSWISH_BACKWARD, grad, self),),
               expr="hardswish")

# -- exponential ---------------------------------------------------------------------------


def _elu(a, alpha, scale, input_scale):
    return np.where(a > 0, a * scale, np.expm1(a * input_scale) * (alpha * scale))


ELU = Op("elu", elementwise=True,
         functional="elu", attrs=("alpha", "scale", "input_scale"), dtype=R.floating, forward=_elu,
         saves=("alpha", "input_scale", "scale", "self"),
         sym=_sym(lambda sp, x, al, sc, ins:
                  _piecewise(sp, x > 0, sc * x, sc * al * (sp.exp(x * ins) - 1))),
         grads=(lambda m, grad, alpha, input_scale, scale, self:
                m.call(ELU_BACKWARD, grad, self, alpha, scale, input_scale, False),),
         local=("[{self} > 0] + α·exp({self})·[{self} ≤ 0]",), expr="elu",
         expr_args=(1.0, 1, 1))
ELU_ = Op("elu", 1, attrs=("alpha", "scale", "input_scale"), dtype=R.floating,
          forward=_elu, saves=("alpha", "input_scale", "result", "scale"), sym=ELU.sym,
          # (from the result: exp(x * input_scale) = result / (alpha * scale) + 1)
          grads=(lambda m, grad, alpha, input_scale, result, scale:
                 _refuse_negative(alpha, "elu")
                 or m.call(ELU_BACKWARD, grad, result, alpha, scale, input_scale, True),),
          local=ELU.local)
CELU = Op("celu", elementwise=True, functional="celu", attrs=("alpha",), dtype=R.floating,
          forward=lambda a, alpha: np.where(a > 0, a, np.expm1(a / alpha) * alpha),
          saves=("alpha", "self"),
          sym=_sym(lambda sp, x, al: _piecewise(sp, x > 0, x, al * (sp.exp(x / al) - 1))),
          grads=(lambda m, grad, alpha, self:
                 m.call(ELU_BACKWARD, grad, self, alpha, 1.0, 1.0 / alpha, False),),
          local=("[{self} > 0] + exp({self}/α)·[{self} ≤ 0]",), expr="celu",
          expr_args=(1.0,))
CELU_ = Op("celu", 1, attrs=("alpha",), dtype=R.floating, forward=CELU.forward,
           saves=("alpha", "result"), sym=CELU.sym,
           grads=(lambda m, grad, alpha, result:
                  _refuse_negative(alpha, "elu")
                  or m.call(ELU_BACKWARD, grad, result, alpha, 1.0, 1.0 / alpha, True),),
           local=CELU.local)

# -- smooth --------------------------------------------------------------------------------


def _gelu(a, approximate):
    if approximate == "tanh":
        return 0.5 * a * (1 + np.tanh(_GELU_K * (a + _GELU_C * a ** 3)))
    return 0.5 * a * (1 + ERF.forward(a / math.sqrt(2.0)))


def _gelu_sym(sp, x, approximate):
    if approximate == "tanh":
        k = sp.sqrt(2 / sp.pi)
        return x * (1 + sp.tanh(k * (x + sp.Rational(44715, 1000000) * x ** 3))) / 2
    return x * (1 + sp.erf(x / sp.sqrt(2))) / 2


GELU = Op("gelu", elementwise=True,
          functional="gelu", attrs=("approximate",), dtype=R.floating, forward=_gelu,
          saves=("approximate", "self"), sym=_sym(_gelu_sym),
          grads=(lambda m, grad, approximate, self:
                 m.call(GELU_BACKWARD, grad, self, approximate),),
          expr="gelu", expr_args=("none",))
SILU = Op("silu", elementwise=True,
          functional="silu", dtype=R.floating, forward=lambda a: a / (1 + np.exp(-a)),
          saves=("self",), sym=_sym(lambda sp, x: x / (1 + sp.exp(-x))),
          grads=(lambda m, grad, self: _silu_grad(m, grad, self),),
          expr=("silu", "swish"))


def _silu_grad(m, grad, self):
    s = m.call(SIGMOID, self)
    return grad * s * (1 + self * (1 - s))


def _softplus(a, beta, threshold):
    return np.where(a * beta > threshold, a, np.logaddexp(0, a * beta) / beta)


SOFTPLUS = Op("softplus", elementwise=True,
              functional="softplus", attrs=("beta", "threshold"), dtype=R.floating,
              forward=_softplus,
              saves=("beta", "self", "threshold"),
              sym=_sym(lambda sp, x, b, t:
                       _piecewise(sp, x * b > t, x, sp.log(1 + sp.exp(b * x)) / b)),
              grads=(lambda m, grad, beta, self, threshold:
                     m.call(SOFTPLUS_BACKWARD, grad, self, beta, threshold),),
              # (in the expression language softplus is the function of mathematics: the
              # threshold, numerics past which log(1 + exp(x)) is x to rounding, is off)
              expr="softplus", expr_args=(1, float("inf")))
MISH = Op("mish", elementwise=True, functional="mish", dtype=R.floating,
          forward=lambda a: a * np.tanh(np.logaddexp(0, a)), saves=("self",),
          sym=_sym(lambda sp, x: x * sp.tanh(sp.log(1 + sp.exp(x)))),
          grads=(lambda m, grad, self: _mish_grad(m, grad, self),),
          local=("tanh(sp) + {self}·σ({self})(1 - tanh²(sp))",), expr="mish")


def _mish_grad(m, grad, self):
    # PyTorch's infinitely_differentiable_mish_backward: tanh(log1p(exp(x))), no threshold
    t = m.call(TANH, m.call(LOG1P, m.call(EXP, self)))
    return grad * (t + self * m.call(SIGMOID, self) * (1 - t * t))


def _buffer(arrays, attrs):
    # PyTorch's CPU kernel keeps exp(-|x|); the rule needs none of it (nor SymPy's side)
    a = arrays[0]
    return a if getattr(a, "dtype", None) == object else np.exp(-np.abs(a))


LOG_SIGMOID = Op("log_sigmoid", elementwise=True, dtype=R.floating, node="LogSigmoidBackward0",
                 forward=lambda a: np.minimum(a, 0) - np.log1p(np.exp(-np.abs(a))),
                 saves=("self", "buffer"), derive={"buffer": _buffer},
                 sym=_sym(lambda sp, x: -sp.log(1 + sp.exp(-x))),
                 grads=(lambda m, grad, self, buffer: m.call(LOG_SIGMOID_BACKWARD, grad, self),),
                 functional="logsigmoid",
                 expr=("logsigmoid", "log_sigmoid"))


# -- their gradients as ops of their own ----------------------------------------------------
# As in PyTorch, each first derivative is one op (hardtanh_backward, elu_backward, ...), so
# that a graph built with create_graph=True has PyTorch's nodes (HardtanhBackwardBackward0)
# and stays connected to the input even where the second derivative is zero.  Their own
# gradients are PyTorch's double-backward formulas (derivatives.yaml).
def _between(x, lo, hi):
    return (x > lo) & (x < hi)


HARDTANH_BACKWARD = Op(
    "hardtanh_backward", inputs=("grad_output", "self"), attrs=("min_val", "max_val"),
    forward=lambda g, x, lo, hi: np.where(_between(x, lo, hi), g, 0.0).astype(
        np.result_type(g, x)),
    saves=("max_val", "min_val", "self"),
    sym=_sym(lambda sp, g, x, lo, hi: _piecewise(sp, sp.And(x > lo, x < hi), g, 0), 2),
    grads=(lambda m, grad, max_val, min_val, self:
           m.call(HARDTANH_BACKWARD, grad, self, min_val, max_val),
           lambda m, grad, max_val, min_val, self: m.zeros_like(grad)),
    doc="grad_output where min_val < self < max_val")


def _leaky(g, x, slope, is_result):
    return np.where(x > 0, g, g * slope)


LEAKY_RELU_BACKWARD = Op(
    "leaky_relu_backward", inputs=("grad_output", "self"),
    attrs=("negative_slope", "self_is_result"), forward=_leaky,
    saves=("negative_slope", "self"),
    sym=_sym(lambda sp, g, x, s, r: _piecewise(sp, x > 0, g, s * g), 2),
    grads=(lambda m, grad, negative_slope, self:
           m.call(LEAKY_RELU_BACKWARD, grad, self, negative_slope, False),
           lambda m, grad, negative_slope, self: m.zeros_like(grad)),
    doc="grad_output, times negative_slope where self <= 0")


def _elu_backward(g, x, alpha, scale, input_scale, is_result):
    if is_result:  # (x is the result: exp(input * input_scale) = x / (alpha * scale) + 1)
        return np.where(x > 0, g * scale, g * input_scale * (x + alpha * scale))
    with np.errstate(over="ignore"):
        return np.where(x > 0, g * scale,
                        g * (input_scale * scale * alpha) * np.exp(x * input_scale))


def _elu_double(m, grad, alpha, grad_output, input_scale, is_result, scale, self_or_result):
    # PyTorch's elu_double_backward: times the mask (x < 0), so NaN stays NaN
    x = self_or_result
    inner = m.mul_scalar(grad * grad_output, input_scale)
    if is_result:
        return inner * m.call(LT, x, 0)
    return m.call(ELU_BACKWARD, inner, x, alpha, scale, input_scale, False) * m.call(LT, x, 0)


ELU_BACKWARD = Op(
    "elu_backward", inputs=("grad_output", "self_or_result"),
    attrs=("alpha", "scale", "input_scale", "is_result"), dtype=R.floating,
    forward=_elu_backward,
    saves=("alpha", "grad_output", "input_scale", "is_result", "scale", "self_or_result"),
    sym=_sym(lambda sp, g, x, al, sc, ins, r: _piecewise(
        sp, x > 0, g * sc, g * ins * (x + al * sc) if r else g * ins * sc * al * sp.exp(x * ins)),
        2),
    grads=(lambda m, grad, alpha, grad_output, input_scale, is_result, scale, x:
           m.call(ELU_BACKWARD, grad, x, alpha, scale, input_scale, is_result),
           _elu_double),
    local=("[x > 0]·scale + α·exp(x)·[x ≤ 0]", "α·exp(x)·[x < 0]·grad_output"),
    doc="elu's gradient, from the input or (is_result) the output")


_SQRT_HALF = math.sqrt(0.5)
_PDF = 1 / math.sqrt(2 * math.pi)


def _gelu_backward(g, x, approximate):
    if approximate == "tanh":
        u = _GELU_K * (x + _GELU_C * x ** 3)
        t = np.tanh(u)
        du = _GELU_K * (1 + 3 * _GELU_C * x * x)
        return g * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * du)
    return g * (0.5 * (1 + ERF.forward(x * _SQRT_HALF)) + x * _PDF * np.exp(-0.5 * x * x))


def _gelu_double(m, grad, approximate, grad_output, self):
    x = self
    gg = grad * grad_output
    if approximate == "tanh":
        t = m.call(TANH, m.mul_scalar(x + m.mul_scalar(x * x * x, _GELU_C), _GELU_K))
        du = m.mul_scalar(m.add_scalar(m.mul_scalar(x * x, 3 * _GELU_C), 1), _GELU_K)
        ddu = m.mul_scalar(x, 6 * _GELU_C * _GELU_K)
        sech2 = 1 - t * t
        return gg * (sech2 * du + m.mul_scalar(x * sech2 * (ddu - m.mul_scalar(t * du * du, 2)),
                                               0.5))
    pdf = m.mul_scalar(m.call(EXP, m.mul_scalar(x * x, -0.5)), _PDF)
    return gg * (m.mul_scalar(pdf, 2) - x * x * pdf)


GELU_BACKWARD = Op(
    "gelu_backward", inputs=("grad_output", "self"), attrs=("approximate",),
    dtype=R.floating, forward=_gelu_backward, saves=("approximate", "grad_output", "self"),
    sym=_sym(lambda sp, g, x, a: g * _gelu_derivative(sp, x, a), 2),
    grads=(lambda m, grad, approximate, grad_output, self:
           m.call(GELU_BACKWARD, grad, self, approximate), _gelu_double),
    local=("Φ({self}) + {self}·φ({self})", "(2 - {self}²)·φ({self})·grad_output"),
    doc="gelu's gradient")


def _gelu_derivative(sp, x, approximate):
    u = sp.Dummy("u")
    return sp.diff(_gelu_sym(sp, u, approximate), u).subs(u, x)


def _softplus_backward(g, x, beta, threshold):
    z = x * beta
    with np.errstate(over="ignore"):
        return np.where(z > threshold, g, g / (1 + np.exp(-z)))


def _softplus_double(m, grad, beta, grad_output, self, threshold):
    # PyTorch's softplus_double_backward: sigmoid_backward times the mask, so NaN stays NaN
    z = m.mul_scalar(self, beta)
    return m.mul_scalar(m.call(SIGMOID_BACKWARD, grad * grad_output, m.call(SIGMOID, z))
                        * m.call(LT, z, threshold), beta)


SOFTPLUS_BACKWARD = Op(
    "softplus_backward", inputs=("grad_output", "self"), attrs=("beta", "threshold"),
    dtype=R.floating, forward=_softplus_backward,
    saves=("beta", "grad_output", "self", "threshold"),
    sym=_sym(lambda sp, g, x, b, t: _piecewise(sp, x * b > t, g, g / (1 + sp.exp(-b * x))),
             2),
    grads=(lambda m, grad, beta, grad_output, self, threshold:
           m.call(SOFTPLUS_BACKWARD, grad, self, beta, threshold), _softplus_double),
    local=("σ(β{self})", "β·σ'(β{self})·grad_output"), doc="softplus's gradient")


HARDSWISH_BACKWARD = Op(
    "hardswish_backward", inputs=("grad_output", "self"), dtype=R.floating,
    # (NaN takes the middle branch, as in PyTorch's vectorized kernel)
    forward=lambda g, x: np.where(x <= -3, 0.0, np.where(x >= 3, g, g * (x / 3 + 0.5))).astype(
        np.result_type(g, x)),
    saves=("grad_output", "self"),
    sym=_sym(lambda sp, g, x: sp.Piecewise((0, x <= -3), (g * (x / 3 + sp.Rational(1, 2)),
                                                          x < 3), (g, True)), 2),
    grads=(lambda m, grad, grad_output, self: m.call(HARDSWISH_BACKWARD, grad, self),
           lambda m, grad, grad_output, self:
           m.call(WHERE, m.call(LOGICAL_AND, m.call(GT, self, -3.0), m.call(LT, self, 3.0)),
                   m.div_scalar(grad * grad_output, 3.0), 0.0)),
    local=("[-3 < {self} < 3](2{self} + 3)/6 + [{self} ≥ 3]", "[|{self}| < 3]/3·grad_output"),
    doc="hardswish's gradient")


_NO_DOUBLE = not_implemented("derivative for aten::hardsigmoid_backward is not implemented",
                             RuntimeError)


# PyTorch has no second derivative of hardsigmoid: its gradient's node is "NotImplemented".
HARDSIGMOID_BACKWARD = Op(
    "hardsigmoid_backward", inputs=("grad_output", "self"), node="NotImplemented",
    dtype=R.floating,
    forward=lambda g, x: np.where(_between(x, -3.0, 3.0), g / 6, 0.0).astype(
        np.result_type(g, x)),
    sym=_sym(lambda sp, g, x: _piecewise(sp, sp.And(x > -3, x < 3), g / 6, 0), 2),
    grads=(_NO_DOUBLE, _NO_DOUBLE),
    local=("[|{self}| < 3]/6", "—"), doc="hardsigmoid's gradient (no second derivative)")


def _log_sigmoid_backward(g, x):
    # PyTorch's CPU kernel, from z = exp(-|x|): 1 - z/(1+z) below 0, z/(1+z) above
    if np.result_type(x).kind != "f":
        return g / (1 + np.exp(x))
    z = np.exp(-np.abs(x))
    return g * np.where(x < 0, 1 - z / (1 + z), z / (1 + z))


def _log_sigmoid_double(m, grad, buffer, grad_output, self):
    z = m.call(SIGMOID, self)
    return grad * grad_output * m.add_scalar(z, -1) * z


LOG_SIGMOID_BACKWARD = Op(
    "log_sigmoid_backward", inputs=("grad_output", "self"), dtype=R.floating,
    forward=lambda g, x: _log_sigmoid_backward(g, x),
    saves=("buffer", "grad_output", "self"), derive={"buffer": lambda arrays, attrs:
                                                     _buffer(arrays[1:], attrs)},
    sym=_sym(lambda sp, g, x: g / (1 + sp.exp(x)), 2),
    grads=(lambda m, grad, buffer, grad_output, self: m.call(LOG_SIGMOID_BACKWARD, grad, self),
           _log_sigmoid_double),
    local=("σ(-{self})", "-σ({self})(1 - σ({self}))·grad_output"),
    doc="log_sigmoid's gradient")

POINTWISE.register(True, HARDTANH_BACKWARD, LEAKY_RELU_BACKWARD, ELU_BACKWARD, GELU_BACKWARD,
                   SOFTPLUS_BACKWARD, HARDSWISH_BACKWARD, LOG_SIGMOID_BACKWARD)


# -- forward mode (symgrad.ops.jvp): how each op's JVP is derived -----------------------
from . import jvp as _fwd  # noqa: E402
from .tables import JVP as _JVP  # noqa: E402

_JVP.register(_fwd.ELEMENT_WISE, LEAKY_RELU_, ELU_, CELU_, HARDTANH_BACKWARD, LEAKY_RELU_BACKWARD,
              ELU_BACKWARD, GELU_BACKWARD, SOFTPLUS_BACKWARD, HARDSWISH_BACKWARD,
              LOG_SIGMOID_BACKWARD)
_JVP.register(_fwd.unsupported("hardsigmoid_backward"), HARDSIGMOID_BACKWARD)
