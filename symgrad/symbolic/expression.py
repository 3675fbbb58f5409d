"""Expression text -> the graph IR: ``symgrad.parse("sin(x*y) + x")``.

The text is read by symgrad's own parser (:mod:`symgrad.parser`; never ``eval``,
``exec`` or ``sympify``).  :class:`Expression` holds the tree and its free variables;
evaluating it builds leaf tensors named after the variables and runs the tensor front
end, so a parsed expression produces exactly the IR that the same code written with
tensors would, and every layer (reverse mode, the SymPy bridge, drawings) works on it.

Examples
--------
>>> f = parse("5*x**2 + 3*sin(y)")
>>> f.variables
['x', 'y']
>>> f.evaluate(x=4, y=0)
tensor(80., dtype=torch.float64, grad_fn=<AddBackward0>)
>>> f.gradient(x=4, y=0)
{'x': 40.0, 'y': 3.0}
>>> f.to_sympy()
5*x**2 + 3*sin(y)
>>> f.diff("x")
10*x
"""
from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

import sympy as sp

from ..api import functional as F
from ..api.tensor import Tensor, dot, matmul, tensor
from ..autograd import grad, no_grad
from ..ops import tables as T
from ..ops.dtypes import float64
from . import parser as P
from .bridge import gradient_program, to_sympy
from .tangents import tangent_program
from .budget import check_expression, rank_choices
from .calls import call
from .shapes import placeholder, resolve_shapes
from .parser import ParseError
from .vectors import vector_gradient

__all__ = ["Expression", "EvaluationError", "parse", "placeholder", "resolve_shapes"]


class EvaluationError(ParseError):
    """An expression that parses but cannot be evaluated with the given values.

    Points at the column of the offending node (the operator, the function name), like
    a :class:`~symgrad.parser.ParseError`, and has the same ``pretty()`` caret form.

    Examples
    --------
    >>> try:
    ...     parse("x + dot(x, y)").evaluate(x=[1, 2], y=[1, 2, 3])
    ... except EvaluationError as err:
    ...     print(err.pretty())
    column 5: dot: inconsistent tensor size, expected tensor [2] and src [3] to have the \
same number of elements, but got 2 and 3 elements respectively
        x + dot(x, y)
            ^
    """


_CONSTANTS = {"pi": math.pi, "e": math.e}


def _value(v):
    """A user value (number, nested list, array, tensor) as float64 data."""
    if isinstance(v, Tensor):
        v = v.detach().numpy()
    if isinstance(v, str):
        v = P.parse_value(v)
    a = np.asarray(v, dtype=np.float64)
    return a


