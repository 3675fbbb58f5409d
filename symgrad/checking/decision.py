"""Symbols: is the claimed gradient equal to the true one?  A proof, or no answer.

``simplify(claimed - true)`` per element, after dropping what holds only on a null set
(:func:`~symgrad.symbolic.bridge.almost_everywhere`); where kinks (``Abs``, ``sign``,
``Max``, ...) remain, each sign pattern of their arguments is a smooth case, decided on
its own.  The comparison runs in a child process bounded by its own CPU time
(:func:`symgrad._util.run_with_timeout`), so a hard simplification never hangs the
caller and the work done does not depend on the machine's load.

Examples
--------
>>> import sympy as sp
>>> x = sp.Symbol("x", real=True)
>>> is_zero(sp.Abs(x) - x * sp.sign(x)), is_zero(sp.Abs(x) - x)
(True, False)
"""
from __future__ import annotations

import time

import numpy as np
import sympy as sp

from .._util import run_with_timeout
from ..symbolic.bridge import almost_everywhere, gradient_program
from ..symbolic import budget
from ..symbolic.expression import Expression
from ..symbolic.tidy import tidy_all
from .diagnosis import SIMPLIFY_OPS, explain
from .domain import abstract_kinks, exact
from .regions import equal_where_positive, regions, sign_regions, where_text
from .sampling import fit

__all__ = ["CPU_FACTOR", "WALL_FACTOR", "MIN_WALL", "GENERATOR_OPS", "REWRITE_OPS",
           "exp_generators", "is_zero", "exact", "proved_different", "symbolic_job",
           "symbolic_pairs", "compare_symbolically"]


#: The symbolic job stops by itself after 0.8 times its budget of CPU time (between two
#: steps) and is ended after this many times the budget of its own CPU time (one SymPy
#: step past its deadline): the same work on a busy machine as on an idle one.
CPU_FACTOR = 2

#: The wall-clock safety net: the job is killed after this many times its budget of wall
#: time (at least :data:`MIN_WALL` s), only when the machine gives it almost no CPU.
WALL_FACTOR = 20
MIN_WALL = 10.0

#: ``cancel`` of the exponential rewrite runs on differences of at most this many operations
#: (a two-layer tanh net's gradient in another form: 32 operations, 0.15 s; 56: 1.5 s).
REWRITE_OPS = 40


#: The generator rewrite (:func:`exp_generators`) runs on differences of at most this many
#: operations (a three-layer tanh net's gradient in another form: 56, 0.07 s).
GENERATOR_OPS = 200
_MAX_POWER = 16  # exp(k·u) is E_u**k for |k| up to this; past it a generator of its own


def exp_generators(e):
    """``e`` with ``exp``, the hyperbolic and the trigonometric functions written as rational
    functions of one fresh symbol per distinct exponential: ``exp(2x + y)`` is
    ``E_x**2 · E_y``, ``tanh(u)`` is ``(E_u - 1/E_u)/(E_u + 1/E_u)``, ``sin(u)`` uses
    ``exp(i·u)``; arguments are rewritten first (a ``tanh`` inside a ``tanh``), exponentials
    of constants are evaluated (``exp(iπ/4)`` is ``(1 + i)/√2``).

    Treating the generators as independent symbols only forgets relations, so a
    difference that ``cancel`` makes 0 afterwards is 0: a proof, found without expanding
    the arguments (which ``rewrite(exp)`` followed by ``cancel`` does, at great cost).

    >>> import sympy as sp
    >>> x = sp.Symbol("x", real=True)
    >>> sp.cancel(exp_generators(1 / sp.cosh(x) ** 2 - (1 - sp.tanh(x) ** 2)))
    0
    """
    gens: dict = {}

    def gen(u):
        out = sp.Integer(1)
        for term in sp.Add.make_args(u):
            if not term.free_symbols:
                out *= sp.expand_complex(sp.exp(term))
                continue
            c, rest = term.as_coeff_Mul()
            if not (c.is_Integer and abs(c) <= _MAX_POWER):
                c, rest = sp.Integer(1), term
            if rest not in gens:
                gens[rest] = sp.Dummy("E")
            out *= gens[rest] ** c
        return out

    def conv(x):
        if x.is_Atom:
            return x
        args = [conv(a) for a in x.args]
        f = x.func
        if f is sp.exp:
            return gen(args[0])
        if f in _HYPERBOLIC:
            g = gen(args[0])
            ch, sh = (g + 1 / g) / 2, (g - 1 / g) / 2
        elif f in _TRIGONOMETRIC:
            g = gen(sp.I * args[0])
            ch, sh = (g + 1 / g) / 2, (g - 1 / g) / (2 * sp.I)
        else:
            return f(*args) if args != list(x.args) else x
        return {"cos": ch, "sin": sh, "tan": sh / ch, "sec": 1 / ch, "csc": 1 / sh,
                "cot": ch / sh}[f.__name__.replace("h", "")]
    return conv(e)


