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
on the :data:`~symgrad.backends.SYMPY` backend: no op has its own code here.

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
import math
from typing import Iterable, Mapping, Sequence

import numpy as np
import sympy as sp

from .._util import run_with_timeout
from ..api.tensor import _DERIVED, Tensor
from ..ir.node import AccumulateGrad, Node
from ..ops import sympy_function
from .backend import SYMPY

__all__ = ["to_sympy", "gradient_program", "GradientProgram", "Line", "sym_forward",
           "leaf_symbols", "leaf_names", "graph_leaves", "nice_number", "as_sympy",
           "almost_everywhere"]

BAR = "\u0304"  # combining macron: x̄, v̄1


# --------------------------------------------------------------------------- numbers
def nice_number(v) -> sp.Expr:
    """A Python/numpy number as an exact SymPy number where its decimal text is short.

    ``0.1`` becomes ``1/10``, ``2.0`` becomes ``2``, ``math.pi`` becomes ``pi``; a float
    whose shortest text is long stays a :class:`sympy.Float`.

    Examples
    --------
    >>> nice_number(0.5), nice_number(2.0), nice_number(math.pi), nice_number(1 / 3)
    (1/2, 2, pi, 0.333333333333333)
    """
    if isinstance(v, sp.Basic):
        if isinstance(v, sp.Float):
            return nice_number(float(v))
        return v
    if isinstance(v, (bool, np.bool_)):
        return sp.true if v else sp.false
    if isinstance(v, (int, np.integer)):
        return sp.Integer(int(v))
    f = float(v)
    if not math.isfinite(f):
        return sp.oo if f > 0 else -sp.oo if f < 0 else sp.nan
    if f == math.pi:
        return sp.pi
    if f == math.e:
        return sp.E
    if f.is_integer() and abs(f) < 1e15:
        return sp.Integer(int(f))
    text = str(v) if isinstance(v, np.floating) else repr(f)
    if len(text.replace("-", "").replace(".", "").lstrip("0")) <= 8 and "e" not in text:
        return sp.Rational(text)
    return sp.Float(f)


def _nicen(expr):
    """Replace floats in a (small) expression by exact numbers where they are short."""
    if not isinstance(expr, sp.Basic):
        return nice_number(expr) if isinstance(expr, (int, float, np.number)) else expr
    floats = expr.atoms(sp.Float)
    if not floats:
        return expr
    return expr.xreplace({f: nice_number(f) for f in floats})


_nicen_all = np.frompyfunc(_nicen, 1, 1)


def as_sympy(value) -> np.ndarray:
    """A constant (tensor, array or number) as an object array of exact SymPy numbers."""
    if isinstance(value, Tensor):
        value = value._data
    a = np.asarray(value)
    out = np.empty(a.shape, dtype=object)
    for ix in np.ndindex(a.shape):
        out[ix] = nice_number(a[ix])
    return out


def _obj(x) -> np.ndarray:
    if isinstance(x, np.ndarray) and x.dtype == object:
        return x
    if isinstance(x, np.ndarray):
        return as_sympy(x)
    out = np.empty((), dtype=object)
    out[()] = sp.sympify(x) if not isinstance(x, (float, np.floating)) else nice_number(x)
    return out


_NONSMOOTH = (sp.Max, sp.Min, sp.Abs, sp.Piecewise, sp.sign, sp.Heaviside)


def almost_everywhere(expr):
    """Drop ``Piecewise`` branches taken only on a set of measure zero.

    A branch whose condition is ``Eq(a, b)`` with ``a - b`` a non-zero expression free
    of kinks (no ``Max``, ``Abs``, ``Piecewise``, ...) holds only on a null set (such as
    ``Eq(sqrt(x**2 + y**2), 0)`` in the gradient of a norm), so it cannot change a
    gradient almost everywhere.  Equalities between kinked expressions (``Eq(x,
    Max(x, y))``, which holds on a half-space) are kept.

    Examples
    --------
    >>> x = sp.Symbol("x", real=True)
    >>> almost_everywhere(sp.Piecewise((0, sp.Eq(x**2, 0)), (1 / x, True)))
    1/x
    >>> almost_everywhere(sp.Piecewise((1, sp.Eq(x, sp.Max(x, 0))), (0, True)))
    Piecewise((1, Eq(x, Max(0, x))), (0, True))
    """
    if not isinstance(expr, sp.Basic) or not expr.has(sp.Piecewise):
        return expr

    def null(cond) -> bool:
        if isinstance(cond, sp.And):  # a subset of a null set is null
            return any(null(c) for c in cond.args)
        if not isinstance(cond, sp.Eq):
            return False
        d = cond.lhs - cond.rhs
        # |u| = 0 and u**k = 0 (k > 0) hold exactly where u = 0.
        while isinstance(d, sp.Abs) or (isinstance(d, sp.Pow) and d.exp.is_positive):
            d = d.args[0]
        return bool(d.free_symbols) and not d.has(*_NONSMOOTH) and d != 0

    def visit(pw):
        kept = [(v, c) for v, c in pw.args if not null(c)]
        if not kept or len(kept) == len(pw.args):
            return pw
        if kept[-1][1] is not sp.true:
            kept.append((sp.nan, True))
        return sp.Piecewise(*kept)

    return expr.replace(lambda e: isinstance(e, sp.Piecewise), visit)


