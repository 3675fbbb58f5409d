"""Symbolic forward mode on the graph: the tangent program.

Forward mode carries, beside each value ``v``, its tangent ``v̇``: the derivative of
``v`` along a direction of the inputs, whose tangents ``ẋ, ẏ`` (the seeds) are symbols.
:func:`tangent_program` walks the same IR as reverse mode, in evaluation order, and
writes after each line ``vk = ...`` the line ``v̇k = ...``: the sum over the node's
inputs of the local derivative times the input's tangent (``v̇2 = cos(v1)·v̇1``).

The local derivatives are not a second table: each node's Jacobian-vector product is
read off the op's own gradient rule (its vector-Jacobian product) run on the SymPy
backend with a symbolic cotangent ``u``: the rule gives ``Σ_k J[k, j] u[k]`` for input
element ``j``, so ``(J ẋ)[k]`` is the coefficient of ``u[k]`` in ``Σ_j vjp[j] ẋ[j]``.
The rule is linear in ``u``, so that coefficient is a derivative by ``u[k]``.

Examples
--------
>>> import symgrad
>>> p = tangent_program(symgrad.parse("sin(x*y)"))
>>> print(p)
v1 = x*y                # MulBackward0
v̇1 = y·ẋ + x·ẏ
v2 = sin(v1)            # SinBackward0
v̇2 = cos(v1)·v̇1
>>> p.closed_form()
(x*ẏ + ẋ*y)*cos(x*y)
>>> round(float(p.directional({"x": 1, "y": 2}, {"x": 1, "y": 0})), 6)
-0.832294
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import sympy as sp

from ..api.tensor import Tensor
from ..ir.node import AccumulateGrad, Node
from ..ir.walk import input_gradients, topological
from .backend import SYMPY
from .bridge import _saved_values, _trace
from .program import GradientProgram, Line, _element_names
from .symbols import _nicen, _nicen_all, _obj, _to_public, as_sympy
from .tidy import tidy_all

__all__ = ["DOT", "dotted", "TangentLine", "TangentProgram", "tangent_program"]

DOT = "\u0307"  # combining dot above: ẋ, v̇1


def dotted(name: str) -> str:
    """The tangent's name: a dot over the first letter (``ẋ``, ``v̇3``, ``ẋ_0``)."""
    return name[:1] + DOT + name[1:]


def _term(coef, tangent) -> tuple:
    """``(sign, coef·ṫ)`` as a line prints it: 1 not written, a coefficient that is a sum,
    a quotient or a fraction in parentheses (``(1/v7)·v̇6``)."""
    sign = ""
    if isinstance(coef, sp.Basic) and not coef.is_Add and coef.could_extract_minus_sign():
        sign, coef = "-", -coef
    if coef == 1:
        return sign, str(tangent)
    text = _iverson(coef)
    if text is None:
        text = str(coef)
        if isinstance(coef, sp.Add) or "/" in text or " " in text:
            text = f"({text})"
    return sign, f"{text}·{tangent}"


def _iverson(e) -> str | None:
    """A step's derivative ``Piecewise((0, v <= 0), (1, True))`` as ``[v > 0]``."""
    if not isinstance(e, sp.Piecewise) or len(e.args) != 2 or e.args[1][1] != sp.true:
        return None
    (a, cond), (b, _) = e.args
    if {a, b} != {sp.S.Zero, sp.S.One}:
        return None
    return f"[{cond if a == 1 else sp.Not(cond)}]"


def chain_text(e, tangents) -> str:
    """A tangent expression as a sum of ``local·ṫ`` terms (``cos(v1)·v̇1``).

    Examples
    --------
    >>> a, b, t, s = sp.symbols("a b t s")
    >>> chain_text(sp.cos(a) * t + (a + b) * s, [t, s])
    'cos(a)·t + (a + b)·s'

    ``tangents`` in the order the terms are written (the node's inputs' order).
    """
    e = sp.sympify(e)
    used = [t for t in tangents if t in e.free_symbols]
    if not used:
        return str(e)
    parts = sp.collect(sp.expand(e, deep=False, mul=True, multinomial=False, power_exp=False,
                                 power_base=False, log=False), used, evaluate=False)
    if any(k != 1 and k not in used for k in parts) or sp.S.One in parts:
        return str(e)  # (not linear in the tangents as written: printed as it is)
    rank = {t: i for i, t in enumerate(tangents)}
    order = sorted(parts, key=lambda t: rank[t])
    text = ""
    for t in order:
        sign, piece = _term(sp.factor_terms(parts[t]), t)
        text += f"{sign}{piece}" if not text else f" {sign or '+'} {piece}"
    return text


