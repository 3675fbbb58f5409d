"""numpy helpers shared by the op families, and the SymPy mappings of ``sym``."""
from __future__ import annotations

from typing import Callable

import math

import numpy as np

from .tables import ROLES



def _dims(dim, ndim):
    """Normalise ``dim`` (int, tuple or None) to a sorted tuple of non-negative axes."""
    if dim is None or (isinstance(dim, (tuple, list)) and not dim):
        return tuple(range(ndim))  # dim=() reduces everything, as PyTorch
    if ndim == 0:
        return ()  # a 0-d tensor reduced over dim 0 or -1 is itself, as in PyTorch
    if isinstance(dim, int):
        dim = (dim,)
    return tuple(sorted(d % ndim for d in dim))


_FLOAT_SCALARS = (np.float64, np.float32, np.float16)


def _raise(error: Exception):
    raise error


# ``sym`` mappings run on numpy object arrays of SymPy expressions.  numpy applies its
# arithmetic, sums and matmul to such arrays itself, but not ``np.exp`` or comparisons:
# the ops that need those say how in ``sym``.
def _sympy():
    """SymPy, imported the first time an op works on symbols."""
    import sympy  # late: numeric work (import symgrad as torch) never loads SymPy
    return sympy


def sympy_function(name: str) -> Callable:
    """The SymPy function an elementwise op's ``sym`` names.

    SymPy's own function of that name, or a definition of the few that SymPy lacks
    (``reciprocal``, ``sigmoid``, ``relu``, ``clamp``).  Extra arguments are the op's
    attributes.

    Examples
    --------
    >>> import sympy
    >>> x = sympy.Symbol("x", real=True)
    >>> sympy_function("sigmoid")(x)
    1/(1 + exp(-x))
    >>> sympy_function("clamp")(x, None, 1.0)
    Min(1.0, x)
    """
    sympy = _sympy()

    def clamp(x, lo=None, hi=None):
        if lo is not None:
            x = sympy.Max(x, lo)
        return x if hi is None else sympy.Min(x, hi)

    extra = {"reciprocal": lambda x: 1 / x, "sigmoid": lambda x: 1 / (1 + sympy.exp(-x)),
             "relu": lambda x: sympy.Max(x, 0), "clamp": clamp}
    return extra[name] if name in extra else getattr(sympy, name)


_FLAT: dict = {}


def sym_flat(name: str) -> Callable:
    """SymPy's rounding function ``name`` (``floor``, ``ceiling``) with derivative 0, as
    PyTorch gives it (SymPy leaves ``Derivative(floor(x), x)`` unevaluated); ``trunc``
    (towards zero) and ``round`` (half to even) are defined from ``floor``.

    Examples
    --------
    >>> import sympy
    >>> x = sympy.Symbol("x", real=True)
    >>> sympy.diff(sym_flat("floor")(x), x), sym_flat("trunc")(-1.5)
    (0, -1)
    """
    if name not in _FLAT:
        sympy = _sympy()
        base = {"floor": sympy.floor, "ceiling": sympy.ceiling}.get(name)
        if base is None:
            class base(sympy.Function):  # noqa: N801 - named as SymPy prints it
                @classmethod
                def eval(cls, x):
                    if x.is_number and x.is_real:
                        if name == "trunc":
                            return sympy.sign(x) * sympy.floor(abs(x))
                        return sympy.Integer(round(float(x)))  # Python's: half to even
        _FLAT[name] = type(name, (base,), {"fdiff": lambda self, argindex=1: sympy.S.Zero})
    return _FLAT[name]


def _sym_map(name, *arrays):
    """The SymPy function ``name`` applied elementwise (broadcasting) to object arrays."""
    return np.frompyfunc(sympy_function(name), len(arrays), 1)(*arrays)


def _sym_reduce(name, a, dim, keepdim):
    """Reduce an object array with the SymPy function ``name`` (``Max``) over ``dim``."""
    f = np.frompyfunc(sympy_function(name), 2, 1)
    axes = _dims(dim, np.ndim(a))
    out = np.asarray(a, dtype=object)
    for ax in axes:
        out = f.reduce(out, axis=ax, keepdims=True)
    return out if keepdim else out.reshape(tuple(
        n for i, n in enumerate(np.shape(a)) if i not in axes))


def sym_indicator(cond):
    """A SymPy condition as a number: 1 or 0 when it is decided, else
    ``Piecewise((1, cond), (0, True))`` (so that rules compute with it as with masks)."""
    sp = _sympy()
    if cond is sp.true or cond is True:
        return sp.S.One
    if cond is sp.false or cond is False:
        return sp.S.Zero
    return sp.Piecewise((sp.S.One, cond), (sp.S.Zero, True))


