"""The SymPy bridge: symbolic values and symbolic reverse mode on the graph IR.

Two things are built here, both by walking the same IR the engine runs:

* :func:`to_sympy` -- the SymPy expression of a traced tensor in terms of its leaves;
* :func:`gradient_program` -- symbolic reverse mode *on the graph*: a straight-line
  program with one named intermediate ``v1 = ...`` per IR node and one adjoint
  ``v̄1 = ...`` per IR node, exactly the chain-rule steps a course writes on the board.
  Each line refers to earlier lines by name, so shared sub-expressions stay shared and
  the program grows linearly with the graph.

The forward of each op comes from the op table (its numpy ``forward`` run on object
arrays, or its ``sym`` mapping) and the adjoints from the op table's gradient rules run
on the :data:`~symgrad.symbolic.backend.SYMPY` backend: no op has its own code here.

Examples
--------
>>> import symgrad
>>> x = symgrad.tensor(2.0, requires_grad=True, name="x")
>>> y = symgrad.tensor(3.0, requires_grad=True, name="y")
>>> f = symgrad.sin(x * y) + x
>>> to_sympy(f)
x + sin(x*y)
>>> p = gradient_program(f)
>>> print(p)
v1 = x*y                # MulBackward0
v2 = sin(v1)            # SinBackward0
v3 = v2 + x             # AddBackward0
v̄3 = 1
v̄2 = v̄3                 # AddBackward0
v̄1 = v̄2*cos(v1)         # SinBackward0
x̄ = v̄1*y + v̄3           # AddBackward0, MulBackward0
ȳ = v̄1*x                # MulBackward0
>>> p.closed_form()["x"]
y*cos(x*y) + 1
>>> round(float(p.evaluate()["x"]), 6)
3.880511
"""
from __future__ import annotations

import itertools
from typing import Iterable, Mapping, Sequence

import numpy as np
import sympy as sp

from ..api.tensor import _DERIVED, Tensor
from ..ir.node import AccumulateGrad, Node
from ..ir.walk import input_gradients, leaves_of as _leaves_of, topological as _topological
from .backend import SYMPY
from .program import GradientProgram, Line, _add_all, _bar, _element_names, substitute
from .symbols import (_nicen, _nicen_all, _obj, _to_public, almost_everywhere, as_sympy,
                     leaf_symbols, nice_number)

__all__ = ["to_sympy", "gradient_program", "GradientProgram", "Line", "sym_forward",
           "leaf_symbols", "leaf_names", "graph_leaves", "nice_number", "as_sympy",
           "almost_everywhere"]


def sym_forward(op, inputs: Sequence, attrs: tuple = ()) -> np.ndarray:
    """Evaluate one op of the table on object arrays of SymPy expressions.

    ``op.sym`` decides: a name (see :func:`symgrad.ops.sympy_function`) is applied per element, a
    callable receives the arrays and attributes, and otherwise the op's numpy
    ``forward`` runs on the object arrays.

    Examples
    --------
    >>> from symgrad import ops
    >>> x, y = sp.symbols("x y")
    >>> sym_forward(ops.MUL, [np.array([x, y], dtype=object), 2])
    array([2*x, 2*y], dtype=object)
    >>> sym_forward(ops.SIN, [np.array(x, dtype=object)])
    array(sin(x), dtype=object)
    """
    out = SYMPY.call(op, *[_obj(a) for a in inputs], *attrs)
    out = np.asarray(out, dtype=object) if not isinstance(out, np.ndarray) else out
    if out.dtype != object:
        out = as_sympy(out)
    return _nicen_all(out) if out.ndim else _obj(_nicen(out[()]))


def _saved_values(node: Node, arrays: list, attrs: tuple, result) -> list:
    """The values the op's gradient rules receive, from symbolic inputs and output."""
    out = []
    for kind, where in node.op.plan:
        if kind == "input":
            out.append(arrays[where])
        elif kind == "attr":
            out.append(attrs[where])
        elif kind == "result" and not where:  # (an output k > 0: derived)
            out.append(result)
        elif where == "self_dtype":
            out.append(node._meta[0][1])
        else:
            out.append((node.op.derive.get(where) or _DERIVED[where])(arrays, attrs))
    return out


_DEFAULT_NAMES = ("x", "y", "z", "w", "u", "p", "q", "r", "s")


def leaf_names(leaves: Iterable, taken: Iterable[str] = ()) -> dict:
    """Names for leaf tensors: their ``name=`` or stable defaults ``x, y, z, w, ...``.

    Defaults follow the order in which the leaves were first used in the graph.
    """
    leaves = list(leaves)
    used = set(taken) | {t.name for t in leaves if getattr(t, "name", None)}
    names: dict = {}
    fresh = (n for n in itertools.chain(_DEFAULT_NAMES, (f"x{k}" for k in itertools.count(1)))
             if n not in used)
    for t in leaves:
        names[id(t)] = t.name if getattr(t, "name", None) else next(fresh)
    return names


