"""Gradients in vector form, from the op table's own rules: ``x.T @ A @ x`` -> ``(A + A.T) @ x``.

The recorded graph of an expression is walked twice, as the engine walks it: forward,
each op's numpy ``forward`` running on :class:`~symgrad.symbolic.matrix.Mx` (numpy's
protocols hand the arrays' work to the matrix algebra; a function of the grammar the
algebra does not spell out becomes a call by its name in the op table), then backward,
each op's gradient rules running on :data:`MATRIX`, the backend whose arrays are matrix
expressions.  No derivative is written here: the vector form falls out of the same
rules that compute numbers.

Sizes are :class:`~symgrad.symbolic.matrix.Dim` symbols unified by the products that
relate them, so the result holds for every size; :func:`dimensions` tells which of the
variables' sizes must be equal (what the checker varies to test a claim at other sizes).

Examples
--------
>>> from symgrad import parse
>>> vector_gradient(parse("x.T @ A @ x"), "x", x=[1, 2], A=[[1, 2], [3, 4]])
'(A + A.T) @ x'
>>> vector_gradient(parse("sum((A @ x - b)**2)"), "A", A=[[1, 2]], x=[1, 2], b=[1])
'2 * outer(A @ x - b, x)'
>>> vector_gradient(parse("log(sum(exp(x)))"), "x", x=[1, 2, 3])
'exp(x) / sum(exp(x))'
"""
from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ..api.tensor import Tensor, tensor
from ..ir.backends import _Numpy
from ..ir.node import AccumulateGrad, Node
from ..ir.walk import input_gradients, leaves_of, topological
from ..ops import tables as T
from . import matrix as M
from .matrix_forms import canonical, tidy, to_text
from .calls import call
from .matrix import Dim, Mx, NoVectorForm

__all__ = ["vector_gradient", "vector_text", "gradient_expression", "matrix_gradient",
           "matrix_forward", "matrix_value", "proved_equal", "dimensions", "NoVectorForm",
           "MATRIX"]


class _Matrix(_Numpy):
    """The gradient rules' backend on matrix expressions of symbolic size."""

    @staticmethod
    def call(op, *args):
        """Another op of the table on matrix expressions: its forward through numpy's
        protocols.  A condition that holds on a set of measure zero (``x == 0``) is
        almost everywhere false, and a choice by it takes its other branch; steps and
        scatters have no vector form (side tables beside the ops say which is which)."""
        if op in T.MEASURE_ZERO or (op in T.CONJUNCTION and any(a is _NULL for a in args)):
            return _NULL
        reason = T.NO_VECTOR_FORM.get(op)
        if reason is not None:
            raise NoVectorForm(reason)
        choose = T.CHOOSES.get(op)
        if choose is not None:
            return _choose(*choose(*args))
        op = T.SYNONYM.get(op, op)
        n = len(args) if op.variadic else len(op.inputs)
        if op.expr is None and not op.elementwise:  # no name in the grammar: its forward
            with M.unnamed_forward():
                return _apply(op, [M._lift(a) for a in args[:n]], args[n:], None)
        return _apply(op, [M._lift(a) for a in args[:n]], args[n:], None)

    shape = staticmethod(lambda a: M._lift(a).shape)
    mul_scalar = staticmethod(lambda a, c: M._lift(a) * c)
    add_scalar = staticmethod(lambda a, c: M._lift(a) + c)
    sub_scalar = staticmethod(lambda a, c: M._lift(a) - c)
    div_scalar = staticmethod(lambda a, c: M._lift(a) / c)
    zeros_like = staticmethod(lambda a: M.num(0))
    cast = staticmethod(lambda a, d: a)

    @staticmethod
    def broadcast_to(g, shape):
        g = M._lift(g)
        if g.rank == 0 and len(shape):
            return M.uniform(g, tuple(shape))
        if g.rank == len(shape):
            return g
        raise NoVectorForm("a vector broadcast along a new dimension")

    @staticmethod
    def sum_to(g, shape):
        return M.sum_to(M._lift(g), tuple(shape))

    @staticmethod
    def reshape(a, shape):
        return M.reshape(M._lift(a), tuple(shape))

    @staticmethod
    def _indexing(*args, **kwargs):
        raise NoVectorForm(T.INDEXING)

    value_selecting_backward = set_at = new_zeros = _indexing


