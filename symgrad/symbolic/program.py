"""The gradient as a straight-line program: forward lines and adjoints, printed as text,
LaTeX or JSON."""
from __future__ import annotations

import math
from typing import Mapping

import numpy as np
import sympy as sp

from ..ops.kernels import check_exact_power
from .numeric import Unknown, evaluate
from .symbols import _obj, _to_public, leaf_symbols
from .tidy import tidy_all

__all__ = ["BAR", "Line", "GradientProgram"]


BAR = "\u0304"  # combining macron: x̄, v̄1


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


#: Functions SymPy evaluates at a number by reducing it modulo pi: at a number past the
#: floats' range (a constant such as exp(1e300)) that takes as many digits of pi as the
#: number has.
_PERIODIC = (sp.sin, sp.cos, sp.tan, sp.sec, sp.csc, sp.cot)


def substitute(e, env: dict):
    """``e.xreplace(env)``, refusing first what SymPy would evaluate without bound: a power
    of numbers too large to compute exactly (``0.5**(10**100)``), a trigonometric
    function of a huge number (``sec(exp(1e300))``), innermost first."""
    for p in e.atoms(sp.Pow):
        check_exact_power(p.base.xreplace(env), p.exp.xreplace(env))
    for f in sorted(e.atoms(*_PERIODIC), key=sp.count_ops):
        a = f.args[0].xreplace(env)
        if a.is_number:
            try:
                big = not math.isfinite(float(a))
            except (TypeError, ValueError, OverflowError):
                big = True
            if big:
                raise ValueError(f"{type(f).__name__} of a number too large to compute "
                                 "exactly (past the floats' range)")
    return e.xreplace(env)


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
        >>> symgrad.gradient_program(symgrad.exp(x)).as_dict()["lines"][0]
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
                    if e.has(sp.zoo):  # (complex infinity has no float: nan, as 0**-1 is)
                        e = e.xreplace({sp.zoo: sp.nan})
                    steps.append((sym, e))
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
            for sym, e in self._compile():
                try:
                    r = evaluate(e, env)
                except Unknown:  # (a node the walk does not know: compiled, once)
                    args = sorted(e.free_symbols, key=lambda s: s.name)
                    r = sp.lambdify(args, e, modules="numpy", dummify=True)(
                        *(env[a] for a in args))
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
        >>> p = symgrad.gradient_program((x * x).sum())
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
    def sizes(self) -> dict:
        """Every line's symbols -> the operation count its inlined expression would have
        (estimated without building it: the line's own operations plus, for each use of
        an earlier line, that line's count).  One walk of each line (a sum of n earlier
        lines once, not n times: 1,000 terms took 37 s)."""
        if getattr(self, "_sizes", None) is not None:
            return self._sizes
        size: dict = {}
        for line in self.lines:
            for sym, e in zip(np.ravel(line.symbols), np.ravel(line.expr)):
                e = sp.sympify(e)
                size[sym] = int(sp.count_ops(e)) + sum(
                    size[a] for a in sp.preorder_traversal(e) if a.is_Symbol and a in size)
        self._sizes = size
        return size

    def _needed(self, grads: dict) -> set:
        """The line symbols the gradients in ``grads`` are built from."""
        expr_of = {sym: sp.sympify(e) for line in self.lines
                   for sym, e in zip(np.ravel(line.symbols), np.ravel(line.expr))}
        need: set = set()
        stack = [s for syms in grads.values() for s in np.ravel(syms)]
        while stack:
            s = stack.pop()
            if s in need or s not in expr_of:
                continue
            need.add(s)
            stack.extend(expr_of[s].free_symbols)
        return need

    def inline(self, only: set | None = None) -> dict:
        """Every line's symbols (or those in ``only``) -> its expression in terms of the
        leaves (unsimplified)."""
        env: dict = {}
        for line in self.lines:
            for sym, e in zip(np.ravel(line.symbols), np.ravel(line.expr)):
                if only is not None and sym not in only:
                    continue
                env[sym] = substitute(sp.sympify(e), env)
        return env

    def closed_form(self, simplify: bool | str = True, timeout: float = 10.0,
                    max_ops: int | None = None) -> dict:
        """The gradients in terms of the leaves: name -> SymPy expression or Matrix.

        ``simplify`` says how each element is tidied (:mod:`~symgrad.symbolic.tidy`):
        ``"auto"`` drops null-set ``Piecewise`` branches, pulls out common factors and
        rewrites small elements cheaply; ``"full"`` (or ``True``) also runs
        ``sympy.simplify`` on all of them; ``"none"`` (or ``False``) keeps the inlined
        form.  Rewrites run in a child process given ``timeout`` seconds and are kept only
        where they are shorter.  With ``max_ops``, a gradient whose closed form would
        have more operations is not built: it is a symbol that says so (the program's
        lines give it, in linear size).
        """
        mode = {True: "full", False: "none"}.get(simplify, simplify)
        sizes = self.sizes() if max_ops is not None else {}
        shown = {k: s for k, s in self._grads.items()
                 if max(sizes.get(e, 0) for e in np.ravel(s)) <= (max_ops or 0)} \
            if max_ops is not None else self._grads
        env = self.inline(self._needed(shown) if max_ops is not None else None)
        raw = {}
        for name, syms in self._grads.items():
            big = max((sizes.get(s, 0) for s in np.ravel(syms)), default=0)
            if name not in shown:
                raw[name] = np.full(syms.shape, sp.Symbol(
                    f"(too large to print: about {big} operations; --steps gives it line "
                    "by line)"), dtype=object)
                continue
            raw[name] = (np.frompyfunc(lambda s: env[s], 1, 1)(syms) if syms.ndim
                         else _obj(env[syms[()]]))
        done = tidy_all(raw, mode, timeout)
        return {k: _to_public(np.asarray(a, dtype=object)) for k, a in done.items()}

    def to_latex(self) -> str:
        """The program as a LaTeX ``aligned`` block, one line per row.

        Examples
        --------
        >>> import symgrad
        >>> x = symgrad.tensor(1.0, requires_grad=True, name="x")
        >>> print(symgrad.gradient_program(symgrad.sin(x)).to_latex())
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