# --------------------------------------------------------------------------- one op
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
    arrays = [_obj(a) for a in inputs]
    sym = op.sym
    if isinstance(sym, str):
        fn = sympy_function(sym)
        out = np.frompyfunc(lambda e: fn(e, *attrs), 1, 1)(arrays[0])
    elif callable(sym):
        out = sym(*arrays, *attrs)
    else:
        out = op.forward(*arrays, *attrs)
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
        elif kind == "result":
            out.append(result)
        elif where == "self_dtype":
            out.append(node._meta[0][1])
        else:
            out.append((node.op.derive.get(where) or _DERIVED[where])(arrays, attrs))
    return out


# --------------------------------------------------------------------------- leaves
_DEFAULT_NAMES = ("x", "y", "z", "w", "u", "p", "q", "r", "s")


def _topological(root: Node) -> list:
    """Nodes reachable from ``root``, each after all of its inputs (iterative DFS)."""
    order: list = []
    state: dict = {}
    stack = [(root, False)]
    while stack:
        n, done = stack.pop()
        if done:
            if state.get(n) != 2:
                state[n] = 2
                order.append(n)
            continue
        if n in state:
            continue
        state[n] = 1
        stack.append((n, True))
        for x in reversed(n.inputs):
            if isinstance(x, Node) and x not in state:
                stack.append((x, False))
    return order


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


def leaf_symbols(name: str, shape: tuple, real: bool = True) -> np.ndarray:
    """One symbol per element: ``x`` for a scalar, ``x_0, x_1`` for a vector, ``A_0_1``.

    Examples
    --------
    >>> leaf_symbols("A", (2, 2))
    array([[A_0_0, A_0_1],
           [A_1_0, A_1_1]], dtype=object)
    """
    out = np.empty(shape, dtype=object)
    for ix in np.ndindex(*shape):
        label = name + "".join(f"_{i}" for i in ix)
        out[ix] = sp.Symbol(label, real=real)
    return out


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


def _leaves_of(order: list) -> list:
    accs = [n for n in order if isinstance(n, AccumulateGrad)]
    accs.sort(key=lambda a: a._seq)
    return accs


def _to_public(a: np.ndarray):
    """An object array as users get it: a scalar, a column Matrix, a Matrix, an Array."""
    if a.ndim == 0:
        return a[()]
    if a.ndim == 1:
        return sp.Matrix(list(a))
    if a.ndim == 2:
        return sp.Matrix(a.tolist())
    return sp.Array(a.tolist())


# --------------------------------------------------------------------------- program
class Line:
    """One line of a straight-line program: ``name = expr``, elementwise for arrays.

    Attributes
    ----------
    name : str
        ``v3``, ``v̄3``, ``x̄``.
    symbols, expr : numpy object arrays
        The names of the elements and what each is defined as.
    kind : str
        ``"forward"`` or ``"adjoint"``.
    ops : tuple of str
        The PyTorch node names of the IR nodes the line comes from.
    """

    __slots__ = ("name", "symbols", "expr", "kind", "ops")

    def __init__(self, name, symbols, expr, kind, ops=()) -> None:
        self.name = name
        self.symbols = symbols
        self.expr = expr
        self.kind = kind
        self.ops = tuple(ops)

    def rhs(self) -> str:
        if self.expr.ndim == 0:
            return str(self.expr[()])
        return str(_to_list(self.expr))

    def __str__(self) -> str:
        text = f"{self.name} = {self.rhs()}"
        if self.ops:
            pad = max(1, 24 - _width(text))
            text += " " * pad + "# " + ", ".join(dict.fromkeys(self.ops))
        return text

    def __repr__(self) -> str:
        return f"Line({self.name} = {self.rhs()})"


def _bar(name: str) -> str:
    """The adjoint's name: a bar over the first letter (``x̄``, ``w̄1``, ``v̄3``)."""
    return name[:1] + BAR + name[1:]


def _width(text: str) -> int:
    return sum(1 for ch in text if ch != BAR)