class TangentLine(Line):
    """A tangent line ``v̇k = ...``: printed as local derivatives times tangents."""

    __slots__ = ("tangents",)

    def __init__(self, name, symbols, expr, tangents: list, ops=()) -> None:
        super().__init__(name, symbols, expr, "tangent", ops)
        self.tangents = tangents

    def rhs(self) -> str:
        if self.expr.ndim == 0:
            return chain_text(self.expr[()], self.tangents)
        texts = np.frompyfunc(lambda e: chain_text(e, self.tangents), 1, 1)(self.expr)
        return "[" + ", ".join(_nested(texts)) + "]" if texts.ndim == 1 else str(
            np.asarray(texts).tolist()).replace("'", "")

    def __str__(self) -> str:
        return f"{self.name} = {self.rhs()}"


def _nested(texts) -> list:
    return [str(t) for t in texts]


class TangentProgram(GradientProgram):
    """Symbolic forward mode of a traced tensor, as a straight-line program.

    Built by :func:`tangent_program`: each forward line ``vk = ...`` is followed by its
    tangent line ``v̇k = ...`` (evaluation order).  The seeds are the inputs' tangents
    ``ẋ, ẏ`` (element symbols ``ẋ_0`` for vectors); numbers come from
    :meth:`directional`, closed forms from :meth:`closed_form`.

    Attributes
    ----------
    seeds : dict
        Input name -> object array of its tangent's symbols.
    tangent : numpy object array
        The symbols of the output's tangent (the output itself for a leaf).
    """

    def __init__(self, lines, wrt, leaves, output, seeds, tangent) -> None:
        everything = dict(leaves)
        everything.update({dotted(k): (s, np.zeros(s.shape)) for k, s in seeds.items()})
        super().__init__(lines, wrt, everything, output, {"f": tangent})
        self.inputs = dict(leaves)
        self.seeds = seeds
        self.tangent = tangent

    def __repr__(self) -> str:
        return f"<TangentProgram: {len(self.lines)} lines, seeds {', '.join(self.seeds)}>"

    def _values(self, at: Mapping | None, direction: Mapping | None) -> dict:
        values = {k: v for k, v in (at or {}).items() if k in self.inputs}
        direction = dict(direction or {})
        unknown = [k for k in direction if k not in self.seeds]
        if unknown:
            raise ValueError(f"direction for {', '.join(unknown)}: not an input "
                             f"differentiated against (inputs: {', '.join(self.seeds)})")
        for k, s in self.seeds.items():
            values[dotted(k)] = np.broadcast_to(
                np.asarray(direction.get(k, 0.0), dtype=np.float64), s.shape)
        return values

    def directional(self, at: Mapping | None = None, direction: Mapping | None = None):
        """The output's tangent ``J v`` at ``at`` (default: the traced values) in the
        direction ``v`` (input name -> tangent; missing inputs 0): a float64 array."""
        return self.evaluate(self._values(at, direction))["f"]

    def tangents(self, at: Mapping | None = None, direction: Mapping | None = None) -> dict:
        """Every line's value: line name -> float64 array (values and tangents)."""
        env = self.run(self._values(at, direction))
        return {ln.name: np.vectorize(lambda s: env[s], otypes=[np.float64])(ln.symbols)
                for ln in self.lines}

    def jacobian(self, at: Mapping | None = None) -> np.ndarray:
        """The Jacobian by forward mode, one pass per input element (its columns):
        shape ``output elements × input elements`` (inputs in :attr:`seeds` order)."""
        cols = []
        for k, s in self.seeds.items():
            for ix in np.ndindex(*s.shape):
                e = np.zeros(s.shape)
                e[ix] = 1.0
                cols.append(np.ravel(self.directional(at, {k: e})))
        out = np.ravel(self.tangent).size
        return np.stack(cols, axis=1) if cols else np.zeros((out, 0))

    def closed_form(self, simplify: bool | str = "auto", timeout: float = 10.0,
                    max_ops: int | None = None):
        """The output's tangent in terms of the inputs and the seeds (SymPy)."""
        made = {s for ln in self.lines for s in np.ravel(ln.symbols)}
        if not all(s in made for s in np.ravel(self.tangent)):  # (f = x: a seed, or 0)
            return _to_public(np.asarray(self.tangent, dtype=object))
        return super().closed_form(simplify, timeout, max_ops)["f"]

    def jacobian_matrix(self, simplify: bool | str = "auto", timeout: float = 10.0):
        """The Jacobian as a SymPy Matrix: each column the coefficient of one seed."""
        f = np.ravel(np.asarray(_array(self.closed_form("none")), dtype=object))
        seeds = [s for a in self.seeds.values() for s in np.ravel(a)]
        j = np.array([[sp.diff(e, s) for s in seeds] for e in f], dtype=object).reshape(
            len(f), len(seeds))
        return sp.Matrix(tidy_all({"": j}, simplify, timeout)[""].tolist())

    def to_latex(self) -> str:
        r"""The program as a LaTeX ``aligned`` block (``\dot{v}_{1}``)."""
        ren = {}
        for ln in self.lines:
            for s in np.ravel(ln.symbols):
                ren[s] = sp.Symbol(_latex(s.name))
        for a in self.seeds.values():
            for s in np.ravel(a):
                ren[s] = sp.Symbol(_latex(s.name))
        rows = []
        for ln in self.lines:
            e = np.asarray(np.frompyfunc(lambda x: sp.sympify(x).xreplace(ren), 1, 1)(ln.expr),
                           dtype=object)
            rhs = sp.latex(e[()] if e.ndim == 0 else sp.Matrix(e.tolist()))
            rows.append(f"{sp.latex(sp.Symbol(_latex(ln.name)))} &= {rhs}")
        return "\\begin{aligned}\n" + " \\\\\n".join(rows) + "\n\\end{aligned}"