_HYPERBOLIC = (sp.cosh, sp.sinh, sp.tanh, sp.sech, sp.csch, sp.coth)
_TRIGONOMETRIC = (sp.cos, sp.sin, sp.tan, sp.sec, sp.csc, sp.cot)


def is_zero(d, depth: int = 0, thorough: bool = True, simplify: bool = True) -> bool:
    """Whether ``d`` is zero almost everywhere (a proof, or False when none is found).

    Cheap proofs first (``expand``, ``cancel``); when ``thorough``, ``cancel`` in
    exponential generators (:func:`exp_generators`) on expressions of at most
    ``GENERATOR_OPS`` operations, ``cancel`` of the exponential rewrite (``1/cosh(u)**2``
    is ``1 - tanh(u)**2``) on those of at most ``REWRITE_OPS``, trigonometric expansion,
    then (with ``simplify``) SymPy's ``simplify`` and the exponential rewrite simplified
    on those of at most ``SIMPLIFY_OPS`` (the slowest: its first call imports
    ``sympy.physics``, a second or more)."""
    d = almost_everywhere(sp.sympify(d))
    if d == 0:
        return True
    if thorough and depth == 0 and is_zero(d, depth, thorough=False):
        return True  # (the cheap proofs, on each smooth piece too, before the costly ones)
    if depth < 2 and d.has(*_KINKS):
        cases = _kink_cases(d)
        if cases is not None:
            # (kinks as independent symbols first: algebra on Max(...) itself is slow,
            # seconds for a hinge loss's 27 operations; then each smooth piece)
            flat, _ = abstract_kinks(d)
            try:
                if sp.expand(flat) == 0 or sp.cancel(flat) == 0:
                    return True
            except Exception:  # noqa: BLE001 - no proof this way
                pass
            return all(is_zero(c, depth + 1, thorough, simplify) for c in cases)
    attempts = [sp.expand, sp.cancel]
    ops = sp.count_ops(d) if thorough else None
    if thorough and ops <= GENERATOR_OPS:
        attempts.append(lambda e: sp.cancel(exp_generators(e)))
    if thorough and ops <= REWRITE_OPS:  # a rational function of exponentials
        attempts.append(lambda e: sp.cancel(e.rewrite(sp.exp)))
    if thorough and ops <= SIMPLIFY_OPS:
        attempts.append(lambda e: sp.trigsimp(sp.expand_trig(e)))
        if simplify:
            attempts += [sp.simplify, lambda e: sp.simplify(sp.expand(e.rewrite(sp.exp)))]
    for f in attempts:
        try:
            if f(d) == 0:
                return True
        except Exception:  # noqa: BLE001 - a failed rewrite is not an answer
            continue
    if depth < 2:
        cases = _kink_cases(d)
        if cases is not None:
            return all(is_zero(c, depth + 1, thorough, simplify) for c in cases)
    return False


_KINKS = (sp.Abs, sp.sign, sp.Heaviside, sp.Max, sp.Min)
_MAX_KINKS = 5


def _kink_argument(k):
    """The expression whose sign decides which piece a kink is on (None: unsupported)."""
    if isinstance(k, (sp.Abs, sp.sign, sp.Heaviside)):
        return k.args[0]
    if isinstance(k, (sp.Max, sp.Min)) and len(k.args) == 2:
        return k.args[0] - k.args[1]
    return None


def _on_piece(k, s: int):
    """Kink ``k`` where its argument has sign ``s`` (+1 or -1)."""
    if isinstance(k, sp.Abs):
        return s * k.args[0]
    if isinstance(k, sp.sign):
        return sp.Integer(s)
    if isinstance(k, sp.Heaviside):
        return sp.Integer(1 if s > 0 else 0)
    a, b = k.args
    if isinstance(k, sp.Max):
        return a if s > 0 else b
    return b if s > 0 else a