def _choose(cond, a, b):
    """``a`` where ``cond`` holds, else ``b``, when the choice does not depend on where."""
    if cond is _NULL:
        return b
    if not isinstance(cond, Mx):  # a condition known from the values (logdet's sign)
        c = np.asarray(cond)
        if c.dtype == bool and c.all():
            return a
        if c.dtype == bool and not c.any():
            return b
    raise NoVectorForm(T.STEP)


#: A condition that holds only on a set of measure zero (``x == 0``).
_NULL = object()

MATRIX = _Matrix()


def _apply(op, args: list, attrs: tuple, concrete) -> Mx:
    """One op's forward on expressions: its numpy forward through numpy's protocols,
    else a call of its name in the grammar."""
    try:
        with np.errstate(all="ignore"):
            out = op.forward(*args, *attrs)
        if isinstance(out, np.ndarray) and out.dtype == object and out.ndim == 0:
            out = out[()]
        if isinstance(out, Mx):
            return out
    except NoVectorForm:
        raise
    except Exception:  # noqa: BLE001 - a numpy forward that cannot run symbolically
        pass
    # (an op with no name in the grammar is a call that cannot be printed: fine as long
    # as no gradient mentions it)
    shape = _shape_like(args, attrs, concrete, op)
    if op.expr and _grammar_attrs(op) == tuple(attrs):
        return M.fn(op.expr, *args, shape=shape)
    return M.fn(f"<{op.name}>", *args, tuple(attrs), shape=shape)


@functools.lru_cache(maxsize=None)
def _grammar_attrs(op):
    """The attributes the expression language's call of ``op`` records (norm's
    ``(2, None, False)``), found by making that call once; None if it cannot be made."""
    if not op.attrs:
        return ()
    ranks = (op.ranks or ((1,),) * len(op.inputs))
    operands = []
    for r in ranks[:len(op.inputs)]:
        rank = max(r) if isinstance(r, tuple) else r
        operands.append(tensor(np.full((3,) * rank, 0.5) + (np.eye(3) if rank == 2 else 0),
                               requires_grad=True))
    try:
        with np.errstate(all="ignore"):
            t = call(op, tuple(operands))
    except Exception:  # noqa: BLE001 - no such call: never printed by name
        return None
    node = t.grad_fn
    return tuple(node.attrs) if node is not None and node.op is op else None


def _shape_like(args: list, attrs: tuple, concrete, op):
    """The symbolic shape of a call's result: that of the operand it matches, or ()."""
    if concrete is None:
        concrete = np.shape(op.forward(*[_dummy(a) for a in args], *attrs))
    concrete = tuple(concrete)
    if concrete == ():
        return ()
    for a in args:
        if isinstance(a, Mx) and tuple(int(d) for d in a.shape) == concrete:
            return a.shape
    raise NoVectorForm(f"{op.expr or op.name}(): a result of a new shape")


def _dummy(a):
    if not isinstance(a, Mx):
        return np.float64(0.5)
    shape = tuple(int(d) for d in a.shape)
    out = np.full(shape, 0.5)
    if len(shape) == 2 and shape[0] == shape[1]:
        out += np.eye(shape[0])
    return out


def _constant(x) -> Mx:
    if x is None:
        return None
    a = np.asarray(x.detach().numpy() if isinstance(x, Tensor) else x)
    if a.dtype == bool:
        return a  # a condition known from the values
    a = a.astype(np.float64)
    return M._lift(a if a.ndim else a[()])


def _leaf(name: str, shape: tuple, labels: dict | None, shared: dict) -> Mx:
    """A variable whose dimensions are one Dim per label (``A: (n, n)`` is square)."""
    marks = (labels or {}).get(name) or (None,) * len(shape)
    leaf = M.sym(name, tuple(shared.setdefault(m, Dim(n, named=True)) if isinstance(m, str)
                             else Dim(n) for m, n in zip(marks, shape)))
    if len(shape) == 1 and leaf.shape[0].find().vector is None:
        leaf.shape[0].find().vector = leaf  # (numel(x) names its size)
    return leaf


