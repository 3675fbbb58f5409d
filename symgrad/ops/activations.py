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
from .elementwise import SIGMOID, TANH
from .functions import ERF
from .kernels import _sympy
from .record import Op

__all__ = ["HARDTANH", "LEAKY_RELU", "LEAKY_RELU_", "ELU", "ELU_", "CELU", "CELU_", "GELU",
           "SILU", "MISH", "SOFTPLUS", "HARDSIGMOID", "HARDSWISH", "LOG_SIGMOID"]

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
HARDTANH = Op("hardtanh", functional="hardtanh", attrs=("min_val", "max_val"), dtype=R.same,
              forward=lambda a, lo, hi: np.where(a < lo, lo, np.where(a > hi, hi, a)),
              saves=("max_val", "min_val", "self"),
              sym=_sym(lambda sp, x, lo, hi: sp.Max(lo, sp.Min(x, hi))),
              grads=(lambda m, grad, max_val, min_val, self:
                     m.where(m.logical_and(m.gt(self, min_val), m.lt(self, max_val)),
                             grad, 0.0),),
              local=("[min < {self} < max]",), expr="hardtanh", expr_args=(-1.0, 1.0))
LEAKY_RELU = Op("leaky_relu", functional="leaky_relu", attrs=("negative_slope",), dtype=R.same,
                forward=lambda a, s: np.where(a > 0, a, a * s),
                saves=("negative_slope", "self"),
                sym=_sym(lambda sp, x, s: _piecewise(sp, x > 0, x, s * x)),
                grads=(lambda m, grad, negative_slope, self:
                       m.where(m.gt(self, 0), grad, m.mul_scalar(grad, negative_slope)),),
                local=("[{self} > 0] + slope·[{self} ≤ 0]",), expr="leaky_relu",
                expr_args=(0.01,))
# In place (F.leaky_relu(x, inplace=True)): the result is saved, as PyTorch does.
LEAKY_RELU_ = Op("leaky_relu", 1, attrs=("negative_slope",), dtype=R.same,
                 forward=LEAKY_RELU.forward, saves=("negative_slope", "result"),
                 sym=LEAKY_RELU.sym,
                 grads=(lambda m, grad, negative_slope, result:
                        _refuse_negative(negative_slope, "leakyReLu")
                        or m.where(m.gt(result, 0), grad, m.mul_scalar(grad, negative_slope)),),
                 local=LEAKY_RELU.local)
HARDSIGMOID = Op("hardsigmoid", functional="hardsigmoid", dtype=R.floating,
                 forward=lambda a: np.clip(a / 6 + 0.5, 0.0, 1.0).astype(np.result_type(a)),
                 saves=("self",),
                 sym=_sym(lambda sp, x: sp.Max(0, sp.Min(1, x / 6 + sp.Rational(1, 2)))),
                 grads=(lambda m, grad, self:
                        m.where(m.logical_and(m.gt(self, -3.0), m.lt(self, 3.0)),
                                m.div_scalar(grad, 6), 0.0),),
                 local=("[|{self}| < 3]/6",), expr="hardsigmoid")
HARDSWISH = Op("hardswish", functional="hardswish", dtype=R.floating,
               forward=lambda a: a * np.clip(a + 3, 0.0, 6.0) / 6,
               saves=("self",),
               sym=_sym(lambda sp, x: x * sp.Max(0, sp.Min(6, x + 3)) / 6),
               grads=(lambda m, grad, self:
                      m.where(m.le(self, -3.0), 0.0,
                              m.where(m.lt(self, 3.0),
                                      grad * m.add_scalar(m.div_scalar(self, 3), 0.5),
                                      grad)),),
               local=("[-3 < {self} < 3](2{self} + 3)/6 + [{self} ≥ 3]",), expr="hardswish")

# -- exponential ---------------------------------------------------------------------------


def _elu(a, alpha, scale, input_scale):
    return np.where(a > 0, a * scale, np.expm1(a * input_scale) * (alpha * scale))


ELU = Op("elu", functional="elu", attrs=("alpha", "scale", "input_scale"), dtype=R.floating, forward=_elu,
         saves=("alpha", "input_scale", "scale", "self"),
         sym=_sym(lambda sp, x, al, sc, ins:
                  _piecewise(sp, x > 0, sc * x, sc * al * (sp.exp(x * ins) - 1))),
         grads=(lambda m, grad, alpha, input_scale, scale, self:
                m.where(m.gt(self, 0), m.mul_scalar(grad, scale),
                        grad * m.mul_scalar(m.exp(m.mul_scalar(self, input_scale)),
                                            input_scale * scale * alpha)),),
         local=("[{self} > 0] + α·exp({self})·[{self} ≤ 0]",), expr="elu",
         expr_args=(1.0, 1, 1))
ELU_ = Op("elu", 1, attrs=("alpha", "scale", "input_scale"), dtype=R.floating,
          forward=_elu, saves=("alpha", "input_scale", "result", "scale"), sym=ELU.sym,
          # (from the result: exp(x * input_scale) = result / (alpha * scale) + 1)
          grads=(lambda m, grad, alpha, input_scale, result, scale:
                 _refuse_negative(alpha, "elu")
                 or m.where(m.gt(result, 0), m.mul_scalar(grad, scale),
                         grad * m.mul_scalar(m.add_scalar(result, alpha * scale),
                                             input_scale)),),
          local=ELU.local)