def _kink_cases(d):
    """``d`` on each sign pattern of its kinks' arguments (None when not applicable).

    Every point off the kinks (a null set when the arguments are not constant) has one
    sign pattern; there each kink is one smooth piece and each comparison of a kink's
    argument with zero is decided.  So ``d`` is zero almost everywhere when it is zero
    on every pattern -- patterns that no point has are checked too, which only makes
    the test stricter.
    """
    kinks = sorted(d.atoms(*_KINKS), key=sp.default_sort_key)
    if not kinks:
        return None
    args: list = []  # distinct arguments up to sign; each kink refers to one
    where = []
    for k in kinks:
        u = _kink_argument(k)
        if u is None or not u.free_symbols:
            return None
        for i, a in enumerate(args):
            s = _ratio_sign(u, a)
            if s is not None:
                where.append((i, s))
                break
        else:
            args.append(u)
            where.append((len(args) - 1, 1))
    if len(args) > _MAX_KINKS:
        return None
    cases = []
    for pattern in _sign_patterns(len(args)):
        repl = {k: _on_piece(k, pattern[i] * o) for k, (i, o) in zip(kinks, where)}
        piece = d.xreplace(repl)
        decided = {}
        for r in piece.atoms(sp.core.relational.Relational):
            sign = _relation_sign(r, args, pattern)
            if sign is not None:
                decided[r] = _decide(r, sign)
        cases.append(piece.xreplace(decided))
    return cases


def _sign_patterns(n: int):
    for i in range(2 ** n):
        yield tuple(1 if (i >> j) & 1 else -1 for j in range(n))


def _relation_sign(r, args, pattern):
    """The sign of ``lhs - rhs`` of relation ``r`` if it is ± a kink argument."""
    diff = r.lhs - r.rhs
    for u, s in zip(args, pattern):
        o = _ratio_sign(diff, u)
        if o is not None:
            return o * s
    return None


def _ratio_sign(e, u):
    """+1 or -1 when ``e`` is a positive or negative constant times ``u`` (``2*x`` and
    ``x``: the same kink), else None."""
    if sp.expand(e - u) == 0:
        return 1
    if sp.expand(e + u) == 0:
        return -1
    try:
        q = sp.cancel(e / u)
    except Exception:  # noqa: BLE001 - no ratio, no answer
        return None
    if q.is_number and q.is_real and q != 0:
        return 1 if q > 0 else -1
    return None


def _decide(r, sign: int):
    if isinstance(r, (sp.StrictGreaterThan, sp.GreaterThan)):
        return sp.true if sign > 0 else sp.false
    if isinstance(r, (sp.StrictLessThan, sp.LessThan)):
        return sp.true if sign < 0 else sp.false
    if isinstance(r, sp.Eq):
        return sp.false
    if isinstance(r, sp.Ne):
        return sp.true
    return r


def proved_different(d) -> bool:
    """Whether ``d`` (claimed - true) is a non-zero rational function of its variables:
    then the two differ wherever ``d`` is not zero, which is almost everywhere."""
    d = sp.cancel(sp.together(exact(almost_everywhere(sp.sympify(d)))))
    if d == 0 or not d.free_symbols:
        return d != 0 and d.is_finite is True
    return bool(d.is_rational_function(*sorted(d.free_symbols, key=str)))


def constant_multiple(claimed, true):
    """``c`` when ``claimed = c · true`` for an exact constant ``c`` other than 1 (``40·
    exp(40x)·(1 + 1e-9)`` for ``40·exp(40x)``), else None: then the two differ wherever
    the true gradient is not 0."""
    claimed, true = exact(almost_everywhere(claimed)), exact(almost_everywhere(true))
    if true == 0 or not true.free_symbols:
        return None
    try:
        c = sp.cancel(sp.powsimp(claimed / true))
    except Exception:  # noqa: BLE001 - no ratio, no answer
        return None
    if c.is_number and c.is_finite and c.is_real and c != 1:
        return c
    return None


