"""The functions of a calculus course: inverse trigonometric and hyperbolic functions,
exponentials and logarithms in other bases, error functions, rounding.

Gradients as PyTorch's ``derivatives.yaml`` writes them; a rule that needs another op of
the table calls it through the backend (``m.call(COSH, self)``), so that the same rule
gives numbers, a recorded graph and SymPy expressions.
"""
from __future__ import annotations

import math

import numpy as np

from . import dtype_rules as R
from .compare import EQ, GE, LE, LOGICAL_AND
from .elementwise import EXP, WHERE
from .kernels import _sympy, sym_flat
from .arithmetic import RECIPROCAL, fused_multiply_add
from .record import Op, not_implemented

__all__ = ["ASIN", "ACOS", "ATAN", "ATAN2", "SINH", "COSH", "ASINH", "ACOSH", "ATANH",
           "ASINH_", "ACOSH_", "ATANH_",
           "EXP2", "EXPM1", "LOG2", "LOG10", "LOG1P", "RSQRT", "ERF", "ERFC", "ERFINV",
           "HYPOT", "XLOGY", "XLOGY_SELF_NUMBER", "XLOGY_OTHER_NUMBER", "LERP",
           "LERP_TENSOR", "FLOOR", "CEIL", "ROUND", "ROUND_DECIMALS", "TRUNC", "FRAC",
           "CLAMP_MIN", "CLAMP_MAX", "REMAINDER_SCALAR", "REMAINDER", "REMAINDER_NUMBER_SELF",
           "FMOD_SCALAR", "FMOD", "FLOOR_DIVIDE", "FLOOR_DIVIDE_SCALAR",
           "FLOOR_DIVIDE_NUMBER_SELF", "DIV_MODE", "NAN_TO_NUM", "ISNAN", "ISINF", "ISFINITE"]

# Drawings: an op's local derivative is its rule printed (symgrad.ops.formula); a
# ``local=`` below overrides it where the printed rule reads worse than the label:
# named constants (ln 2, 2/√π) that the rules hold as floats, and the rounding ops' 0.

_LN2, _LN10 = math.log(2.0), math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)

_erf_kernel = np.vectorize(math.erf, otypes=[np.float64])
_erfc_kernel = np.vectorize(math.erfc, otypes=[np.float64])


def _erf(a):
    return _erf_kernel(a)


def _erfc(a):
    return _erfc_kernel(a)


def _erfinv(y):
    # Newton's method on erf from a close start (Winitzki's approximation): three steps
    # reach float64 rounding on (-1, 1); +-1 give +-inf and |y| > 1 NaN, as PyTorch.
    y = np.asarray(y, dtype=np.float64)
    a = 0.147
    ln = np.log1p(-np.minimum(y * y, 1.0))
    t = 2.0 / (math.pi * a) + ln / 2.0
    x = np.sign(y) * np.sqrt(np.maximum(np.sqrt(t * t - ln / a) - t, 0.0))
    inside = np.abs(y) < 1
    for _ in range(3):
        # erf(x) - y, through erfc in the tails (1 - y is exact there, erf(x) - y is not)
        residual = np.where(np.abs(y) < 0.5, _erf_kernel(x) - y,
                            np.where(y > 0, (1 - y) - _erfc_kernel(x),
                                     _erfc_kernel(-x) - (1 + y)))
        step = residual / (_TWO_OVER_SQRT_PI * np.exp(-x * x))
        x = np.where(inside, x - step, x)
    x = np.where(np.abs(y) == 1, np.sign(y) * np.inf, np.where(np.abs(y) > 1, np.nan, x))
    return np.where(y == 0, y, x)  # -0.0 keeps its sign, as PyTorch's


def _overflowing(name: str):
    """sinh or cosh as PyTorch's kernels give them: +-inf once exp(|a|) overflows (numpy's
    are finite up to log(2 * max))."""
    fn = getattr(np, name)

    def forward(a):
        out = fn(a)
        if np.result_type(a).kind == "f":
            with np.errstate(over="ignore"):
                big = np.isinf(np.exp(np.abs(a))) & np.isfinite(a)
            out = np.where(big, np.copysign(np.inf, out), out)[()]
        return out
    return forward


