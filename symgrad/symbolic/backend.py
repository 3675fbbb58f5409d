"""The SymPy backend: the op table's gradient rules on object arrays of SymPy expressions.

The same rules that run on numpy arrays (:data:`symgrad.ir.backends.NUMPY`) run here on
symbols, which is how the symbolic layer differentiates a recorded graph.
"""
from __future__ import annotations

import numpy as np
import sympy

from ..ir.backends import _Numpy
from ..ops.kernels import sym_first_true, sym_indicator, sympy_function

__all__ = ["SYMPY"]


class _Sympy(_Numpy):
    """Gradient rules on numpy object arrays of SymPy expressions (the symbolic layer).

    Elementwise functions map to their SymPy counterparts.  A comparison gives an
    indicator ``Piecewise((1, a > b), (0, True))`` so that rules may do arithmetic with
    it as they do with numpy's booleans, and :meth:`where` turns indicators back into
    ``Piecewise`` branches.

    Examples
    --------
    >>> import sympy
    >>> x = sympy.Symbol("x")
    >>> SYMPY.cos(np.array([x, 2 * x], dtype=object))
    array([cos(x), cos(2*x)], dtype=object)
    >>> SYMPY.where(SYMPY.gt(x, 0), x, 0.0)
    Piecewise((x, x > 0), (0, True))
    """

    def __init__(self) -> None:
        self._sp = sympy
        for name, fn in (("cos", sympy.cos), ("sin", sympy.sin), ("exp", sympy.exp),
                         ("log", sympy.log), ("sign", sympy.sign), ("sgn", sympy.sign),
                         ("abs", sympy.Abs)):
            setattr(self, name, np.frompyfunc(fn, 1, 1))
        for name, rel in (("eq", sympy.Eq), ("gt", sympy.Gt), ("ge", sympy.Ge),
                          ("lt", sympy.Lt), ("le", sympy.Le)):
            setattr(self, name, np.frompyfunc(
                lambda a, b, rel=rel: sym_indicator(rel(a, b)), 2, 1))
        self.logical_and = np.frompyfunc(
            lambda a, b: sym_indicator(sympy.And(self._condition(a), self._condition(b))),
            2, 1)
        self.logical_or = np.frompyfunc(
            lambda a, b: sym_indicator(sympy.Or(self._condition(a), self._condition(b))),
            2, 1)
        self._where = np.frompyfunc(self._where1, 3, 1)

    def _condition(self, c):
        """The condition an indicator (or a number, or a boolean) stands for."""
        sp = self._sp
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

    def _where1(self, cond, a, b):
        sp = self._sp
        # Rules write 0.0 for "no gradient": keep it an exact zero.
        a, b = (sp.Integer(int(v)) if isinstance(v, float) and v.is_integer() else v
                for v in (a, b))
        c = self._condition(cond)
        if c is sp.true:
            return sp.sympify(a)
        if c is sp.false:
            return sp.sympify(b)
        return sp.Piecewise((a, c), (b, True))

    def where(self, cond, a, b):
        return self._where(cond, a, b)

    @staticmethod
    def call(op, *args):
        """Another op of the table on object arrays, as ``op.sym`` says: the SymPy function
        it names applied per element (attributes follow the operands), a callable on
        the arrays, or else the op's numpy forward itself."""
        n = len(args) if op.variadic else len(op.inputs)
        arrays, attrs = args[:n], args[n:]
        sym = op.sym
        if isinstance(sym, str):
            fn = sympy_function(sym)
            return np.frompyfunc(lambda *e: fn(*e, *attrs), n, 1)(*arrays)
        if callable(sym):
            return sym(*arrays, *attrs)
        return op.forward(*arrays, *attrs)

    first_true = staticmethod(sym_first_true)

    @staticmethod
    def value_selecting_backward(grad, dim, indicators, sizes, keepdim):
        # Symbolic indices are the indicators of the selected entries (ops._extreme_indices).
        if not tuple(sizes):
            return grad
        g = np.asarray(grad, dtype=object)
        return (g if keepdim else np.expand_dims(g, dim)) * indicators

    @staticmethod
    def _scatter(g, shape, index):
        out = np.zeros(shape, dtype=object)
        np.add.at(out, index, g)
        return out

    scatter = _scatter

    @staticmethod
    def cast(a, d):
        return a


SYMPY = _Sympy()