def sym_first_true(mask, dim):
    """Indicators of the first true entry along ``dim``: ``m_i * prod_{j<i}(1 - m_j)``."""
    m = np.moveaxis(np.asarray(mask, dtype=object), dim, 0)
    out = np.empty(m.shape, dtype=object)
    none_before = _sympy().S.One
    for i in range(m.shape[0]):
        out[i] = m[i] * none_before
        none_before = none_before * (1 - m[i])
    return np.moveaxis(out, 0, dim)


def _strides(a) -> tuple:
    """A numpy array's strides in elements, as PyTorch reports them."""
    a = np.asarray(a)
    return tuple(st // a.itemsize for st in a.strides)


#: The largest power of numbers that exact (symbolic) arithmetic computes, in decimal
#: digits of the result: ``2**x`` is fine, ``0.5**(10**100)`` would have 10**100 digits
#: (and Python prints integers of at most 4,300 digits).
MAX_EXACT_DIGITS = 4000


def check_exact_power(base, exponent) -> None:
    """Raise ``ValueError`` for a power of two numbers whose exact value would be too large
    (SymPy evaluates a ``Pow`` of numbers at once, with no bound on time or memory)."""
    b_num = getattr(base, "is_number", False) or isinstance(base, (int, float))
    e_num = getattr(exponent, "is_number", False) or isinstance(exponent, (int, float))
    if not (b_num and e_num) or base in (0, 1, -1) or getattr(base, "is_Float", False) \
            or isinstance(base, float):
        return
    try:
        size = abs(float(exponent))
        p, q = getattr(base, "p", None), getattr(base, "q", None)
        digits = size * math.log10(max(abs(int(p)), abs(int(q)))) if p is not None else size
    except (TypeError, ValueError, OverflowError):
        digits = math.inf
    if digits > MAX_EXACT_DIGITS:
        shown = "more than 10**15" if digits > 1e15 else f"about {digits:,.0f}"
        raise ValueError(f"a power of numbers too large to compute exactly ({shown} digits; "
                         f"the limit is {MAX_EXACT_DIGITS:,})")


def sym_condition(c):
    """The condition an indicator (or a number, or a boolean) stands for."""
    sp = _sympy()
    if isinstance(c, (bool, np.bool_)):
        return sp.true if c else sp.false
    c = sp.sympify(c)
    if isinstance(c, sp.logic.boolalg.Boolean):
        return c
    if (isinstance(c, sp.Piecewise) and len(c.args) == 2 and c.args[0][0] == 1
            and c.args[1][0] == 0 and c.args[1][1] is sp.true):
        return c.args[0][1]
    if c.is_number:
        return sp.true if c != 0 else sp.false
    return sp.Ne(c, 0)


def _where1(cond, a, b):
    sp = _sympy()
    # Rules write 0.0 for "no gradient": keep it an exact zero.
    a, b = (sp.Integer(int(v)) if isinstance(v, float) and v.is_integer() else v
            for v in (a, b))
    c = sym_condition(cond)
    if c is sp.true:
        return sp.sympify(a)
    if c is sp.false:
        return sp.sympify(b)
    return sp.Piecewise((a, c), (b, True))


def sym_where(cond, a, b):
    """``where`` on object arrays of SymPy expressions: ``Piecewise`` branches, the
    condition a boolean, a SymPy condition or an indicator (:func:`sym_indicator`).

    Examples
    --------
    >>> import sympy
    >>> x = sympy.Symbol("x")
    >>> sym_where(sym_relation("Gt")(x, 0), x, 0.0)
    Piecewise((x, x > 0), (0, True))
    """
    return np.frompyfunc(_where1, 3, 1)(cond, a, b)


def sym_relation(name: str) -> Callable:
    """A comparison on object arrays of SymPy expressions: SymPy's relation ``name``
    (``"Gt"``) per element, as an indicator (:func:`sym_indicator`), so that rules compute
    with it as they do with numpy's booleans."""
    def relation(a, b):
        rel = getattr(_sympy(), name)
        return np.frompyfunc(lambda x, y: sym_indicator(rel(x, y)), 2, 1)(a, b)
    return relation


def sym_connective(name: str) -> Callable:
    """``And`` / ``Or`` of indicators on object arrays, as an indicator."""
    def connective(a, b):
        join = getattr(_sympy(), name)
        both = lambda x, y: sym_indicator(join(sym_condition(x), sym_condition(y)))  # noqa: E731
        return np.frompyfunc(both, 2, 1)(a, b)
    return connective


def total(m, g, dim, keepdim):
    """``g`` summed in a gradient rule as the Tensor front end records it: over everything
    (SumBackward0) when ``dim`` is None and no dim is kept, else along ``dim`` as a tuple
    (SumBackward1)."""
    if dim is None and not keepdim:
        return m.call(ROLES.total, g)
    if dim is not None:
        dim = (dim,) if isinstance(dim, int) else tuple(dim)
    return m.call(ROLES.total_along, g, dim, keepdim)