def _xlogy(a, b):
    # 0 * log(0) is 0; NaN in ``other`` stays NaN (PyTorch's xlogy).
    return np.where(np.isnan(b), np.nan, np.where(a == 0, 0.0, a * np.log(b)))


def _sym_xlogy(a, b):
    sp = _sympy()
    return np.frompyfunc(lambda x, y: sp.Piecewise((0, sp.Eq(x, 0)), (x * sp.log(y), True)),
                         2, 1)(a, b)


def _xlogy_self_grad(m, grad, self, other, op):
    # PyTorch: xlogy(grad, other), but 0 where self == 0 and other <= 0.
    g = m.call(op, grad, other)
    if isinstance(other, (int, float)):
        return m.call(WHERE, m.call(EQ, self, 0), 0.0, g) if other <= 0 else g
    return m.call(WHERE, m.call(LOGICAL_AND, m.call(EQ, self, 0), m.call(LE, other, 0)), 0.0, g)


def _round_decimals(a, decimals):
    return np.round(a, decimals)


def _frac(a):
    return a - np.trunc(a)


def _unary(name: str, sym, grad, *, saves=("self",), domain=(-np.inf, np.inf), local: str,
           node: str | None = None, dtype=R.floating, alias: tuple = (), expr=None,
           **names) -> Op:
    """A unary floating function with its names on every surface: ``torch.name``,
    ``x.name()``, ``x.name_()`` and, unless ``expr`` says otherwise, the expression
    language (aliases such as ``arcsin`` for both)."""
    return Op(name, dtype=dtype, elementwise=True,
              forward=_FORWARD.get(name) or getattr(np, _NUMPY.get(name, name)),
              saves=saves, sym=sym, domain=domain, grads=(grad,),
              local=(local,), node=node, method=(name,) + alias, function=(name,) + alias,
              inplace=name + "_" if name not in _NO_INPLACE_GRAD else None,
              expr=(name,) + alias if expr is None else expr, **names)


def _no_inplace_grad(op: Op) -> Op:
    """``op``'s in-place form as PyTorch has it: it runs, but its derivative is not
    implemented (PyTorch's error at ``backward()``)."""
    message = f"the derivative for 'inplace version of {op.name}' is not implemented."
    return Op(op.name, 1, forward=op.forward, dtype=op.dtype,
              grads=(not_implemented(message),), domain=op.domain, sym=op.sym,
              local=op.local, inplace=op.name + "_", doc=message)


# PyTorch 2.13 has no derivative for these in place (x.asinh_() then backward() raises).
_NO_INPLACE_GRAD = ("asinh", "acosh", "atanh")


_NUMPY = {"asin": "arcsin", "acos": "arccos", "atan": "arctan", "asinh": "arcsinh",
          "acosh": "arccosh", "atanh": "arctanh"}
_FORWARD = {"erf": _erf, "erfc": _erfc, "erfinv": _erfinv, "rsqrt": lambda a: 1 / np.sqrt(a),
            "frac": _frac, "sinh": _overflowing("sinh"), "cosh": _overflowing("cosh")}

# -- inverse trigonometric and hyperbolic -------------------------------------------------
# As derivatives.yaml writes them (rsqrt, self.pow(2)): the same NaNs at +-inf and the
# same overflow in second derivatives.
ASIN = _unary("asin", "asin",
              lambda m, grad, self: grad * m.call(RSQRT, -self * self + 1),
              domain=(-1, 1), local="1/√(1 - {self}²)", alias=("arcsin",))
ACOS = _unary("acos", "acos",
              lambda m, grad, self: grad * -m.call(RSQRT, -self * self + 1),
              domain=(-1, 1), local="-1/√(1 - {self}²)", alias=("arccos",))
ATAN = _unary("atan", "atan", lambda m, grad, self: grad / (self * self + 1),
              local="1/(1 + {self}²)", alias=("arctan",))
SINH = _unary("sinh", "sinh", lambda m, grad, self: grad * m.call(COSH, self),
              local="cosh({self})")