def _to_list(a: np.ndarray):
    return a.tolist() if a.ndim else a[()]


def _element_names(name: str, shape: tuple) -> np.ndarray:
    return leaf_symbols(name, shape)


def _add_all(parts: list) -> np.ndarray:
    total = parts[0]
    for p in parts[1:]:
        total = total + p
    return _obj(total) if not isinstance(total, np.ndarray) else total


class GradientProgram:
    """Symbolic reverse mode of a traced scalar, as a straight-line program.

    Built by :func:`gradient_program`.  Forward lines ``v1 = ...`` come first, one per
    IR node; then adjoint lines ``v̄k = ...`` in reverse order, one per IR node on a path
    to the chosen leaves, ending with the leaves' adjoints ``x̄ = ...``.

    Attributes
    ----------
    lines : list of Line
    wrt : list of str
        The names of the leaves differentiated against.
    leaves : dict
        Leaf name -> (object array of its symbols, traced numeric value).
    output : Line
        The forward line of the output.
    """

    def __init__(self, lines, wrt, leaves, output, grads) -> None:
        self.lines = lines
        self.wrt = wrt
        self.leaves = leaves
        self.output = output
        self._grads = grads  # leaf name -> adjoint symbol array
        self._compiled = None

    def __len__(self) -> int:
        return len(self.lines)

    def __str__(self) -> str:
        return "\n".join(str(line) for line in self.lines)

    def __repr__(self) -> str:
        return f"<GradientProgram: {len(self.lines)} lines, wrt {', '.join(self.wrt)}>"

    @property
    def text(self) -> str:
        return str(self)

    def as_dict(self) -> dict:
        """A JSON-ready form: the lines (name, kind, node names, text) and the leaves.

        Examples
        --------
        >>> import symgrad
        >>> x = symgrad.tensor(1.0, requires_grad=True, name="x")
        >>> gradient_program(symgrad.exp(x)).as_dict()["lines"][0]
        {'name': 'v1', 'kind': 'forward', 'ops': ['ExpBackward0'], 'expr': 'exp(x)'}
        """
        return {"wrt": list(self.wrt),
                "leaves": {k: list(np.shape(s)) for k, (s, _) in self.leaves.items()},
                "lines": [{"name": ln.name, "kind": ln.kind, "ops": list(ln.ops),
                           "expr": ln.rhs()} for ln in self.lines]}

    def size(self) -> int:
        """Total operation count of all lines (SymPy ``count_ops``)."""
        return sum(int(sp.count_ops(e)) for line in self.lines
                   for e in np.ravel(line.expr))

    # -- numbers -----------------------------------------------------------------------
    def _compile(self):
        if self._compiled is None:
            steps = []
            for line in self.lines:
                for sym, e in zip(np.ravel(line.symbols), np.ravel(line.expr)):
                    e = sp.sympify(e)
                    args = sorted(e.free_symbols, key=lambda s: s.name)
                    fn = sp.lambdify(args, e, modules="numpy", dummify=True)
                    steps.append((sym, args, fn))
            self._compiled = steps
        return self._compiled

    def run(self, values: Mapping | None = None) -> dict:
        """Every line's value (symbol -> float) at ``values`` (default: traced values)."""
        env: dict = {}
        values = dict(values or {})
        for name, (syms, traced) in self.leaves.items():
            v = np.asarray(values.pop(name, traced), dtype=np.float64)
            if v.shape != syms.shape:
                raise ValueError(f"value of {name!r} has shape {v.shape}, expected "
                                 f"{syms.shape}")
            for ix in np.ndindex(*syms.shape):
                env[syms[ix]] = np.float64(v[ix])
        if values:
            raise ValueError(f"unknown variables: {', '.join(sorted(values))}")
        # numpy floats, not Python's: 1/0 is inf (as in reverse mode), not an exception.
        with np.errstate(all="ignore"):
            for sym, args, fn in self._compile():
                r = fn(*(env[a] for a in args))
                # A complex value (log of a negative constant) has no real meaning: nan.
                env[sym] = (np.float64(np.nan) if np.iscomplexobj(r) and np.imag(r) != 0
                            else np.float64(np.real(r)))
        return env

    def evaluate(self, values: Mapping | None = None) -> dict:
        """The gradients as numbers: leaf name -> float64 array (0-d for scalars).

        ``values`` maps leaf names to values; missing leaves take their traced values.

        Examples
        --------
        >>> import symgrad
        >>> x = symgrad.tensor([1.0, 2.0], requires_grad=True, name="x")
        >>> p = gradient_program((x * x).sum())
        >>> p.evaluate()["x"], p.evaluate({"x": [3.0, -1.0]})["x"]
        (array([2., 4.]), array([ 6., -2.]))
        """
        env = self.run(values)
        return {name: np.vectorize(lambda s: env[s], otypes=[np.float64])(syms)
                if syms.ndim else np.float64(env[syms[()]])
                for name, syms in self._grads.items()}

    def value(self, values: Mapping | None = None) -> float:
        """The output's value at ``values``."""
        env = self.run(values)
        return env[self.output.symbols[()]]

    # -- closed form ---------------------------------------------------------------------
    def inline(self) -> dict:
        """Every line's symbols -> its expression in terms of the leaves (unsimplified)."""
        env: dict = {}
        for line in self.lines:
            for sym, e in zip(np.ravel(line.symbols), np.ravel(line.expr)):
                env[sym] = sp.sympify(e).xreplace(env)
        return env

    def closed_form(self, simplify: bool = True, timeout: float | None = None) -> dict:
        """The gradients in terms of the leaves: name -> SymPy expression or Matrix.

        With ``simplify`` each element goes through :func:`sympy.simplify`, after
        dropping ``Piecewise`` branches that only hold on a null set (see
        :func:`almost_everywhere`).  Simplification can be slow on large programs:
        ``timeout`` (seconds) runs it in a child process and falls back to the raw
        inlined form when time runs out; ``simplify=False`` skips it.
        """
        env = self.inline()
        raw = {}
        for name, syms in self._grads.items():
            raw[name] = (np.frompyfunc(lambda s: env[s], 1, 1)(syms) if syms.ndim
                         else _obj(env[syms[()]]))
        done = raw
        if simplify:
            if timeout is None:
                done = _simplify_all(raw)
            else:
                status, value = run_with_timeout(_simplify_all, (raw,), timeout)
                if status == "ok":
                    done = value
        return {k: _to_public(np.asarray(a, dtype=object)) for k, a in done.items()}

    def to_latex(self) -> str:
        """The program as a LaTeX ``aligned`` block, one line per row.

        Examples
        --------
        >>> import symgrad
        >>> x = symgrad.tensor(1.0, requires_grad=True, name="x")
        >>> print(gradient_program(symgrad.sin(x)).to_latex())
        \\begin{aligned}
        v_{1} &= \\sin{\\left(x \\right)} \\\\
        \\bar{v}_{1} &= 1 \\\\
        \\bar{x} &= \\bar{v}_{1} \\cos{\\left(x \\right)}
        \\end{aligned}
        """
        rows = []
        for line in self.lines:
            lhs = sp.latex(sp.Symbol(_latex_name(line.name)))
            if line.expr.ndim == 0:
                rhs = sp.latex(_latex_symbols(sp.sympify(line.expr[()])))
            else:
                rhs = sp.latex(sp.Matrix(_to_list(np.frompyfunc(
                    lambda e: _latex_symbols(sp.sympify(e)), 1, 1)(line.expr))))
            rows.append(f"{lhs} &= {rhs}")
        return "\\begin{aligned}\n" + " \\\\\n".join(rows) + "\n\\end{aligned}"