def graph_leaves(t) -> list:
    """The leaf tensors in ``t``'s graph, in the order they first entered a graph.

    Examples
    --------
    >>> import symgrad
    >>> x, y = (symgrad.tensor(1.0, requires_grad=True, name=n) for n in "xy")
    >>> [leaf.name for leaf in graph_leaves(y * x + x)]
    ['y', 'x']
    """
    if t.grad_fn is None:
        return []
    return [a.variable for a in _leaves_of(_topological(t.grad_fn))]


def _trace(t, names: Mapping | None = None):
    """Forward lines for the graph of ``t``: (lines, node -> symbol array, leaves)."""
    if not isinstance(t, Tensor):
        raise TypeError(f"expected a symgrad Tensor, got {type(t).__name__}")
    root = t.grad_fn if t.grad_fn is not None else (
        t._accumulator() if t.requires_grad else None)
    if root is None:
        return [], None, {}, as_sympy(t)
    order = _topological(root)
    accs = _leaves_of(order)
    given = dict(names or {})
    auto = leaf_names([a.variable for a in accs], taken=given.values())
    values: dict = {}
    leaves: dict = {}
    for a in accs:
        v = a.variable
        name = given.get(id(v)) or auto[id(v)]
        if name in leaves:
            raise ValueError(f"two different leaves are both named {name!r}")
        syms = leaf_symbols(name, tuple(v.shape))
        values[a] = syms
        leaves[name] = (syms, np.array(v._data, dtype=np.float64))
    # Intermediates are v1, v2, ...; another letter if a leaf is already called so.
    prefix = next(c for c in "vtuhq" if not any(
        n[:1] == c and n[1:].split("_")[0].isdigit() for n in leaves))
    lines = []
    k = 0
    for n in order:
        if isinstance(n, AccumulateGrad):
            continue
        if n.op is None or getattr(n.op, "forward", None) is None:
            raise NotImplementedError(
                f"{type(n).__name__}: custom autograd Functions have no symbolic form")
        k += 1
        # (a None operand, clamp's missing bound, stays None)
        args = [values[x] if isinstance(x, Node) else None if x is None else _obj(
            as_sympy(x) if isinstance(x, Tensor) else x) for x in n.inputs]
        expr = sym_forward(n.op, args, n.attrs)
        syms = _element_names(f"{prefix}{k}", expr.shape)
        values[n] = syms
        lines.append(Line(f"{prefix}{k}", syms, expr, "forward", (type(n).__name__,)))
    return lines, values, leaves, root


def to_sympy(t, names: Mapping | None = None):
    """The SymPy expression of a traced tensor in terms of its leaves.

    Leaves are named by their ``name=`` or get stable defaults (``x``, ``y``, ... in
    order of first use); vector and matrix leaves give one symbol per element
    (``x_0``, ``A_0_1``).  Constants become exact numbers where their text is short.

    Parameters
    ----------
    t : Tensor or Expression
        Any tensor; one without history gives its (constant) value.  A parsed
        :class:`~symgrad.symbolic.expression.Expression` is traced with scalar variables.
    names : mapping, optional
        ``id(leaf) -> name``, overriding the leaves' own names.

    Returns
    -------
    sympy.Expr for a 0-d tensor, else a :class:`sympy.Matrix` (column for vectors), or
    a :class:`sympy.Array` above two dimensions.

    Examples
    --------
    >>> import symgrad
    >>> x = symgrad.tensor([1.0, 2.0], requires_grad=True, name="x")
    >>> to_sympy((x * x).sum())
    x_0**2 + x_1**2
    >>> to_sympy(symgrad.tanh(1.1 * x))
    Matrix([
    [tanh(11*x_0/10)],
    [tanh(11*x_1/10)]])
    >>> to_sympy(symgrad.parse("x*exp(y)"))
    x*exp(y)
    """
    if not isinstance(t, Tensor):  # an Expression: its graph
        t = t.trace()
    lines, values, leaves, root = _trace(t, names)
    if values is None:
        return _to_public(root)
    if isinstance(root, AccumulateGrad):
        return _to_public(values[root])
    env: dict = {}
    for line in lines:
        for sym, e in zip(np.ravel(line.symbols), np.ravel(line.expr)):
            env[sym] = substitute(sp.sympify(e), env)
    syms = values[root]
    return _to_public(np.frompyfunc(lambda s: env[s], 1, 1)(syms) if syms.ndim
                      else _obj(env[syms[()]]))