COSH = _unary("cosh", "cosh", lambda m, grad, self: grad * m.call(SINH, self),
              local="sinh({self})")
ASINH = _unary("asinh", "asinh", lambda m, grad, self: grad * m.call(RSQRT, self ** 2 + 1),
               local="1/√({self}² + 1)", alias=("arcsinh",))
ACOSH = _unary("acosh", "acosh", lambda m, grad, self: grad * m.call(RSQRT, self * self - 1),
               domain=(1, np.inf), local="1/√({self}² - 1)", alias=("arccosh",))
ATANH = _unary("atanh", "atanh", lambda m, grad, self: grad * 1 / (1 - self ** 2),
               domain=(-1, 1), local="1/(1 - {self}²)", alias=("arctanh",))
ASINH_ = _no_inplace_grad(ASINH)
ACOSH_ = _no_inplace_grad(ACOSH)
ATANH_ = _no_inplace_grad(ATANH)

# -- exponentials and logarithms ----------------------------------------------------------
EXP2 = _unary("exp2", lambda a: 2 ** a,
              lambda m, grad, result: m.mul_scalar(grad * result, _LN2),
              saves=("result",), local="2^{self}·ln 2")
EXPM1 = _unary("expm1", lambda a: np.frompyfunc(lambda e: _sympy().exp(e) - 1, 1, 1)(a),
               lambda m, grad, result: grad * (result + 1), saves=("result",),
               local="exp({self})")
LOG2 = _unary("log2", lambda a: np.frompyfunc(lambda e: _sympy().log(e, 2), 1, 1)(a),
              lambda m, grad, self: grad / m.mul_scalar(self, _LN2),
              domain=(0, np.inf), local="1/({self}·ln 2)")
LOG10 = _unary("log10", lambda a: np.frompyfunc(lambda e: _sympy().log(e, 10), 1, 1)(a),
               lambda m, grad, self: grad / m.mul_scalar(self, _LN10),
               domain=(0, np.inf), local="1/({self}·ln 10)")
LOG1P = _unary("log1p", lambda a: np.frompyfunc(lambda e: _sympy().log(1 + e), 1, 1)(a),
               lambda m, grad, self: grad / (self + 1), node="Log1PBackward0",
               domain=(-1, np.inf), local="1/(1 + {self})")
RSQRT = _unary("rsqrt", lambda a: np.frompyfunc(lambda e: 1 / _sympy().sqrt(e), 1, 1)(a),
               lambda m, grad, result: m.mul_scalar(grad * result ** 3, -0.5),
               saves=("result",), domain=(0, np.inf), local="-1/(2{self}^{3/2})")

# -- error functions ----------------------------------------------------------------------
ERF = _unary("erf", "erf",
             lambda m, grad, self: m.mul_scalar(m.call(EXP, -(self ** 2)), _TWO_OVER_SQRT_PI) * grad,
             local="2/√π·exp(-{self}²)")
ERFC = _unary("erfc", "erfc",
              lambda m, grad, self: m.mul_scalar(m.call(EXP, -(self ** 2)), -_TWO_OVER_SQRT_PI) * grad,
              local="-2/√π·exp(-{self}²)")
ERFINV = _unary("erfinv", "erfinv",
                lambda m, grad, self: m.mul_scalar(m.call(EXP, m.call(ERFINV, self) ** 2),
                                                   math.sqrt(math.pi) / 2) * grad,
                domain=(-1, 1), local="√π/2·exp(erfinv({self})²)")

# -- rounding: zero gradients, as PyTorch (their graphs stay connected) -------------------


def _flat(name: str, sym_name: str, alias: tuple = ()) -> Op:
    return Op(name, elementwise=True, forward=getattr(np, name), sym=lambda a: np.frompyfunc(
        sym_flat(sym_name), 1, 1)(a), grads=(lambda m, grad: m.zeros_like(grad),),
        local=("0",), method=(name,) + alias, function=(name,) + alias,
        inplace=name + "_", expr=(name,) + alias)


