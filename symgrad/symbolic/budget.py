"""The work an expression asks for, estimated before any is done, and the limits on it.

From the parsed expression and the variables' shapes alone (no values are computed, no
SymPy is loaded) :func:`estimate` finds the shape of every intermediate and counts:

* **elements** -- the largest intermediate (a Kronecker product of Kronecker products
  is found here: ``kron(kron(A, A), A)`` of 100x100 matrices has 10^12 elements);
* **terms** -- the symbolic work: for every intermediate, its elements times the
  operations each needs (a matrix product's inner size, a sum's count; a symbolic
  determinant of an n x n matrix n!·n^2, each element of its inverse n!), times three
  for the forward line and the adjoints of the chain rule's program;
* **Hessian entries** -- n^2 over the n elements differentiated against (times (m!)^2
  through a symbolic inverse, logdet or solve of an m x m matrix).

:func:`check` compares an estimate with the limits below and raises one
:class:`BudgetError` naming the limit and the option that raises it.  The limits are
module constants read at call time (the command line's ``--max-elements``,
``--max-terms`` and ``--max-hessian`` set them for one command with :func:`limits`), so
that with the defaults nothing valid takes much more than about 10 s or 1 GB.  A second
bound applies after the chain rule's program is built, to the closed forms it would
inline (:func:`closed_form_ops`): past :data:`MAX_CLOSED_FORM_OPS` operations they are
not built (the program, the vector forms and the values still are).

Examples
--------
>>> from symgrad.symbolic.parser import parse
>>> e = estimate(parse("sum(kron(kron(A, A), A))"), {"A": (100, 100)})
>>> e.elements, e.largest
(1000000000000, 'kron')
>>> check(e)
Traceback (most recent call last):
...
symgrad.symbolic.budget.BudgetError: kron: an intermediate of 1,000,000,000,000 elements \
is more than the limit of 1,000,000 (raise it with --max-elements; in Python \
symgrad.symbolic.budget.MAX_ELEMENTS)
>>> estimate(parse("sum((A @ x - b)**2)"), {"A": (20, 20), "x": (20,), "b": (20,)}).terms
1443
"""
from __future__ import annotations

import contextlib
import heapq
import math
import sys
from dataclasses import dataclass, field
from typing import Iterator, Mapping

import numpy as np

from ..errors import SymgradError
from ..ops import shape_rules as W
from ..ops import tables as T
from . import syntax as S
from .parser import FUNCTION_OPS

__all__ = ["MAX_ELEMENTS", "MAX_TERMS", "MAX_HESSIAN", "MAX_SHOWN_ELEMENTS",
           "MAX_CLOSED_FORM_OPS", "MAX_TIDIED_OPS", "BudgetError", "Estimate", "estimate", "check",
           "check_expression", "limits", "closed_form_ops", "rank_choices"]

#: The most elements any intermediate value may have (8 MB of float64 each; a graph
#: keeps a few per node).  ``--max-elements``.
MAX_ELEMENTS = 1_000_000
#: The most symbolic terms (elements x operations, forward and adjoint) the chain rule's
#: program may have (SymPy takes a few milliseconds a term: 2,400 elements squared and
#: summed, 14,400 terms, took 30 s).  ``--max-terms``.
MAX_TERMS = 6_000
#: The most entries of a symbolic Hessian (n^2 for n elements differentiated against:
#: 2,500 is 50 of them).  ``--max-hessian``.
MAX_HESSIAN = 2_500
#: Past this many elements per variable, ``diff --elements`` prints the vector or matrix
#: form only, and says so.
MAX_SHOWN_ELEMENTS = 500
#: Past this many operations in all, the gradients' closed forms (element by element) are
#: not built: each element would be tidied by SymPy (a 20x20 least-squares gradient has
#: 36,000 operations and takes about 10 s).
MAX_CLOSED_FORM_OPS = 40_000
#: Past this many operations in all, ``check`` shows the true gradient untidied (its
#: comparison is done by then: tidying is for the reader, 10 s for a 20x20).
MAX_TIDIED_OPS = 5_000