def symbolic_job(pairs: list, differ: list, function=None, seconds: float | None = None
                 ) -> list:
    """Per variable: status ("equal", "not equal": proved different, or "not shown
    equal"), hints and the pieces of the domain (:func:`~.regions.regions`).  Where the
    numbers already differ (``differ[i]``) only the cheap proofs run, then the proofs
    under the domain of ``function`` (the SymPy form of f): piece by piece for one
    variable, the parts its domain makes positive for several.  Runs in a child process
    (may be killed); ``seconds`` bounds the pieces' proofs."""
    # (the child's own CPU time: the same proofs run on a busy machine as on an idle one)
    deadline = None if seconds is None else time.process_time() + 0.8 * seconds
    out = []
    for (claimed, true), numbers_differ in zip(pairs, differ):
        status = "equal"
        hints: list = []
        pieces = None
        for c, t in zip(claimed, true):
            c, t = sp.sympify(c), sp.sympify(t)
            d = c - t
            if is_zero(d, thorough=not numbers_differ, simplify=False):
                continue
            # (a wrong answer's words first: the pieces may use up the budget)
            hints = explain(c, t, function) if numbers_differ and not _late(deadline) \
                else None
            found = _under_domain(function, c, t, deadline, thorough=not numbers_differ)
            if found == "equal" or (found is None and not numbers_differ
                                    and not _late(deadline) and is_zero(d)):
                hints = []
                continue
            if isinstance(found, dict):  # (proved on some pieces only: say which)
                status, pieces = "not shown equal", found
            elif isinstance(found, tuple):
                status, pieces = "not equal", found
            elif proved_different(d) or constant_multiple(c, t) is not None:
                status = "not equal"
            else:
                status = "not shown equal"
            if hints is None:
                hints = [] if _late(deadline) else explain(c, t, function)
            break
        out.append((status, [(k, str(e), float(e) if e.is_number else None, *more)
                             for k, e, *more in hints], pieces))
    return out


def _text(e) -> str | None:
    return None if e is None else str(e)


def _late(deadline) -> bool:
    return deadline is not None and time.process_time() > deadline


def _under_domain(function, c, t, deadline, thorough: bool = True):
    """"equal" (proved where f is real, piece by piece), ``(where, [(piece, status,
    point, claim there, truth there)])`` when some piece is shown different at an exact
    point, ``{"proved for": [...], "not settled for": [...]}`` when only some pieces are
    proved, or None."""
    if function is None or _late(deadline):
        return None

    def prove(e) -> bool:
        return is_zero(e, thorough=thorough and not _late(deadline), simplify=False)

    symbols = sorted(function.free_symbols | c.free_symbols | t.free_symbols, key=str)
    unsettled = ps = None
    if len(symbols) == 1:
        x = symbols[0]
        try:
            ps = regions(function, c, t, x, deadline, prove=prove)
        except Exception:  # noqa: BLE001 - SymPy could not cut the domain: no pieces
            ps = None
        if ps:
            if all(p.status == "equal" for p in ps):
                return "equal"
            if any(p.status == "different" for p in ps):
                return (where_text(ps, x, function), [(p.where(x), p.status, None if p.point is None
                                             else float(p.point), _text(p.claimed),
                                             _text(p.true)) for p in ps])
            right = [p.where(x) for p in ps if p.status == "equal"]
            if right:
                unsettled = {"proved for": right,
                             "not settled for": [p.where(x) for p in ps
                                                 if p.status != "equal"]}
    if len(symbols) > 1 or (symbols and unsettled is None and not ps):
        try:  # (kinks in several variables, or cuts without end: each sign pattern of
            # the kinks' arguments)
            found = sign_regions(function, c, t, deadline, prove=prove)
        except Exception:  # noqa: BLE001 - no pieces
            found = None
        if isinstance(found, dict):  # (some patterns proved: the last proofs may do all)
            unsettled = found
        elif found is not None:
            return found
    try:
        if equal_where_positive(function, c, t, prove=prove):
            return "equal"
    except Exception:  # noqa: BLE001 - no proof
        pass
    if len(symbols) > 1 and unsettled is not None and thorough and not _late(deadline) \
            and is_zero(c - t):
        return "equal"  # (what a pattern-free proof would have shown before)
    return unsettled