def matrix_forward(t, names: dict, labels: dict | None = None) -> tuple:
    """The forward walk: ``(order, node -> Mx, name -> leaf Mx)`` for a traced tensor
    whose leaves are named in ``names`` (``id(tensor) -> name``); ``labels`` names the
    dimensions of some (``{"A": ("n", "n")}``: equal names, equal sizes)."""
    root = t.grad_fn if t.grad_fn is not None else t._accumulator()
    order = topological(root)
    values: dict = {}
    leaves: dict = {}
    shared: dict = {}
    for a in leaves_of(order):
        v = a.variable
        name = names[id(v)]
        values[a] = leaves[name] = _leaf(name, tuple(v.shape), labels, shared)
    concrete: dict = {a: np.asarray(a.variable._data) for a in values}
    for n in order:
        if isinstance(n, AccumulateGrad):
            continue
        if n.op is None or getattr(n.op, "forward", None) is None:
            raise NoVectorForm(f"{type(n).__name__}: a custom Function")
        args = [values[x] if isinstance(x, Node) else _constant(x) for x in n.inputs]
        cargs = [concrete[x] if isinstance(x, Node) else None if x is None else
                 np.asarray(x.detach().numpy() if isinstance(x, Tensor) else x)
                 for x in n.inputs]
        with np.errstate(all="ignore"):
            concrete[n] = np.asarray(n.op.forward(*cargs, *n.attrs))
        values[n] = _apply(n.op, args, n.attrs, concrete[n].shape)
    return order, values, leaves, root


def matrix_gradient(t, var: str, names: dict, labels: dict | None = None,
                    seed: Mx | None = None) -> Mx:
    """The gradient of a traced scalar ``t`` with respect to the leaf named ``var``, as a
    matrix expression (:func:`~symgrad.symbolic.matrix_forms.tidy` it to print); with a
    ``seed`` of ``t``'s shape, the vector-Jacobian product ``Jᵀ seed`` of any ``t``."""
    order, values, leaves, root = matrix_forward(t, names, labels)
    if var not in leaves:
        raise ValueError(f"{var!r} is not a leaf of the graph")
    target = next(a for a in values if isinstance(a, AccumulateGrad)
                  and values[a] is leaves[var])
    reaches = {target}
    for n in order:
        if any(isinstance(x, Node) and x in reaches for x in n.inputs):
            reaches.add(n)
    adjoint: dict = {root: M.num(1) if seed is None else seed}
    for n in reversed(order):
        if n not in reaches or n not in adjoint or isinstance(n, AccumulateGrad):
            continue
        g = adjoint.pop(n)
        op = n.op
        args = [values[x] if isinstance(x, Node) else _constant(x) for x in n.inputs]
        saved = _saved(n, args, values[n])
        with np.errstate(all="ignore"):
            grads = list(input_gradients(n, MATRIX, g, saved, reaches))
        for i, x, gi in grads:
            if gi is None:
                raise NoVectorForm(f"{op.name}: no gradient")
            gi = M.sum_to(M._lift(gi), args[i].shape)
            adjoint[x] = M.add(adjoint[x], gi) if x in adjoint else gi
    return adjoint.get(target, M.num(0))


def _saved(node: Node, args: list, result: Mx) -> list:
    """What the op's rules receive: expressions for tensors, symbolic sizes for sizes."""
    out = []
    op = node.op
    for kind, where in op.plan:
        if kind == "input":
            out.append(args[where])
        elif kind == "attr":
            out.append(node.attrs[where])
        elif kind == "result":
            out.append(result)
        else:
            out.append(_derived(op, where, args, node))
    return out


def _derived(op, name: str, args: list, node: Node):
    """A derived saved value (sizes, strides, numel) of an operand, by its name."""
    who = next((i for i, inp in enumerate(op.inputs) if name.startswith(inp + "_")), 0)
    shape = args[who].shape
    sizes = tuple(int(d) for d in shape)
    if name.endswith("_sizes"):
        return shape  # (Dims are ints too: rules may compute with them)
    if name.endswith("_strides"):
        strides, step = [], 1
        for s in reversed(sizes):
            strides.insert(0, step)
            step *= s
        return tuple(strides)
    if name.endswith("_numel"):
        if M.named_size(shape):  # (mean's n: numel(x), not the traced size)
            return M.fn(M.name_of(T.ROLES.count), args[who], shape=())
        return int(np.prod(sizes)) if sizes else 1
    if name == "self_dtype":
        return node._meta[0][1]
    return None  # (an LU factorisation and the like: no rule reads it symbolically)