_OPTIONS = {"MAX_ELEMENTS": "--max-elements", "MAX_TERMS": "--max-terms",
            "MAX_HESSIAN": "--max-hessian"}
#: Each term is met about three times: its forward line, its adjoint, its closed form.
_PROGRAM = 3
#: A sum of k symbolic terms is built one term at a time (numpy's reduction of an object
#: array: each step copies the sum so far), k²/2 in all: counted as k²/250 more terms
#: (the sum of 1,000 squares took 7.6 s to build, of 300 0.8 s).
_SEQUENTIAL = 250


def _count(n: int) -> str:
    """``12,345``, or ``about 10^23`` past what a person reads digit by digit."""
    return f"{n:,}" if n < 10 ** 15 else f"about 10^{len(str(n)) - 1}"


class BudgetError(SymgradError, ValueError):
    """Valid input whose work is past a limit: ``limit`` names the constant of this
    module (``"MAX_TERMS"``), ``option`` the command line's option that raises it."""

    def __init__(self, what: str, count: int, limit: str) -> None:
        self.count, self.limit = count, limit
        self.option = _OPTIONS[limit]
        value = getattr(sys.modules[__name__], limit)
        super().__init__(f"{what} is more than the limit of {value:,} (raise it with "
                         f"{self.option}; in Python symgrad.symbolic.budget.{limit})")


@dataclass
class Estimate:
    """The work of an expression at given shapes (see :func:`estimate`)."""

    #: the largest intermediate's elements, and what made it
    elements: int = 0
    largest: str = ""
    #: the symbolic terms of the chain rule's program
    terms: int = 0
    #: the largest square matrix a symbolic elimination (det, inverse, solve) works on
    elimination: int = 0
    #: the largest square matrix a symbolic inverse, logdet or solve works on (rational
    #: functions: their second derivatives grow fastest)
    rational: int = 0
    #: the elements differentiated against (a Hessian has hessian_n ** 2 entries)
    hessian_n: int = 0
    #: variable -> shape, as estimated (given, else found)
    shapes: dict = field(default_factory=dict)

    def add(self, other: "Estimate") -> "Estimate":
        """The work of both (two expressions checked together: a function and a claim)."""
        big = other.elements > self.elements
        return Estimate(max(self.elements, other.elements),
                        other.largest if big else self.largest, self.terms + other.terms,
                        max(self.elimination, other.elimination),
                        max(self.rational, other.rational),
                        max(self.hessian_n, other.hessian_n), {**other.shapes, **self.shapes})


class _Mismatch(Exception):
    """The shapes do not fit (the evaluator will say how, with a column)."""


def _broadcast(a: tuple, b: tuple) -> tuple:
    out = []
    for x, y in zip(((1,) * (len(b) - len(a)) + a), ((1,) * (len(a) - len(b)) + b)):
        if x != y and 1 not in (x, y):
            raise _Mismatch
        out.append(max(x, y) if 0 not in (x, y) else 0)
    return tuple(out)


def _matmul(a: tuple, b: tuple) -> tuple[tuple, int, int]:
    """The shape of ``a @ b``, its inner size: matmul's work rule."""
    try:
        return W.matmul(a, b)
    except T.ShapeMismatch:
        raise _Mismatch from None


def _call(name: str, args: list) -> tuple[tuple, int, int]:
    """(shape, operations per element, elimination size) of ``name(*args)``: the work
    rule registered beside the op (``symgrad.ops.tables.WORK``), else elementwise."""
    rule = T.WORK.get(FUNCTION_OPS.get(name))
    if rule is not None:
        try:
            return rule(*args)
        except T.ShapeMismatch:
            raise _Mismatch from None
    if len(args) == 2:
        return _broadcast(args[0], args[1]), 1, 0
    return args[0], 1, 0