CELU = Op("celu", functional="celu", attrs=("alpha",), dtype=R.floating,
          forward=lambda a, alpha: np.where(a > 0, a, np.expm1(a / alpha) * alpha),
          saves=("alpha", "self"),
          sym=_sym(lambda sp, x, al: _piecewise(sp, x > 0, x, al * (sp.exp(x / al) - 1))),
          grads=(lambda m, grad, alpha, self:
                 m.where(m.gt(self, 0), grad, grad * m.exp(m.div_scalar(self, alpha))),),
          local=("[{self} > 0] + exp({self}/α)·[{self} ≤ 0]",), expr="celu",
          expr_args=(1.0,))
CELU_ = Op("celu", 1, attrs=("alpha",), dtype=R.floating, forward=CELU.forward,
           saves=("alpha", "result"), sym=CELU.sym,
           grads=(lambda m, grad, alpha, result:
                  _refuse_negative(alpha, "elu")
                  or m.where(m.gt(result, 0), grad,
                          grad * m.add_scalar(m.div_scalar(result, alpha), 1)),),
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


def _gelu_grad(m, grad, approximate, self):
    if approximate == "tanh":
        inner = m.mul_scalar(self + m.mul_scalar(self ** 3, _GELU_C), _GELU_K)
        t = m.call(TANH, inner)
        dinner = m.mul_scalar(m.add_scalar(m.mul_scalar(self * self, 3 * _GELU_C), 1), _GELU_K)
        return grad * (m.mul_scalar(m.add_scalar(t, 1), 0.5)
                       + m.mul_scalar(self * (1 - t * t) * dinner, 0.5))
    cdf = m.mul_scalar(m.add_scalar(m.call(ERF, m.mul_scalar(self, 1 / math.sqrt(2.0))), 1), 0.5)
    pdf = m.mul_scalar(m.exp(m.mul_scalar(self * self, -0.5)), 1 / math.sqrt(2 * math.pi))
    return grad * (cdf + self * pdf)


GELU = Op("gelu", functional="gelu", attrs=("approximate",), dtype=R.floating, forward=_gelu,
          saves=("approximate", "self"), sym=_sym(_gelu_sym), grads=(_gelu_grad,),
          local=("Φ({self}) + {self}·φ({self})",), expr="gelu", expr_args=("none",))
SILU = Op("silu", functional="silu", dtype=R.floating, forward=lambda a: a / (1 + np.exp(-a)),
          saves=("self",), sym=_sym(lambda sp, x: x / (1 + sp.exp(-x))),
          grads=(lambda m, grad, self: _silu_grad(m, grad, self),),
          local=("σ({self})(1 + {self}(1 - σ({self})))",), expr=("silu", "swish"))


def _silu_grad(m, grad, self):
    s = m.call(SIGMOID, self)
    return grad * s * (1 + self * (1 - s))


def _softplus(a, beta, threshold):
    return np.where(a * beta > threshold, a, np.logaddexp(0, a * beta) / beta)


SOFTPLUS = Op("softplus", functional="softplus", attrs=("beta", "threshold"), dtype=R.floating, forward=_softplus,
              saves=("beta", "self", "threshold"),
              sym=_sym(lambda sp, x, b, t:
                       _piecewise(sp, x * b > t, x, sp.log(1 + sp.exp(b * x)) / b)),
              grads=(lambda m, grad, beta, self, threshold:
                     m.where(m.gt(m.mul_scalar(self, beta), threshold), grad,
                             grad * m.call(SIGMOID, m.mul_scalar(self, beta))),),
              # (in the expression language softplus is the function of mathematics: the
              # threshold, numerics past which log(1 + exp(x)) is x to rounding, is off)
              local=("σ(β{self})",), expr="softplus", expr_args=(1, float("inf")))
MISH = Op("mish", functional="mish", dtype=R.floating,
          forward=lambda a: a * np.tanh(np.logaddexp(0, a)), saves=("self",),
          sym=_sym(lambda sp, x: x * sp.tanh(sp.log(1 + sp.exp(x)))),
          grads=(lambda m, grad, self: _mish_grad(m, grad, self),),
          local=("tanh(sp) + {self}·σ({self})(1 - tanh²(sp))",), expr="mish")


def _mish_grad(m, grad, self):
    t = m.call(TANH, m.call(SOFTPLUS, self, 1, 20))
    return grad * (t + self * m.call(SIGMOID, self) * (1 - t * t))


def _buffer(arrays, attrs):
    # PyTorch's CPU kernel keeps exp(-|x|); the rule needs none of it (nor SymPy's side)
    a = arrays[0]
    return a if getattr(a, "dtype", None) == object else np.exp(-np.abs(a))


LOG_SIGMOID = Op("log_sigmoid", dtype=R.floating, node="LogSigmoidBackward0",
                 forward=lambda a: np.minimum(a, 0) - np.log1p(np.exp(-np.abs(a))),
                 saves=("self", "buffer"), derive={"buffer": _buffer},
                 sym=_sym(lambda sp, x: -sp.log(1 + sp.exp(-x))),
                 grads=(lambda m, grad, self, buffer: grad * m.call(SIGMOID, -self),),
                 local=("σ(-{self})",), functional="logsigmoid",
                 expr=("logsigmoid", "log_sigmoid"))