def _latex_name(name: str) -> str:
    """``v̄3`` -> ``\\bar{v}_3``-style SymPy names: ``vbar_3`` prints as it should."""
    if BAR in name:
        base, rest = name.split(BAR, 1)
        return f"{base}bar{'_' + rest if rest and not rest.startswith('_') else rest}"
    if name[1:].isdigit():
        return f"{name[0]}_{name[1:]}"
    return name


def _latex_symbols(e):
    """Rename program symbols so that SymPy's LaTeX printer shows bars and subscripts."""
    if not isinstance(e, sp.Basic):
        return e
    return e.xreplace({s: sp.Symbol(_latex_name(s.name)) for s in e.free_symbols
                       if BAR in s.name or (s.name[:1] == "v" and s.name[1:2].isdigit())})


def _simplify_all(arrays: dict) -> dict:
    out = {}
    for name, a in arrays.items():
        one = lambda e: sp.simplify(almost_everywhere(sp.sympify(e)))  # noqa: E731
        out[name] = np.frompyfunc(one, 1, 1)(a) if a.ndim else _obj(one(a[()]))
    return out


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
        :class:`~symgrad.expr.Expression` is traced with scalar variables.
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
            env[sym] = sp.sympify(e).xreplace(env)
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
        op = n.op
        for i, x in enumerate(n.inputs):
            if not isinstance(x, Node) or x not in reaches:
                continue
            rule = op.grads[0] if op.variadic else op.grads[i]
            if rule is None:
                continue
            g_in = rule(SYMPY, bar, *saved, i) if op.variadic else rule(SYMPY, bar, *saved)
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