def _latex(name: str) -> str:
    """``v̇1`` -> ``vdot_1`` (SymPy prints ``\\dot{v}_{1}``), ``v1`` -> ``v_1``."""
    base, dot, rest = (name.partition(DOT) if DOT in name else (name[:1], "", name[1:]))
    base = base + ("dot" if dot else "")
    if rest and not rest.startswith("_"):
        rest = "_" + rest
    return base + rest


def _array(e):
    if isinstance(e, sp.MatrixBase):
        return np.array(e.tolist(), dtype=object)
    if isinstance(e, sp.NDimArray):
        return np.array(e.tolist(), dtype=object)
    return _obj(e)


def tangent_program(t, wrt: Sequence | None = None, names: Mapping | None = None
                    ) -> TangentProgram:
    """Symbolic forward mode on the graph of ``t``: a straight-line tangent program.

    Parameters
    ----------
    t : Tensor or Expression
        A traced tensor of any shape (forward mode needs no scalar output); a parsed
        expression is traced with scalar variables (see
        :meth:`Expression.tangent_program` for vectors).
    wrt : sequence of str, optional
        The inputs given a tangent (seed); default: every leaf.
    names : mapping, optional
        ``id(leaf) -> name``, overriding the leaves' own names.

    Returns
    -------
    TangentProgram

    Examples
    --------
    >>> import symgrad
    >>> x = symgrad.tensor([1.0, 2.0], requires_grad=True, name="x")
    >>> print(tangent_program(symgrad.exp(x)))
    v1 = [exp(x_0), exp(x_1)] # ExpBackward0
    v̇1 = [v1_0·ẋ_0, v1_1·ẋ_1]
    """
    if not isinstance(t, Tensor):  # an Expression: its graph
        t = t.trace()
    lines, values, leaves, root = _trace(t, names)
    if values is None:
        raise ValueError("the expression has no variables: its tangent is 0")
    targets = list(leaves) if wrt is None else list(dict.fromkeys(wrt))
    for w in targets:
        if w not in leaves:
            raise ValueError(f"{w!r} is not an input of this graph (inputs: "
                             f"{', '.join(leaves) or 'none'})")
    seeds = {k: _element_names(dotted(k), leaves[k][0].shape) for k in targets}
    order = topological(root)
    tangent: dict = {}  # node -> symbol array of its tangent
    for n in order:
        if isinstance(n, AccumulateGrad):
            name = next(k for k, (s, _) in leaves.items() if s is values[n])
            if name in seeds:
                tangent[n] = seeds[name]
    out_lines: list = []
    by_symbols = {id(line.symbols): line for line in lines}
    for n in order:
        if isinstance(n, AccumulateGrad):
            continue
        line = by_symbols[id(values[n])]
        out_lines.append(line)
        moving = [x for x in n.inputs if isinstance(x, Node) and x in tangent]
        if not moving:
            continue
        expr = _jvp(n, values, tangent)
        syms = _element_names(dotted(line.name), values[n].shape)
        used = list(dict.fromkeys(s for x in moving for s in np.ravel(tangent[x])))
        out_lines.append(TangentLine(dotted(line.name), syms, expr, used))
        tangent[n] = syms
    if isinstance(root, AccumulateGrad):
        out_tangent = tangent.get(root, np.zeros(values[root].shape, dtype=object))
        output = None
    else:
        out_tangent = tangent.get(root)
        if out_tangent is None:  # (no input given a tangent reaches the output)
            out_tangent = np.full(values[root].shape, sp.S.Zero, dtype=object)
        output = by_symbols[id(values[root])]
    return TangentProgram(out_lines, targets, leaves, output, seeds, out_tangent)


