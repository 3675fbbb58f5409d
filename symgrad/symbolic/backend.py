"""The SymPy backend: the op table's gradient rules on object arrays of SymPy expressions.

The same rules that run on numpy arrays (:data:`symgrad.ir.backends.NUMPY`) run here on
symbols, which is how the symbolic layer differentiates a recorded graph.
"""
from __future__ import annotations

import numpy as np

from ..ir.backends import _Numpy
from ..ops.kernels import sym_first_true, sympy_function

__all__ = ["SYMPY"]


class _Sympy(_Numpy):
    """Gradient rules on numpy object arrays of SymPy expressions (the symbolic layer).

    An op a rule calls runs as its ``sym`` mapping says (a comparison gives an indicator
    ``Piecewise((1, a > b), (0, True))`` so that rules may do arithmetic with it as they
    do with numpy's booleans), and ``where``'s mapping turns indicators back into
    ``Piecewise`` branches.

    Examples
    --------
    >>> import sympy
    >>> x = sympy.Symbol("x")
    >>> from symgrad import ops
    >>> SYMPY.call(ops.COS, np.array([x, 2 * x], dtype=object))
    array([cos(x), cos(2*x)], dtype=object)
    >>> SYMPY.call(ops.WHERE, SYMPY.call(ops.GT, x, 0), x, 0.0)
    Piecewise((x, x > 0), (0, True))
    """

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
    def cast(a, d):
        return a


SYMPY = _Sympy()