def _named(expr, values: dict):
    leaves = expr.leaves(**values)
    t = expr.evaluate(leaves)
    return t, {id(v): k for k, v in leaves.items()}


def vector_gradient(expr, var: str, **values: Any) -> str:
    """The gradient of a scalar expression with respect to ``var``, as expression text.

    Parameters
    ----------
    expr : Expression
    var : str
    **values
        Values of all variables (only their shapes matter).

    Returns
    -------
    str
        Text in the expression grammar, true for every size; a scalar text for a vector
        variable means the same value in every element (``sum(x)`` gives ``1``).

    Raises
    ------
    NoVectorForm
        When the gradient cannot be written in the grammar (the message says why).
    """
    return vector_text(expr, var, values)


def vector_text(expr, var: str, values: dict, labels: dict | None = None) -> str:
    """:func:`vector_gradient` with ``labels`` (the sizes' names: see
    :func:`matrix_forward`)."""
    try:
        return to_text(gradient_expression(expr, var, values, labels))
    except RecursionError:
        raise NoVectorForm("too deeply nested to print") from None


def gradient_expression(expr, var: str, values: dict, labels: dict | None = None) -> Mx:
    """:func:`vector_gradient` as a tidied :class:`~symgrad.symbolic.matrix.Mx`
    (``labels``: see :func:`matrix_forward`)."""
    if var not in expr.variables:
        raise ValueError(f"{var!r} is not a variable of the expression (variables: "
                         f"{', '.join(expr.variables) or 'none'})")
    missing = [k for k in expr.variables if k not in values]
    if missing:
        raise ValueError(f"no value given for {', '.join(missing)}")
    t, names = _named(expr, values)
    if t.numel() != 1 or t.ndim:
        raise ValueError("the expression is not a scalar; gradients need a scalar")
    if t.grad_fn is None:
        return M.num(0)
    try:
        return tidy(matrix_gradient(t, var, names, labels))
    except NoVectorForm:
        raise
    except Exception as err:  # noqa: BLE001 - a rule the algebra cannot follow
        raise NoVectorForm(f"a step the matrix algebra cannot follow ({err})") from None


def matrix_value(expr, values: dict, labels: dict | None = None) -> Mx:
    """The expression itself as a matrix expression (a claimed gradient, to compare)."""
    t, names = _named(expr, values)
    if id(t) in names:  # the expression is one of its variables
        return _leaf(names[id(t)], tuple(t.shape), labels, {})
    if t.grad_fn is None:
        return M._lift(np.asarray(t.detach().numpy(), dtype=np.float64))
    order, vals, leaves, root = matrix_forward(t, names, labels)
    return vals[root]


def proved_equal(expr, var: str, claim, values: dict, labels: dict | None = None) -> bool:
    """Whether the gradient of ``expr`` with respect to ``var`` and the expression
    ``claim`` have equal canonical forms: equal for every size of the variables
    (``labels``: which sizes are known equal, see :func:`matrix_forward`)."""
    try:
        true = canonical(gradient_expression(expr, var, values, labels))
        vals = {k: values[k] for k in claim.variables}
        claimed = canonical(matrix_value(claim, vals, labels))
    except (NoVectorForm, ValueError, TypeError, RuntimeError):
        return False
    return true.key == claimed.key


def dimensions(expr, values: dict, labels: dict | None = None) -> dict:
    """Which sizes must be equal: ``name -> tuple of size classes`` (small ints), from
    the products and broadcasts of the expression and the ``labels`` given.

    >>> from symgrad import parse
    >>> dimensions(parse("x.T @ A @ y"), dict(x=[1, 2], A=[[1, 2, 3], [4, 5, 6]], y=[1, 2, 3]))
    {'x': (0,), 'A': (0, 1), 'y': (1,)}
    """
    t, names = _named(expr, values)
    if t.grad_fn is None:
        return {k: tuple(range(np.ndim(v))) for k, v in values.items()}
    _, _, leaves, _ = matrix_forward(t, names, labels)
    classes: dict = {}
    out = {}
    for name in expr.variables:
        out[name] = tuple(classes.setdefault(d.find()._id, len(classes))
                          for d in leaves[name].shape)
    return out