def gradient_program(t, wrt: Sequence | None = None, names: Mapping | None = None
                     ) -> GradientProgram:
    """Symbolic reverse mode on the graph of a scalar ``t``: a straight-line program.

    Parameters
    ----------
    t : Tensor or Expression
        A traced 0-d tensor (or one element); a parsed expression is traced with
        scalar variables (use :meth:`Expression.gradient_program` for vectors).
    wrt : sequence of Tensor or str, optional
        The leaves to differentiate against (tensors or their names); default: every
        leaf that requires grad.
    names : mapping, optional
        ``id(leaf) -> name``, overriding the leaves' own names.

    Returns
    -------
    GradientProgram
        ``v1 = ...`` lines for the forward pass, then adjoints ``v̄k = ...`` from the
        output back to ``x̄ = ...`` for each leaf in ``wrt``; one line per IR node.

    Examples
    --------
    >>> import symgrad
    >>> x = symgrad.tensor(0.5, requires_grad=True, name="x")
    >>> p = gradient_program(symgrad.tanh(symgrad.tanh(x)))
    >>> print(p)
    v1 = tanh(x)            # TanhBackward0
    v2 = tanh(v1)           # TanhBackward0
    v̄2 = 1
    v̄1 = v̄2*(1 - v2**2)     # TanhBackward0
    x̄ = v̄1*(1 - v1**2)      # TanhBackward0
    """
    if not isinstance(t, Tensor):  # an Expression: its graph
        t = t.trace()
    if t.numel() != 1:
        raise RuntimeError("grad can be implicitly created only for scalar outputs")
    lines, values, leaves, root = _trace(t, names)
    if values is None:
        raise RuntimeError("element 0 of tensors does not require grad and does not have "
                           "a grad_fn")
    by_name = {}
    for n, syms in values.items():
        if isinstance(n, AccumulateGrad):
            by_name[next(k for k, (s, _) in leaves.items() if s is syms)] = n
    if wrt is None:
        targets = list(by_name)
    else:
        targets = []
        for w in wrt:
            if isinstance(w, str):
                if w not in by_name:
                    raise ValueError(f"{w!r} is not a leaf of this graph (leaves: "
                                     f"{', '.join(by_name) or 'none'})")
                targets.append(w)
            elif isinstance(w, Tensor):
                acc = w._accum
                hit = [k for k, a in by_name.items() if a is acc] if acc is not None else []
                if not hit:
                    raise RuntimeError("One of the differentiated Tensors appears to not "
                                       "have been used in the graph.")
                targets.append(hit[0])
            else:
                raise TypeError(f"wrt: expected tensors or names, got {type(w).__name__}")
    target_nodes = {by_name[k] for k in targets}

    # Only nodes from which a target leaf can be reached get adjoints.
    order = _topological(root)
    reaches = set(target_nodes)
    for n in order:
        if any(isinstance(x, Node) and x in reaches for x in n.inputs):
            reaches.add(n)

    output = lines[-1] if lines else None
    prog_lines = list(lines)
    contrib: dict = {root: [_obj(sp.S.One)]}
    origin: dict = {root: []}
    grads: dict = {}
    leaf_lines: dict = {}
    forward_of = {n: values[n] for n in order}
    numbering = {id(line.symbols): line.name for line in lines}
    for n in reversed(order):
        if n not in reaches or n not in contrib:
            continue
        parts = contrib.pop(n)
        syms_n = forward_of[n]
        if isinstance(n, AccumulateGrad):
            name = next(k for k, a in by_name.items() if a is n)
            bar = _element_names(_bar(name), syms_n.shape)
            leaf_lines[name] = Line(_bar(name), bar, _add_all(parts), "adjoint",
                                    origin.pop(n))
            grads[name] = bar
            continue
        vname = numbering[id(syms_n)]
        bar_name = _bar(vname)
        bar = _element_names(bar_name, syms_n.shape)
        total = _add_all(parts)
        if n is root:
            total = np.full(syms_n.shape, sp.S.One, dtype=object) if syms_n.ndim \
                else total
        prog_lines.append(Line(bar_name, bar, total, "adjoint", origin.pop(n)))
        args = [forward_of[x] if isinstance(x, Node) else None if x is None else _obj(
            as_sympy(x) if isinstance(x, Tensor) else x) for x in n.inputs]
        saved = _saved_values(n, args, n.attrs, syms_n)
        for i, x, g_in in input_gradients(n, SYMPY, bar, saved, reaches):
            shape = np.shape(args[i])
            if np.shape(g_in) != shape:
                g_in = SYMPY.sum_to(g_in, shape)
            g_in = np.asarray(g_in, dtype=object)
            if g_in.shape != shape:
                g_in = np.broadcast_to(g_in, shape).copy()
            g_in = _nicen_all(g_in) if g_in.ndim else _obj(_nicen(g_in[()]))
            contrib.setdefault(x, []).append(g_in)
            origin.setdefault(x, []).append(type(n).__name__)
    for name in leaves:
        if name in leaf_lines:
            prog_lines.append(leaf_lines[name])
        elif name in targets:  # a leaf that does not reach the output
            syms = values[by_name[name]]
            bar = _element_names(_bar(name), syms.shape)
            prog_lines.append(Line(_bar(name), bar, np.zeros(syms.shape, dtype=object)
                                   if syms.ndim else _obj(sp.S.Zero), "adjoint"))
            grads[name] = bar
    return GradientProgram(prog_lines, targets, leaves, output,
                           {k: grads[k] for k in targets})