def _jvp(n: Node, values: dict, tangent: dict) -> np.ndarray:
    """The tangent of node ``n``'s output: its rule's vector-Jacobian product with a
    symbolic cotangent, paired with the inputs' tangents, differentiated by the
    cotangent."""
    out = values[n]
    u = np.empty(out.shape, dtype=object)
    for ix in np.ndindex(*out.shape):
        u[ix] = sp.Dummy(f"u{'_'.join(map(str, ix))}", real=True)
    args = [values[x] if isinstance(x, Node) else None if x is None else _obj(
        as_sympy(x) if isinstance(x, Tensor) else x) for x in n.inputs]
    saved = _saved_values(n, args, n.attrs, out)
    pairing = sp.S.Zero
    for i, x, g_in in input_gradients(n, SYMPY, u if u.ndim else u[()], saved, tangent):
        shape = np.shape(args[i])
        if np.shape(g_in) != shape:
            g_in = SYMPY.sum_to(g_in, shape)
        g_in = np.broadcast_to(np.asarray(g_in, dtype=object), shape)
        pairing += sp.Add(*[sp.sympify(a) * b for a, b in
                            zip(np.ravel(g_in), np.ravel(tangent[x]))])
    pairing = sp.expand(pairing, deep=False, mul=True, multinomial=False,
                        power_exp=False, power_base=False, log=False)
    # The coefficient of each u[k], term by term (a term is mostly u[k] times the rest;
    # SymPy's diff of the whole sum would walk every term once per k).
    where = {u[ix]: ix for ix in np.ndindex(*out.shape)}
    parts: dict = {ix: [] for ix in where.values()}
    todo = list(sp.Add.make_args(pairing))
    while todo:
        term = todo.pop()
        hit = term.free_symbols & where.keys()
        if len(hit) == 1:
            (k,) = hit
            rest, dep = term.as_independent(k, as_Add=False)
            if dep == k:
                parts[where[k]].append(rest)
                continue
        if len(hit) > 1 and term.is_Mul:  # ((W.T @ u)_j · ẋ_j: distributed, once)
            spread = sp.expand(term, deep=False, mul=True, multinomial=False,
                               power_exp=False, power_base=False, log=False)
            if spread.is_Add:
                todo.extend(spread.args)
                continue
        for k in hit:
            parts[where[k]].append(term.diff(k))
    jv = np.empty(out.shape, dtype=object)
    for ix, terms in parts.items():
        jv[ix] = sp.Add(*terms)
    return _nicen_all(jv) if jv.ndim else _obj(_nicen(jv[()]))


def directional_sympy(f, seeds: dict, symbols: dict):
    """SymPy's directional derivative of ``f`` (an expression or Matrix over the
    inputs' element symbols): ``Σ ∂f/∂x_j ẋ_j``; the oracle the tests compare with."""
    f = _array(f)
    total = np.zeros(f.shape, dtype=object)
    for k, s in seeds.items():
        for a, b in zip(np.ravel(symbols[k]), np.ravel(s)):
            total = total + np.asarray(np.frompyfunc(lambda e: sp.diff(e, a) * b, 1, 1)(f),
                                       dtype=object)
    total = np.asarray(total, dtype=object)
    return _to_public(total if total.ndim else _obj(total[()]))