FLOOR = _flat("floor", "floor")
CEIL = _flat("ceil", "ceiling")
TRUNC = _flat("trunc", "trunc", alias=("fix",))
ROUND = _flat("round", "round")
ROUND_DECIMALS = Op("round", 1, attrs=("decimals",), forward=_round_decimals,
                    sym=lambda a, decimals: np.frompyfunc(sym_flat("round"), 1, 1)(a),
                    grads=(lambda m, grad: m.zeros_like(grad),), )
FRAC = _unary("frac", lambda a: a - np.frompyfunc(sym_flat("trunc"), 1, 1)(a),
              lambda m, grad: grad, saves=(), local="1", dtype=R.same,
              refuse={n: (NotImplementedError, f'"frac_cpu" not implemented for \'{c}\'')
                      for n, c in (("int64", "Long"), ("int32", "Int"), ("bool", "Bool"))})

def _atan2_recip(m, self, other):
    # PyTorch's atan2_backward: 1 / (self² + other²), and 0 where that sum is 0 (the
    # origin, or squares that underflow), so the gradient there is a signed zero.
    d = self * self + other * other
    return m.call(WHERE, m.call(EQ, d, 0), 0.0, m.call(RECIPROCAL, d))


# -- two operands -------------------------------------------------------------------------
ATAN2 = Op("atan2", inputs=("self", "other"), broadcasts=True, dtype=R.floating,
           forward=np.arctan2, saves=("self", "other"), sym="atan2",
           grads=(lambda m, grad, self, other: grad * other * _atan2_recip(m, self, other),
                  lambda m, grad, self, other: grad * -self * _atan2_recip(m, self, other)),
           local=("{other}/({self}² + {other}²)", "-{self}/({self}² + {other}²)"),
           method=("atan2", "arctan2"), function=("atan2", "arctan2"), inplace="atan2_",
           expr=("atan2", "arctan2"))
HYPOT = Op("hypot", inputs=("self", "other"), broadcasts=True, dtype=R.promote,
           forward=np.hypot, saves=("other", "result", "self"),
           sym=lambda a, b: np.frompyfunc(lambda x, y: _sympy().sqrt(x * x + y * y),
                                          2, 1)(a, b),
           grads=(lambda m, grad, other, result, self: grad * self / result,
                  lambda m, grad, other, result, self: grad * other / result),
           local=("{self}/hypot", "{other}/hypot"), commutative=True,
           method="hypot", function="hypot", inplace="hypot_", expr="hypot")
XLOGY = Op("xlogy", inputs=("self", "other"), broadcasts=True, dtype=R.floating,
           forward=_xlogy, saves=("other", "self"), sym=_sym_xlogy, domain=(0, np.inf),
           grads=(lambda m, grad, other, self: _xlogy_self_grad(m, grad, self, other, XLOGY),
                  lambda m, grad, other, self: grad * self / other),
           local=("log({other})", "{self}/{other}"))
# xlogy with a number for one operand: nodes of their own, as in PyTorch.
XLOGY_SELF_NUMBER = Op("xlogy", 1, inputs=("other",), attrs=("self",), dtype=R.floating,
                       forward=lambda b, a: _xlogy(a, b), saves=("other", "self"),
                       sym=lambda b, a: _sym_xlogy(a, b), domain=(0, np.inf),
                       grads=(lambda m, grad, other, self: m.mul_scalar(grad / other, self),),
                       local=("self/{other}",))
XLOGY_OTHER_NUMBER = Op("xlogy", 2, attrs=("other",), dtype=R.floating,
                        forward=_xlogy, saves=("other", "self"), sym=_sym_xlogy,
                        grads=(lambda m, grad, other, self:
                               _xlogy_self_grad(m, grad, self, other, XLOGY_OTHER_NUMBER),),
                        local=("log(other)",))
def _lerp(a, b, w):
    # PyTorch's vectorized lerp: fmadd(w, end - self, self) for |w| < 0.5, else
    # fmadd(w - 1, end - self, end) (exact at w = 1); NaN weights take the second form.
    if np.result_type(a, b, w).kind != "f" or np.result_type(a, b) == object:
        return a + w * (b - a)
    small = np.abs(w) < 0.5
    diff = b - a
    return np.where(small, fused_multiply_add(w, diff, a),
                    fused_multiply_add(w - 1, diff, b))[()]


