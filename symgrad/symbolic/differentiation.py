"""Every derivative of an expression at once: symbolic, and by reverse mode at a point.

:func:`derivatives` is what ``symgrad diff`` shows: the partial derivatives in closed
form (symbolic reverse mode on the graph, simplified within a time budget), their values
by reverse mode at a point checked against the closed forms, and on request the Hessian
(order 2) or each scalar variable's pure derivative of a higher order, both symbolic
and by reverse mode run again on the recorded backward graph (``create_graph=True``).

Examples
--------
>>> d = derivatives("x**3 * y", at={"x": 1, "y": 2}, order=2)
>>> d.symbolic["x"], d.gradient["x"], d.agree
(3*x**2*y, 6.0, True)
>>> d.hessian.symbolic
Matrix([
[ 6*x*y, 3*x**2],
[3*x**2,      0]])
>>> d.hessian.value.tolist(), d.hessian.agree
([[12.0, 3.0], [3.0, 0.0]], True)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
import sympy as sp

from ..ops.dtypes import float64
from ..api.tensor import tensor
from ..autograd import grad
from ..autograd.functional import hessian
from ..errors import SymgradError
from .bridge import GradientProgram
from .budget import check_expression, closed_form_ops
from .expression import DerivativeSizeError, EvaluationError, Expression, parse
from .shapes import placeholder, resolve_shapes
from .tidy import tidy_all
from .hessians import hessian_text
from .vectors import NoVectorForm, vector_text

__all__ = ["derivatives", "Derivatives", "HigherDerivative", "Hessian", "DerivativeError",
           "OutsideDomain"]


class DerivativeError(SymgradError, ValueError):
    """Derivatives that cannot be taken: a variable the expression does not have, an
    output that is not a scalar, an order the variables' shapes do not allow.

    ``argument`` names the argument of :func:`derivatives` at fault (``"wrt"``,
    ``"order"``), or is None.
    """

    def __init__(self, message: str, argument: str | None = None) -> None:
        super().__init__(message)
        self.argument = argument


class OutsideDomain(DerivativeError):
    """The expression is not defined at the point; ``cause`` says where and why."""

    def __init__(self, cause: EvaluationError) -> None:
        super().__init__(f"not defined at the point: {cause.pretty()}", "at")
        self.cause = cause


@dataclass
class Hessian:
    """Second derivatives over the elements of the variables differentiated against.

    ``symbols`` are the elements (rows and columns, in order), ``symbolic`` the matrix,
    ``value`` the matrix by reverse mode twice at the point and ``agree`` whether it
    equals ``symbolic`` there (both None without a complete point); ``blocks`` the
    Hessian's blocks in matrix form.
    """

    symbols: list
    symbolic: sp.Matrix
    value: np.ndarray | None = None
    agree: bool | None = None
    #: ``(x, y) -> d²f/dx dy`` in matrix form (``A + A.T``; ``I`` the identity), or None
    #: where it has none (a matrix variable, a step, a function it cannot follow).
    blocks: dict | None = None


@dataclass
class HigherDerivative:
    """A scalar variable's pure derivative of ``order``: symbolic, and by reverse mode
    ``order`` times at the point (``value``, ``agree``: None without a point)."""

    order: int
    symbolic: Any
    value: float | None = None
    agree: bool | None = None


class Derivatives:
    """The result of :func:`derivatives`.

    Attributes
    ----------
    expression : Expression
    wrt : list of str
        The variables differentiated against.
    at : dict
        The point given (possibly partial).
    shapes : dict
        Values fixing every variable's shape (the given ones, else 0.5 in a shape that
        fits; see :meth:`Expression.shape_values`).
    complete : bool
        Whether ``at`` gives every variable (then the values below are there).
    program : GradientProgram or None
        The chain rule as a straight-line program (None without variables).
    symbolic : dict
        Variable -> closed form (SymPy expression, or Matrix for a vector or matrix).
    symbols : dict
        Variable -> object array of its element symbols (``x_0, x_1``).
    value : Tensor or None
        The expression's value at the point.
    gradient, symbolic_at : dict or None
        Variable -> the gradient by reverse mode / the closed form, at the point.
    agrees : dict or None
        Variable -> whether the two agree; ``agree`` is whether all do.
    hessian : Hessian or None
        With ``order=2``.
    higher : dict or None
        With ``order >= 3``: variable -> :class:`HigherDerivative`.
    """

    def __init__(self, expression: Expression, wrt: list, at: dict, shapes: dict,
                 program: GradientProgram | None, symbolic: dict,
                 labels: dict | None = None) -> None:
        self.expression = expression
        self.wrt = wrt
        self.at = at
        self.shapes = shapes
        self.labels = labels or {}  # variable -> its sizes' names (--shape x=n)
        self.complete = all(v in at for v in expression.variables)
        self.program = program
        self.symbolic = symbolic
        self.symbols = {n: program.leaves[n][0] for n in wrt} if program else {}
        self.value = self.gradient = self.symbolic_at = self.agrees = None
        self.hessian: Hessian | None = None
        self.higher: dict | None = None
        self._function = None

    @property
    def agree(self) -> bool | None:
        """Whether reverse mode agrees with every closed form (None without a point)."""
        return None if self.agrees is None else all(self.agrees.values())

    def function(self):
        """The expression in SymPy, over the element symbols."""
        if self._function is None:
            # sympify: also a number when the output is constant or a leaf (f = x).
            self._function = sp.sympify(self.expression.to_sympy(**self.shapes))
        return self._function

    def vector(self, name: str) -> str | None:
        """The gradient with respect to ``name`` in vector form (``cos(dot(x, y)) * y``),
        true for every size, where the expression language can write it, else None."""
        return self.vector_form(name)[0]

    def vector_form(self, name: str) -> tuple:
        """``(vector form, None)``, or ``(None, why there is none)``."""
        try:
            return vector_text(self.expression, name, self.shapes, self.labels), None
        except (NoVectorForm, ValueError) as err:
            return None, str(err)


#: The largest closed form built to be shown (operations; 800 is about 4,000 characters,
#: a screenful): past it a gradient is given by the chain rule's straight-line program,
#: whose size is linear in the graph's (a closed form repeats inner expressions: a tanh
#: chain of depth 16 has 760 operations, of depth 32 2,800, so building and printing it
#: would make the command's time grow quadratically with depth).
MAX_SHOWN_OPS = 800


def derivatives(expr: str | Expression, wrt: Sequence[str] | None = None,
                at: Mapping | None = None, order: int = 1,
                timeout: float = 10.0, simplify: str = "auto",
                shapes: Mapping | None = None) -> Derivatives:
    """Partial derivatives of a scalar expression, symbolic and by reverse mode.

    Parameters
    ----------
    expr : str or Expression
        A scalar expression, such as ``"5*x**2 + 3*sin(y)"``.
    wrt : sequence of str, optional
        The variables to differentiate against (default: all of them).
    at : mapping, optional
        Variable -> value (number, nested list, array): the point, and the shapes of
        vector and matrix variables.  Values at the point need every variable.
    order : int
        2 adds the Hessian; 3 and more add each (scalar) variable's pure derivative
        of that order.
    timeout : float
        Seconds ``sympy.simplify`` may take (in a child process) where ``simplify`` asks
        for it; past them the tidied form is kept.
    simplify : {"auto", "full", "none"}
        Where ``sympy.simplify`` runs after the cheap tidying of every result
        (:mod:`~symgrad.symbolic.tidy`): on small expressions only, on all, nowhere.
    shapes : mapping, optional
        Variable -> shape, for variables without a value: a tuple of sizes and names
        (``("n", "m")``: see :func:`~symgrad.symbolic.shapes.resolve_shapes`).

    Returns
    -------
    Derivatives

    Raises
    ------
    DerivativeError
        A variable in ``wrt`` the expression does not have, an output that is not a
        scalar, ``order >= 3`` for a vector or matrix variable.  :class:`OutsideDomain`
        (a subclass) when the expression is not defined at the point;
        :class:`~symgrad.symbolic.expression.EvaluationError` when the values' shapes
        do not fit.

    Examples
    --------
    >>> d = derivatives("sin(dot(x, y))", wrt=["x"], at={"x": [1, 2], "y": [0, 0]})
    >>> d.symbolic["x"]
    Matrix([
    [y_0*cos(x_0*y_0 + x_1*y_1)],
    [y_1*cos(x_0*y_0 + x_1*y_1)]])
    >>> d.vector("x"), d.gradient["x"].tolist(), d.agree
    ('cos(dot(x, y)) * y', [0.0, 0.0], True)
    >>> derivatives("x**4", order=3).higher["x"].symbolic
    24*x
    """
    f = expr if isinstance(expr, Expression) else parse(expr)
    at = dict(at or {})
    names = chosen_variables(f, wrt)
    sized, labels = resolve_shapes(shapes)
    check_expression(f, sized, at, names, hessian=order == 2)  # (before any work)
    shapes = f.shape_values({**{k: placeholder(s) for k, s in sized.items() if k not in at},
                             **at})
    labels = {k: v for k, v in labels.items() if k not in at}
    if all(v in at for v in f.variables):
        bad = f.domain_error(**at)
        if bad is not None:
            raise OutsideDomain(bad)
    out = f.trace(**shapes)
    if out.numel() != 1:
        raise DerivativeError(f"the expression's value has shape {list(out.shape)}; "
                              "derivatives need a scalar (wrap it in sum(...))")
    if order > 2 and names:
        bad_vars = [n for n in names if np.ndim(shapes[n]) != 0]
        if bad_vars:
            raise DerivativeError(f"order {order}: derivatives of order 3 and more are for "
                                  f"scalar variables; {', '.join(bad_vars)} is not a scalar",
                                  "order")
    program = f.gradient_program(names, **shapes) if names else None
    d = Derivatives(f, names, at, shapes, program,
                    program.closed_form(simplify, timeout,
                                        closed_form_ops(program, MAX_SHOWN_OPS)) if program
                    else {}, labels)
    if d.complete:
        d.value = f.evaluate(**at)
        d.gradient = f.gradient(**at)
        d.symbolic_at = program.evaluate(at) if program else {}
        d.agrees = {n: bool(_agree(d.gradient[n], d.symbolic_at[n])) for n in names}
    if order == 2 and names:
        d.hessian = _hessian(d, simplify, timeout)
    if order > 2 and names:
        d.higher = {n: _higher(f, n, at, shapes, order, simplify, timeout) for n in names}
    return d


def chosen_variables(f: Expression, wrt: Sequence[str] | None) -> list:
    """The variables to differentiate by: ``wrt`` (each once, in order), or all of
    ``f``'s; :class:`DerivativeError` for a name that is not a variable of ``f``."""
    names = list(dict.fromkeys(wrt or ())) or list(f.variables)
    for n in names:
        if n not in f.variables:
            raise DerivativeError(f"wrt {n}: not a variable of the expression (variables: "
                                  f"{', '.join(f.variables) or 'none'})", "wrt")
    return names