class Expression:
    """A parsed expression: the AST, its free variables, and ways to run it.

    Attributes
    ----------
    text : str
        The source text.
    tree : parser.Node
        The AST.
    variables : list of str
        Free variables in order of first appearance (``pi`` and ``e`` are constants).
    """

    def __init__(self, text: str, tree) -> None:
        self.text = text
        self.tree = tree
        self.variables = P.free_variables(tree)

    def __repr__(self) -> str:
        return f"Expression({self.text!r})"

    def __str__(self) -> str:
        return P.to_text(self.tree)

    # -- values --------------------------------------------------------------------------
    def _leaves(self, values: Mapping) -> dict:
        missing = [v for v in self.variables if v not in values]
        if missing:
            raise ValueError(f"no value given for {', '.join(missing)} (expression "
                             f"variables: {', '.join(self.variables) or 'none'})")
        extra = [k for k in values if k not in self.variables]
        if extra:
            raise ValueError(f"{', '.join(extra)} not in the expression (variables: "
                             f"{', '.join(self.variables) or 'none'})")
        return {name: tensor(_value(values[name]), dtype=float64, requires_grad=True,
                             name=name) for name in self.variables}

    def leaves(self, **values: Any) -> dict:
        """Fresh leaf tensors for every variable (float64, requiring grad, named after
        it), ready for :meth:`evaluate`; a value is needed for each variable.

        Examples
        --------
        >>> leaves = parse("x * y").leaves(x=2, y=[1, 2])
        >>> leaves["y"]
        tensor([1., 2.], dtype=torch.float64, requires_grad=True)
        """
        return self._leaves(values)

    def evaluate(self, leaves: Mapping | None = None, /, **values: Any):
        """Run the expression forward with the tensor front end; a traced tensor.

        Each variable becomes a float64 leaf tensor that requires grad and is named
        after the variable.  Values are numbers, nested lists, arrays or tensors.
        Alternatively pass one mapping ``{variable: tensor}`` of ready leaf tensors,
        which are used as they are (so their ``.grad`` and graph are yours).

        Raises
        ------
        EvaluationError
            When an operation fails (shape mismatch, ...); it points at the column.
        """
        if leaves is None:
            leaves = self._leaves(values)
        return self._run(leaves)

    def domain_error(self, **values: Any) -> "EvaluationError | None":
        """The first operation whose value is not finite at the point, or None.

        Finds where an expression leaves its domain at given values (``log`` of a
        negative number, division by zero, ``inf - inf``): the error points at the
        operation that turned finite inputs into ``nan`` or ``inf``.

        Examples
        --------
        >>> print(parse("x + log(x - 1)").domain_error(x=0.5).pretty())
        column 5: log: log of a negative number (log(-0.5) is nan)
            x + log(x - 1)
                ^
        >>> parse("log(x)").domain_error(x=2.0) is None
        True
        """
        leaves = self._leaves(values)
        try:
            with no_grad(), np.errstate(all="ignore"):
                self._run(leaves, finite=True)
        except EvaluationError as err:
            if getattr(err, "domain", False):
                return err
            raise
        return None

    def _run(self, leaves: Mapping, finite: bool = False):

        def as_tensor(v):
            return v if isinstance(v, Tensor) else tensor(float(v), dtype=float64)

        # Post-order without recursion (the parser bounds depth, but stay iterative);
        # values go on a stack, so a sub-tree used twice is simply evaluated twice.
        results: list = []
        stack = [(self.tree, False)]
        while stack:
            node, done = stack.pop()
            children = _children(node)
            if not done:
                stack.append((node, True))
                for child in reversed(children):
                    stack.append((child, False))
                continue
            if children:
                args = results[-len(children):]
                del results[-len(children):]
            else:
                args = []
            try:
                results.append(_apply(node, args, leaves, as_tensor, dot, matmul, F))
                if finite and _all_finite(args) and not _all_finite(results[-1:]):
                    err = EvaluationError(f"{_describe(node)}: {_why_not_finite(node, args)}",
                                          self.text, node.pos)
                    err.domain = True
                    raise err
            except EvaluationError:
                raise
            except (RuntimeError, ValueError, TypeError, IndexError, ZeroDivisionError,
                    OverflowError, NotImplementedError) as e:
                what = _describe(node)
                raise EvaluationError(f"{what}: {e}", self.text, node.pos) from None
        out = results[-1]
        if not isinstance(out, Tensor):
            out = tensor(float(out), dtype=float64)
        return out

    def gradient(self, **values: Any) -> dict:
        """Reverse-mode gradients (numbers): variable -> float or float64 array.

        Examples
        --------
        >>> parse("dot(x, x)").gradient(x=[1, 2])
        {'x': array([2., 4.])}
        """
        leaves = self._leaves(values)
        out = self.evaluate(leaves)
        if out.numel() != 1:
            raise ValueError(f"the expression gives shape {tuple(out.shape)}; gradients "
                             "need a scalar (wrap it in sum(...))")
        if out.grad_fn is None:
            # The output is a constant or one of the leaves itself (``f = x``).
            return {k: _plain(np.ones(v.shape) if v is out else np.zeros(v.shape))
                    for k, v in leaves.items()}
        names = list(leaves)
        gs = grad(out, [leaves[k] for k in names], allow_unused=True,
                  materialize_grads=True)
        return {k: _plain(g.numpy()) for k, g in zip(names, gs)}

    # -- symbols -------------------------------------------------------------------------
    def _shape_values(self, values: Mapping | None = None, scalar: bool = True) -> dict:
        """Values for tracing symbolically: the given ones, else 0.5 in a shape that fits.

        A variable without a value is a scalar where that works; otherwise (``dot(x, y)``,
        ``x.T @ A @ x``) the fewest dimensions that make the expression evaluate (to a
        scalar, with ``scalar``): vectors of 3 elements and 3x3 matrices.

        Examples
        --------
        >>> parse("sin(dot(x, y)) + z").shape_values()
        {'x': [0.5, 0.5, 0.5], 'y': [0.5, 0.5, 0.5], 'z': 0.5}
        """
        values = values or {}
        out = {v: values[v] for v in self.variables if v in values}
        free = [v for v in self.variables if v not in values]
        if not free:
            return out
        # Sizes follow a given vector or matrix (dot(x, y) with x=[1, 2]: y has 2), else 3.
        # (each size of a given value in turn: A of 2x3 makes x of 3 in A @ x)
        sizes = list(dict.fromkeys(d for v in out.values() for d in np.shape(_value(v))))
        # Capitalised names (A, W) are matrices first, as in the course notes.
        prefs = tuple(2 if v[:1].isupper() else 0 for v in free)
        for n in sizes[:4] or [3]:
            shaped = {r: placeholder((n,) * r) for r in (0, 1, 2)}
            for ranks in rank_choices(prefs, limit=200 // min(len(sizes) or 1, 4)):
                cand = {**out, **{v: shaped[r] for v, r in zip(free, ranks)}}
                try:
                    t = self._probe(cand)
                except (ValueError, TypeError):  # EvaluationError: the shape does not fit
                    continue
                if t.numel() == 1 or not scalar:
                    return {v: cand[v] for v in self.variables}
        return {v: values.get(v, 0.5) for v in self.variables}

    shape_values = _shape_values

    def _probe(self, values: Mapping):
        with no_grad(), np.errstate(all="ignore"):
            return self._run(self._leaves(values))

    def trace(self, **values: Any):
        """The traced output tensor; missing values are 0.5 in a shape that fits
        (see :meth:`shape_values`; only shapes matter)."""
        return self.evaluate(**self._shape_values(values))

    def to_sympy(self, **values: Any):
        """The SymPy expression, via the IR.  Give values only to fix vector shapes.

        Examples
        --------
        >>> parse("sum(x*y)").to_sympy(x=[0, 0], y=[0, 0])
        x_0*y_0 + x_1*y_1
        """
        check_expression(self, at=values)  # (the work estimated before it is done)
        return to_sympy(self.trace(**values))

    def gradient_program(self, wrt=None, **values: Any):
        """Symbolic reverse mode on the IR as a straight-line program (see
        :func:`symgrad.symbolic.gradient_program`)."""
        check_expression(self, at=values)  # (the work estimated before it is done)
        return gradient_program(self.trace(**values), wrt)

    def tangent_program(self, wrt=None, **values: Any):
        """Symbolic forward mode on the IR as a straight-line tangent program (see
        :func:`symgrad.symbolic.tangents.tangent_program`); any output shape.

        Examples
        --------
        >>> print(parse("exp(2*x)").tangent_program())
        v1 = 2*x                # MulBackward0
        v̇1 = 2·ẋ
        v2 = exp(v1)            # ExpBackward0
        v̇2 = v2·v̇1
        """
        check_expression(self, at=values)  # (the work estimated before it is done)
        return tangent_program(self.trace(**values), wrt)

    def vector_gradient(self, var: str, **values: Any) -> str:
        """The gradient with respect to ``var`` in vector form, as expression text.

        Raises :class:`symgrad.symbolic.vectors.NoVectorForm` where the grammar cannot write
        it (see :func:`symgrad.symbolic.vectors.vector_gradient`); scalars default to 0.5.

        Examples
        --------
        >>> parse("sin(dot(x, y))").vector_gradient("x", x=[0, 0], y=[0, 0])
        'cos(dot(x, y)) * y'
        """
        return vector_gradient(self, var, **self._shape_values(values))

    def diff(self, var: str, simplify: bool = True, order: int = 1, **values: Any):
        """The symbolic derivative with respect to ``var`` (reverse mode on the IR).

        Higher orders differentiate the recorded backward graph: the first ``order - 1``
        derivatives are taken with ``create_graph=True`` (so they are graphs in the same
        IR), the last by symbolic reverse mode on that graph.  A vector variable allows
        ``order`` 1 (gradient) and 2 (Hessian matrix).

        Examples
        --------
        >>> parse("sin(dot(x, y))").diff("x", x=[0, 0], y=[0, 0])
        Matrix([
        [y_0*cos(x_0*y_0 + x_1*y_1)],
        [y_1*cos(x_0*y_0 + x_1*y_1)]])
        >>> parse("x**3 * y").diff("x", order=2)
        6*x*y
        >>> [parse("3*x").diff("x", order=k) for k in (1, 2, 3)]
        [3, 0, 0]
        """
        if var not in self.variables:
            raise ValueError(f"{var!r} is not a variable of the expression (variables: "
                             f"{', '.join(self.variables) or 'none'})")
        if order < 1:
            raise ValueError(f"order must be at least 1, got {order}")
        check_expression(self, at=values, wrt=[var], hessian=order == 2)  # (before work)
        if order == 1:
            prog = self.gradient_program([var], **values)
            return prog.closed_form(simplify=simplify)[var]
        leaves = self._leaves(self._shape_values(values))
        x = leaves[var]
        out = self.evaluate(leaves)
        if out.numel() != 1:
            raise ValueError("the expression is not a scalar; derivatives need a scalar")
        tidy = sp.simplify if simplify else (lambda e: e)
        if x.ndim == 0:
            g = out
            for k in range(1, order):
                if g is x or g.grad_fn is None:
                    # d/dx x = 1, d/dx of a constant = 0; after that only zeros
                    g = tensor(1.0 if g is x else 0.0, dtype=float64)
                    continue
                (g,) = grad(g, x, create_graph=True, materialize_grads=True)
                nodes = _graph_size(g, MAX_DERIVATIVE_NODES)
                if nodes > MAX_DERIVATIVE_NODES:
                    # Each order of a nested function can triple its graph: past this the
                    # closed form is too large to compute or read.
                    raise DerivativeSizeError(
                        f"order {order}: the derivative of order {k} already has a graph of "
                        f"more than {MAX_DERIVATIVE_NODES:,} nodes (the limit for symbolic "
                        f"derivatives); ask for a lower order")
            if g is x:
                return sp.Integer(1)
            if g.grad_fn is None:  # a constant: its derivative is 0
                return sp.Integer(0)
            return gradient_program(g, [x]).closed_form(simplify=simplify)[var]
        if order != 2:
            raise NotImplementedError("for a vector or matrix variable, order 1 (gradient) "
                                      "and 2 (Hessian) are supported")
        (g,) = grad(out, x, create_graph=True)
        flat = g.reshape(-1)
        rows = []
        for i in range(flat.shape[0]):
            (h,) = grad(flat[i], x, retain_graph=True, allow_unused=True,
                        materialize_grads=True, create_graph=True)
            row = to_sympy(h.reshape(-1))
            rows.append([tidy(e) for e in (row if isinstance(row, sp.MatrixBase) else [row])])
        return sp.Matrix(rows)


def _plain(a: np.ndarray):
    a = np.asarray(a, dtype=np.float64)
    return float(a) if a.ndim == 0 else a


def _all_finite(values) -> bool:
    return all(bool(np.all(np.isfinite(v.detach().numpy() if isinstance(v, Tensor) else v)))
               for v in values)


def _why_not_finite(node, args) -> str:
    """Why an operation gave nan or inf from finite inputs, in words."""
    arrays = [np.asarray(a.detach().numpy() if isinstance(a, Tensor) else a, dtype=float)
              for a in args]
    if len(arrays) == 2 and not (isinstance(node, P.BinOp) and node.op == "@"):
        arrays = list(np.broadcast_arrays(*arrays))

    def first(mask, a) -> str | None:
        hits = np.asarray(a)[np.asarray(mask)]
        return f"{float(hits.ravel()[0]):.6g}" if hits.size else None

    name = node.func if isinstance(node, P.Call) else getattr(node, "op", "")
    a = arrays[0] if arrays else None
    if name == "/" and first(arrays[1] == 0, arrays[1]) is not None:
        return "division by zero"
    why = T.NOT_FINITE.get(P.FUNCTION_OPS.get(name)) if isinstance(node, P.Call) else None
    if why is not None and why(a) is not None:  # registered beside the op (ops.tables)
        return why(a)
    if name in ("**", "^"):
        b = arrays[1]
        if first((a == 0) & (b < 0), a) is not None:
            return f"zero to a negative power ({first((a == 0) & (b < 0), b)}): division by zero"
        v = first((a < 0) & (b != np.round(b)), a)
        if v is not None:
            return (f"a negative number to a fractional power (({v})**"
                    f"{first((a < 0) & (b != np.round(b)), b)} is nan)")
        return "overflow: the power is too large for a float (inf)"
    return "the result is not finite here (an overflow to inf, or nan)"


def _children(node) -> tuple:
    if isinstance(node, P.BinOp):
        return (node.left, node.right)
    if isinstance(node, (P.Neg, P.Transpose)):
        return (node.operand,)
    if isinstance(node, P.Call):
        return tuple(node.args)
    return ()


def _describe(node) -> str:
    if isinstance(node, P.Call):
        return node.func
    if isinstance(node, P.BinOp):
        return f"'{node.op}'"
    if isinstance(node, P.Transpose):
        return "'.T'"
    if isinstance(node, P.Neg):
        return "unary '-'"
    return "value"


def _apply(node, args, leaves, as_tensor, dot, matmul, F):
    if isinstance(node, P.Num):
        return node.value
    if isinstance(node, P.Name):
        if node.name in _CONSTANTS:
            return _CONSTANTS[node.name]
        return leaves[node.name]
    if isinstance(node, P.Neg):
        return -args[0]
    if isinstance(node, P.Transpose):
        a = as_tensor(args[0])
        return a if a.ndim < 2 else a.T
    if isinstance(node, P.BinOp):
        a, b = args
        op = node.op
        if op == "@":
            return matmul(as_tensor(a), as_tensor(b))
        if not isinstance(a, Tensor) and not isinstance(b, Tensor):
            # Constant sub-expressions stay Python numbers (as in PyTorch code).
            a, b = float(a), float(b)
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        if op == "/":
            # Dividing by a constant zero is a mistake in the text whatever the values.
            if not isinstance(b, Tensor) and b == 0:
                raise ZeroDivisionError("division by zero")
            return a / b
        if op == "%":
            if not isinstance(a, Tensor) and not isinstance(b, Tensor):
                return float(np.remainder(np.float64(a), np.float64(b)))  # (nan for % 0)
            # torch.remainder: a number % a tensor has no derivative in PyTorch; the
            # language's constant is a tensor there (d/dy = -floor(x / y)).
            return (a if isinstance(a, Tensor) else as_tensor(a)) % b
        if op in ("**", "^"):
            if not isinstance(a, Tensor) and not isinstance(b, Tensor):
                # As tensors compute it: nan for (-8)**(1/3), inf on overflow.
                with np.errstate(all="ignore"):
                    return float(np.power(np.float64(a), np.float64(b)))
            if isinstance(b, float) and b.is_integer():
                b = int(b)
            return a ** b
        raise ValueError(f"unknown operator {op!r}")
    if isinstance(node, P.Call):
        return call(P.FUNCTION_OPS[node.func], tuple(as_tensor(a) for a in args),
                    P.FUNCTION_ARGS[node.func])
    raise TypeError(f"not an expression node: {node!r}")


def parse(text: str) -> Expression:
    """Parse expression text (CONTRACT §4 grammar) into an :class:`Expression`.

    Raises
    ------
    symgrad.parser.ParseError
        With the line, the column and a caret (``err.pretty()``).

    Examples
    --------
    >>> e = parse("x.T @ A @ x")
    >>> e.variables
    ['x', 'A']
    >>> e.gradient(x=[1, 2], A=[[1, 0], [0, 3]])["x"]
    array([ 2., 12.])
    """
    if not isinstance(text, str):
        raise TypeError(f"parse() expects a string, got {type(text).__name__}")
    return Expression(text, P.parse(text))


#: Past this many nodes in the graph of an intermediate derivative, ``diff(order=...)``
#: stops (the closed form of such a graph has millions of terms).
MAX_DERIVATIVE_NODES = 500


class DerivativeSizeError(ValueError):
    """A derivative of high order whose graph is past :data:`MAX_DERIVATIVE_NODES`."""


def _graph_size(t, limit: int) -> int:
    """The number of nodes of ``t``'s graph, counted up to just past ``limit``."""
    seen: set = set()
    stack = [t.grad_fn]
    while stack and len(seen) <= limit:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        stack.extend(c for c, _ in n.next_functions)
    return len(seen)