LERP = Op("lerp", inputs=("self", "end"), attrs=("weight",), broadcasts=True,
          dtype=R.promote, forward=_lerp, saves=("weight",),
          grads=(lambda m, grad, weight: m.mul_scalar(grad, 1 - weight),
                 lambda m, grad, weight: m.mul_scalar(grad, weight)),
          )
LERP_TENSOR = Op("lerp", 1, inputs=("self", "end", "weight"), broadcasts=True,
                 dtype=R.promote, forward=_lerp,
                 saves=("end", "self", "weight"),
                 grads=(lambda m, grad, end, self, weight: grad * (1 - weight),
                        lambda m, grad, end, self, weight: grad * weight,
                        lambda m, grad, end, self, weight: grad * (end - self)),
                 )
CLAMP_MIN = Op("clamp_min", attrs=("min",), forward=lambda a, lo: np.where(a < lo, lo, a),
               dtype=R.clamp, saves=("min", "self"),
               sym=lambda a, lo: np.frompyfunc(lambda e: _sympy().Max(e, lo), 1, 1)(a),
               grads=(lambda m, grad, min, self: m.call(WHERE, m.call(GE, self, min), grad, 0.0),),
               method="clamp_min", function="clamp_min",
               inplace="clamp_min_")
CLAMP_MAX = Op("clamp_max", attrs=("max",), forward=lambda a, hi: np.where(a > hi, hi, a),
               dtype=R.clamp, saves=("max", "self"),
               sym=lambda a, hi: np.frompyfunc(lambda e: _sympy().Min(e, hi), 1, 1)(a),
               grads=(lambda m, grad, max, self: m.call(WHERE, m.call(LE, self, max), grad, 0.0),),
               method="clamp_max", function="clamp_max",
               inplace="clamp_max_")


# -- remainders and floor division, as PyTorch's CPU kernels ----------------------------


def _integer_divisor(a, b) -> bool:
    if np.result_type(a, b).kind in "iub" and np.any(np.asarray(b) == 0):
        raise RuntimeError("ZeroDivisionError")
    return np.result_type(a, b).kind in "iub"


def _fmod(a, b):
    if _integer_divisor(a, b) or np.result_type(a, b).kind != "f":
        return np.fmod(a, b)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out = np.fmod(a, b)
        # PyTorch's vectorized loop (two AVX2 vectors at a time, the tail element by
        # element) gives NaN where self / other overflows; its scalar tail does not.
        over = np.isinf(np.divide(a, b, dtype=out.dtype)) & np.isfinite(a) & np.isfinite(b)
    if over.any() and np.ndim(b) and np.ndim(out):
        chunk = 64 // out.dtype.itemsize
        vectorized = np.arange(out.size).reshape(out.shape) < out.size - out.size % chunk
        out = np.where(over & vectorized, np.nan, out)
    return out


def _remainder(a, b):
    # fmod, moved by b where its sign differs from b's (-4 % 2 is -0., as PyTorch's)
    mod = _fmod(a, b)
    return np.where((mod != 0) & ((np.asarray(b) < 0) != (mod < 0)), mod + b, mod)[()]


def _floor_divide(a, b):
    if _integer_divisor(a, b):
        return np.floor_divide(a, b)
    with np.errstate(divide="ignore", invalid="ignore"):
        mod = np.fmod(a, b)
        div = (a - mod) / b
        div = np.where((mod != 0) & ((np.asarray(b) < 0) != (mod < 0)), div - 1, div)
        floor = np.floor(div)
        floor = np.where(div - floor > 0.5, floor + 1, floor)
        out = np.where(div != 0, floor, np.copysign(0.0, a / b))
        return np.where(np.asarray(b) == 0, a / b, out)[()]


def _sym_floor(name):
    return lambda q: np.frompyfunc(sym_flat(name), 1, 1)(q)