def _agree(numeric, symbolic) -> bool:
    return np.allclose(numeric, symbolic, rtol=1e-9, atol=1e-12, equal_nan=True)


def _tidied(e, simplify: str, timeout: float):
    """A SymPy expression or Matrix through :func:`~symgrad.symbolic.tidy.tidy_all`."""
    if isinstance(e, sp.MatrixBase):
        a = np.empty(e.shape, dtype=object)
        a[...] = [[e[i, j] for j in range(e.shape[1])] for i in range(e.shape[0])]
        return sp.Matrix(tidy_all({"": a}, simplify, timeout)[""].tolist())
    return tidy_all({"": e}, simplify, timeout)[""][()]


def _float(e) -> float:
    """A SymPy number as a float; nan for what has no real value (a kink, a complex)."""
    try:
        return float(e)
    except (TypeError, ValueError):
        return float("nan")


def _hessian(d: Derivatives, simplify: str, timeout: float) -> Hessian:
    """Symbolic and reverse-mode second derivatives over the variables' elements."""
    names = d.wrt
    syms = [s for n in names for s in np.ravel(d.symbols[n])]
    h = Hessian(syms, _tidied(sp.hessian(d.function(), syms), simplify, timeout))
    h.blocks = {}
    scalars = all(np.ndim(d.shapes[n]) == 0 for n in names)
    for i, x in enumerate(names):
        for j, y in enumerate(names):
            if scalars:  # (each block is one element: no matrix form to build)
                h.blocks[x, y] = str(h.symbolic[i, j])
                continue
            try:
                h.blocks[x, y] = hessian_text(d.expression, x, y, d.shapes, d.labels)
            except (NoVectorForm, ValueError, TypeError, RuntimeError):
                h.blocks[x, y] = None
    if not d.complete:
        return h
    leaves = d.expression.leaves(**d.at)
    fixed = {k: t for k, t in leaves.items() if k not in names}

    def func(*xs):
        return d.expression.evaluate({**fixed, **dict(zip(names, xs))})
    blocks = hessian(func, tuple(leaves[n] for n in names))
    sizes = [leaves[n].numel() for n in names]
    rows = []
    for i, n in enumerate(names):
        row = [np.asarray(blocks[i][j].detach().numpy(), dtype=np.float64).reshape(
            sizes[i], sizes[j]) for j in range(len(names))]
        rows.append(np.concatenate(row, axis=1))
    h.value = np.concatenate(rows, axis=0)
    point = {}
    for n, (symbols, _) in d.program.leaves.items():
        v = np.asarray(d.at[n], dtype=np.float64)
        for ix in np.ndindex(*symbols.shape):
            point[symbols[ix]] = float(v[ix])
    at_point = np.array([[_float(e) for e in row] for row in
                         h.symbolic.xreplace(point).evalf().tolist()],
                        dtype=np.float64).reshape(h.value.shape)
    h.agree = bool(_agree(h.value, at_point))
    return h


def _higher(f: Expression, n: str, at: dict, shapes: dict, order: int, simplify: str,
            timeout: float) -> HigherDerivative:
    """The pure derivative of ``order`` (>= 3) with respect to the scalar ``n``."""
    try:
        e = _tidied(f.diff(n, simplify=False, order=order, **shapes), simplify, timeout)
    except DerivativeSizeError as err:
        raise DerivativeError(str(err), "order") from None
    r = HigherDerivative(order, e)
    if all(v in at for v in f.variables):
        leaves = f.leaves(**at)
        g = f.evaluate(leaves)
        for _ in range(order):
            if g is leaves[n] or g.grad_fn is None:  # d/dx x = 1, then zeros
                g = tensor(1.0 if g is leaves[n] else 0.0, dtype=float64)
                continue
            (g,) = grad(g, leaves[n], create_graph=True, materialize_grads=True)
        sym = _float(e.xreplace({sp.Symbol(k, real=True): sp.Float(float(v))
                                 for k, v in at.items()}).evalf())
        r.value = np.asarray(g.detach().numpy(), dtype=np.float64)
        r.agree = bool(_agree(g.detach().item(), sym))
    return r