def _walk(tree, shapes: Mapping) -> Estimate:
    """The estimate at known shapes (every variable's), or _Mismatch."""
    est = Estimate()
    out: list = []
    stack = [(tree, False)]
    while stack:  # (post-order, no recursion)
        node, done = stack.pop()
        kids = (node.left, node.right) if isinstance(node, S.BinOp) else \
            (node.operand,) if isinstance(node, (S.Neg, S.Transpose)) else \
            tuple(node.args) if isinstance(node, S.Call) else ()
        if not done:
            stack.append((node, True))
            stack.extend((k, False) for k in reversed(kids))
            continue
        args = out[len(out) - len(kids):]
        del out[len(out) - len(kids):]
        ops, elim, what = 1, 0, ""
        if isinstance(node, S.Name):
            shape = tuple(shapes.get(node.name, ()))
            what = node.name
        elif isinstance(node, S.Num):
            shape = ()
        elif isinstance(node, S.Neg):
            shape = args[0]
            what = "-"
        elif isinstance(node, S.Transpose):
            shape = args[0][::-1]
            what = ".T"
        elif isinstance(node, S.BinOp):
            what = node.op
            if node.op == "@":
                shape, ops, _ = _matmul(*args)
            else:
                shape = _broadcast(*args)
        elif isinstance(node, S.Call):
            what = node.func
            shape, ops, elim = _call(node.func, args)
        else:  # (a node this module does not know: as large as its operands)
            shape = max(args, key=math.prod, default=())
        n = math.prod(shape)
        if not elim:
            ops += ops * ops // _SEQUENTIAL
        if n > est.elements:
            est.elements, est.largest = n, what
        est.terms += _PROGRAM * max(n, 1) * ops if not isinstance(node, (S.Name, S.Num)) \
            else 0
        est.elimination = max(est.elimination, elim)
        if isinstance(node, S.Call) and FUNCTION_OPS.get(node.func) in T.RATIONAL:
            est.rational = max(est.rational, elim)
        out.append(shape)
    return est


def rank_choices(prefs: tuple, limit: int) -> Iterator[tuple]:
    """Ranks (0 scalar, 1 vector, 2 matrix) per variable, fewest changes from ``prefs``
    first: a best-first walk, so many variables never mean a product of all choices (the
    order in which ``Expression.shape_values`` tries them, and the estimate too)."""
    heap = [(0, prefs)]
    seen = {prefs}
    while heap and limit > 0:
        _, ranks = heapq.heappop(heap)
        yield ranks
        limit -= 1
        for i in range(len(ranks)):
            for r in range(3):
                nxt = ranks[:i] + (r,) + ranks[i + 1:]
                if nxt not in seen:
                    seen.add(nxt)
                    heapq.heappush(heap, (sum(abs(a - b) for a, b in zip(nxt, prefs)), nxt))