def symbolic_pairs(f: Expression, claims: dict, shapes: dict) -> tuple:
    """The true gradient by symbolic reverse mode on the IR and the claims from their own
    IR: ``(pairs, function, program)``, ``pairs`` holding per variable the element lists
    ``(claimed, true)``, ``function`` the SymPy form of f (None unless a scalar).

    Raises NotImplementedError when an op has no symbolic form."""
    # (values only shape the trace; square matrices get + I so that inverses exist)
    shape_point = {k: np.zeros(s) + 0.5 + (np.eye(s[0]) if len(s) == 2 and s[0] == s[1]
                                           else 0) for k, s in shapes.items()}
    prog = gradient_program(f.evaluate(**shape_point))
    closed = prog.closed_form(simplify=False)
    pairs = []
    for k, c in claims.items():
        t = np.asarray(_tolist(closed[k]), dtype=object).reshape(shapes[k])
        cs = c.sympy(shape_point)
        cs = fit(cs, shapes[k]) if cs is not None else None
        if cs is None:
            cs = np.full(shapes[k], sp.nan, dtype=object)
        pairs.append((list(np.ravel(cs)), list(np.ravel(t))))
    try:
        function = f.to_sympy(**shape_point)
    except Exception:  # noqa: BLE001 - the proofs under the domain need it, nothing else
        function = None
    if not isinstance(function, sp.Expr):
        function = None
    return pairs, function, prog


def compare_symbolically(f: Expression, claims: dict, shapes: dict, per_var: dict,
                         timeout: float, notes: list, prepared: tuple | None = None
                         ) -> tuple[list | None, list | None]:
    """The claims compared with the true gradient (:func:`symbolic_pairs`, or
    ``prepared``) in a child process within ``timeout`` seconds.

    Fills ``per_var[k]["true"]`` and ``["symbolic"]``; returns the element pairs
    ``(claimed, true)`` per variable (None without a symbolic form) and the job's
    ``(status, hints, pieces)`` per variable (None when it timed out or failed).
    """
    try:
        sym_pairs, function, prog = prepared or symbolic_pairs(f, claims, shapes)
    except NotImplementedError as e:
        notes.append(f"no symbolic form: {e}")
        return None, None
    for k, (_, t) in zip(claims, sym_pairs):
        per_var[k]["true"] = _show(np.asarray(t, dtype=object).reshape(shapes[k]))
    differ = [per_var[k]["numeric"] == "differ" for k in claims]
    # The job stops its proofs after 0.8 * timeout s of its own CPU time; it is ended
    # after CPU_FACTOR * timeout s of it (one SymPy step past its deadline), or after a
    # wall time far longer, a safety net for a machine that gives it no CPU.
    bound = CPU_FACTOR * timeout
    status, result = run_with_timeout(symbolic_job, (sym_pairs, differ, function, timeout),
                                      max(WALL_FACTOR * timeout, MIN_WALL), cpu=bound)
    if status == "timeout":
        notes.append(f"symbolic simplification reached its bound ({bound:g} s of CPU time)"
                     if result == "cpu" else
                     "symbolic simplification did not finish within "
                     f"{max(WALL_FACTOR * timeout, MIN_WALL):g} s of wall time (a busy "
                     f"machine; its bound is {bound:g} s of CPU time)")
        for k in claims:
            per_var[k]["symbolic"] = "timeout"
        return sym_pairs, None
    if status == "error":
        notes.append(f"symbolic comparison failed ({result})")
        for k in claims:
            per_var[k]["symbolic"] = "failed"
        return sym_pairs, None
    for k, (st, _, _) in zip(claims, result):
        per_var[k]["symbolic"] = st
    # The true gradient as ``diff`` shows it (the same bounded tidying).
    # (tidied only within a budget: the 400 elements of a 20x20 took 10 s)
    shown = tidy_all({k: np.asarray(t, dtype=object) for k, (_, t) in zip(claims, sym_pairs)},
                     "auto" if budget.closed_form_ops(prog, 10 ** 9, budget.MAX_TIDIED_OPS) else
                     "none", timeout, cpu=True)
    for k in claims:
        per_var[k]["true"] = _show(shown[k].reshape(shapes[k]))
    return sym_pairs, result


def _tolist(e):
    if isinstance(e, (sp.MatrixBase, sp.NDimArray)):
        return e.tolist()
    return e


def _show(a: np.ndarray) -> str:
    a = np.frompyfunc(lambda e: almost_everywhere(sp.sympify(e)), 1, 1)(a) if a.ndim \
        else almost_everywhere(sp.sympify(a[()]))
    if isinstance(a, np.ndarray):
        return str(a.tolist())
    return str(a)