def _trunc_divide(a, b):
    if _integer_divisor(a, b):
        q = np.floor_divide(a, b)
        return np.where((np.remainder(a, b) != 0) & ((np.asarray(a) < 0) != (np.asarray(b) < 0)),
                        q + 1, q)[()]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.trunc(np.true_divide(a, b))


# div with a rounding mode (DivBackward2): a step function, zero gradients; remainder's
# and fmod's gradients call it, as PyTorch's.
DIV_MODE = Op("div", 2, inputs=("self", "other"), attrs=("rounding_mode",), broadcasts=True,
              dtype=R.promote, saves=("other", "rounding_mode", "self"),
              forward=lambda a, b, mode: (_floor_divide if mode == "floor" else
                                          _trunc_divide)(a, b),
              sym=lambda a, b, mode: _sym_floor("floor" if mode == "floor" else "trunc")(a / b),
              grads=(lambda m, grad, other, rounding_mode, self: m.zeros_like(grad),
                     lambda m, grad, other, rounding_mode, self: m.zeros_like(grad)),
              local=("0", "0"), doc="self / other, rounded (floor or trunc)")


_BOOL = {"bool": (NotImplementedError, '"remainder_cpu" not implemented for \'Bool\'')}
_NO_GRAD = {name: not_implemented(f"derivative for aten::{name} is not implemented",
                                  RuntimeError) for name in ("remainder", "floor_divide")}

# derivatives.yaml: remainder.Scalar and fmod.Scalar: self: grad (nothing saved);
# remainder.Tensor: other: -grad * self.div(other, rounding_mode="floor"), fmod.Tensor the
# same with "trunc".
_MOD = []  # SymPy's Mod with PyTorch's derivatives, made when SymPy is first needed


def _sym_mod(a, b):
    """SymPy's ``Mod`` (``a - b*floor(a/b)`` on reals: the sign of ``b``, as remainder),
    differentiable as derivatives.yaml has it (d/da 1, d/db -floor(a/b); SymPy's own Mod
    leaves its derivative unevaluated)."""
    if not _MOD:
        sp = _sympy()

        class Mod(sp.Mod):
            def fdiff(self, argindex=1):
                p, q = self.args
                return sp.S.One if argindex == 1 else -sym_flat("floor")(p / q)

        _MOD.append(Mod)
    return np.frompyfunc(_MOD[0], 2, 1)(a, b)


REMAINDER_SCALAR = Op("remainder", attrs=("other",), dtype=R.pow_scalar, forward=_remainder,
                      sym=_sym_mod,
                      grads=(lambda m, grad: grad,), refuse=_BOOL, local=("1",), doc="self - other * floor(self / other)")
REMAINDER = Op("remainder", 1, inputs=("self", "other"), broadcasts=True, dtype=R.promote,
               forward=_remainder, saves=("other", "self"), refuse=_BOOL, expr="remainder",
               sym=_sym_mod,
               grads=(lambda m, grad, other, self: grad,
                      lambda m, grad, other, self: -grad * m.call(DIV_MODE, self, other, "floor")),
               local=("1", "-floor({self}/{other})"), doc="self - other * floor(self / other)")
# a number % a tensor: PyTorch records it without a derivative.
REMAINDER_NUMBER_SELF = Op("remainder", 2, inputs=("other",), attrs=("self",), dtype=R.rpow,
                           node="NotImplemented", forward=lambda b, a: _remainder(a, b),
                           refuse=_BOOL, grads=(_NO_GRAD["remainder"],), local=("—",),
                           doc="self % other, self a number")
FMOD_SCALAR = Op("fmod", attrs=("other",), dtype=R.pow_scalar, forward=_fmod,
                 sym=lambda a, b: a - b * _sym_floor("trunc")(a / b),
                 grads=(lambda m, grad: grad,), local=("1",),
                 refuse={"bool": (NotImplementedError,
                                  '"fmod_cpu" not implemented for \'Bool\'')},
                 doc="self - other * trunc(self / other)")