def estimate(tree, shapes: Mapping | None = None, wrt=None) -> Estimate:
    """The work of the expression ``tree`` (a parser node, or an object with ``.tree``)
    with the given shapes (variable -> tuple of sizes); variables without one get the
    shapes :meth:`~symgrad.symbolic.expression.Expression.shape_values` would find (the
    sizes of the given ones, smallest ranks first).  ``wrt``: the variables a Hessian
    would be over (default: all)."""
    tree = getattr(tree, "tree", tree)
    shapes = {k: tuple(int(d) for d in s) for k, s in (shapes or {}).items()}
    variables = S.free_variables(tree)
    free = [v for v in variables if v not in shapes]
    found = None
    if free:
        sizes = list(dict.fromkeys(d for s in shapes.values() for d in s))[:4] or [3]
        prefs = tuple(2 if v[:1].isupper() else 0 for v in free)
        for n in sizes:
            for ranks in rank_choices(prefs, limit=200 // len(sizes)):
                cand = {**shapes, **{v: (n,) * r for v, r in zip(free, ranks)}}
                try:
                    est = _walk(tree, cand)
                except _Mismatch:
                    continue
                found = est, cand
                break
            if found:
                break
    if found is None:
        shapes = {**shapes, **{v: () for v in free}}
        try:
            found = _walk(tree, shapes), shapes
        except _Mismatch:  # (the evaluator says what does not fit)
            found = Estimate(), shapes
    est, est.shapes = found
    est.hessian_n = sum(math.prod(est.shapes.get(v, ())) for v in (wrt or variables))
    return est


def check(est: Estimate, symbolic: bool = True, hessian: bool = False) -> Estimate:
    """``est`` if it is within the limits, else :class:`BudgetError`.  ``symbolic``:
    the work is symbolic too (``diff``, ``check``; ``draw`` computes numbers only);
    ``hessian``: a Hessian is asked for."""
    if est.elements > MAX_ELEMENTS:
        raise BudgetError(f"{est.largest}: an intermediate of {_count(est.elements)} "
                          "elements", est.elements, "MAX_ELEMENTS")
    if not symbolic:
        return est
    if est.terms > MAX_TERMS:
        why = (f" with a symbolic determinant, inverse or solve of a {est.elimination}x"
               f"{est.elimination} matrix" if est.elimination else "")
        raise BudgetError(f"the symbolic work{why} (elements x operations), "
                          f"{_count(est.terms)} terms,", est.terms, "MAX_TERMS")
    # (through a symbolic inverse of an n x n matrix each entry counts (n!)² times)
    entries = est.hessian_n ** 2 * math.factorial(min(est.rational, 20)) ** 2
    if hessian and entries > MAX_HESSIAN:
        why = (f" through a symbolic inverse, logdet or solve of a {est.rational}x"
               f"{est.rational} matrix (entries x (n!)²)" if est.rational > 1 else "")
        raise BudgetError(f"the Hessian over {est.hessian_n:,} elements{why}, "
                          f"{_count(entries)} entries,", entries, "MAX_HESSIAN")
    return est


def check_expression(expr, shapes: Mapping | None = None, at: Mapping | None = None,
                     wrt=None, hessian: bool = False, also=(),
                     symbolic: bool = True) -> Estimate:
    """:func:`estimate` and :func:`check` in one, for the library's entry points:
    ``shapes`` the given shapes (sizes), ``at`` values whose shapes count, ``also``
    more expressions worked on with the same shapes (a claimed gradient)."""
    given = {**{k: tuple(s) for k, s in (shapes or {}).items()},
             **{k: np.shape(v) for k, v in (at or {}).items() if not isinstance(v, str)}}
    est = estimate(expr, given, wrt)
    for other in also:
        if other is not None:
            est = est.add(estimate(other, est.shapes))
    return check(est, symbolic=symbolic, hessian=hessian)


def closed_form_ops(program, max_ops: int, limit: int | None = None) -> int:
    """The ``max_ops`` to build the closed forms of ``program`` (a GradientProgram)
    with: ``max_ops`` itself, or 0 (none built) when all of them together would have
    more than ``limit`` operations (default :data:`MAX_CLOSED_FORM_OPS`)."""
    limit = MAX_CLOSED_FORM_OPS if limit is None else limit
    sizes = program.sizes()
    # (an element past max_ops is not built anyway: it counts as max_ops)
    total = sum(min(sizes.get(s, 0), max_ops) for syms in program._grads.values()
                for s in np.ravel(syms))
    return max_ops if total <= limit else 0


@contextlib.contextmanager
def limits(**values: int | None) -> Iterator[None]:
    """The limits changed for the ``with`` block (``max_terms=50_000``; None keeps
    one), and restored after it."""
    module = sys.modules[__name__]
    names = {k: k.upper() for k, v in values.items() if v is not None}
    old = {n: getattr(module, n) for n in names.values()}
    try:
        for k, n in names.items():
            setattr(module, n, int(values[k]))
        yield
    finally:
        for n, v in old.items():
            setattr(module, n, v)