FMOD = Op("fmod", 1, inputs=("self", "other"), broadcasts=True, dtype=R.promote,
          forward=_fmod, saves=("other", "self"), expr="fmod",
          sym=lambda a, b: a - b * _sym_floor("trunc")(a / b),
          refuse={"bool": (NotImplementedError, '"fmod_cpu" not implemented for \'Bool\'')},
          grads=(lambda m, grad, other, self: grad,
                 lambda m, grad, other, self: -grad * m.call(DIV_MODE, self, other, "trunc")),
          local=("1", "-trunc({self}/{other})"), doc="self - other * trunc(self / other)")
_FLOOR_BOOL = {"bool": (NotImplementedError, '"div_floor_cpu" not implemented for \'Bool\'')}
FLOOR_DIVIDE = Op("floor_divide", inputs=("self", "other"), broadcasts=True, dtype=R.promote,
                  node="NotImplemented", forward=_floor_divide, refuse=_FLOOR_BOOL,
                  grads=(_NO_GRAD["floor_divide"], _NO_GRAD["floor_divide"]),
                  local=("—", "—"), doc="floor(self / other)")
FLOOR_DIVIDE_SCALAR = Op("floor_divide", 1, attrs=("other",), dtype=R.pow_scalar,
                         node="NotImplemented", forward=_floor_divide, refuse=_FLOOR_BOOL,
                         grads=(_NO_GRAD["floor_divide"],), local=("—",),
                         doc="floor(self / other)")
FLOOR_DIVIDE_NUMBER_SELF = Op("floor_divide", 2, inputs=("other",), attrs=("self",),
                              dtype=R.rpow, node="NotImplemented", refuse=_FLOOR_BOOL,
                              forward=lambda b, a: _floor_divide(a, b),
                              grads=(_NO_GRAD["floor_divide"],), local=("—",),
                              doc="floor(self / other), self a number")


def _nan_to_num(a, nan, posinf, neginf):
    a = np.asarray(a)
    if a.dtype.kind != "f":
        return np.array(a, copy=True)
    info = np.finfo(a.dtype)
    return np.nan_to_num(a, nan=0.0 if nan is None else nan,
                         posinf=info.max if posinf is None else posinf,
                         neginf=info.min if neginf is None else neginf)


NAN_TO_NUM = Op("nan_to_num", attrs=("nan", "posinf", "neginf"), forward=_nan_to_num,
                saves=("self",),
                grads=(lambda m, grad, self: grad * m.call(ISFINITE, self),),
                local=("[finite]",), doc="NaN, +inf and -inf of self replaced by numbers")

# The tests of values: no gradient (bool results).
ISNAN = Op("isnan", forward=np.isnan, dtype=R.boolean, method="isnan", function="isnan")
ISINF = Op("isinf", forward=np.isinf, dtype=R.boolean, method="isinf", function="isinf")
ISFINITE = Op("isfinite", forward=np.isfinite, dtype=R.boolean, method="isfinite",
              function="isfinite")


# -- forward mode (symgrad.ops.jvp): how each op's JVP is derived -----------------------
from . import jvp as _fwd  # noqa: E402
from .tables import JVP as _JVP  # noqa: E402

_JVP.register(_fwd.ELEMENT_WISE, ATAN2, HYPOT, XLOGY, XLOGY_SELF_NUMBER,
              XLOGY_OTHER_NUMBER, LERP, LERP_TENSOR, ROUND_DECIMALS, CLAMP_MIN, CLAMP_MAX)
# (no derivative in place, in PyTorch 2.13)
_JVP.register(_fwd.not_yet("asinh_"), ASINH_)
_JVP.register(_fwd.not_yet("acosh_"), ACOSH_)
_JVP.register(_fwd.not_yet("atanh_"), ATANH_)
_JVP.register(_fwd.ELEMENT_WISE, DIV_MODE, REMAINDER, FMOD, REMAINDER_SCALAR, FMOD_SCALAR, NAN_TO_NUM)
for _op in (REMAINDER_NUMBER_SELF, FLOOR_DIVIDE, FLOOR_DIVIDE_SCALAR, FLOOR_DIVIDE_NUMBER_SELF):
    _JVP.register(_fwd.not_yet(_op.name), _op)
