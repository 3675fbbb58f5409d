"""Is a hand-derived gradient right?  ``symgrad.check`` and ``symgrad.verify``.

:func:`check` compares a claimed gradient with the true one in three ways:

1. **symbolically**: ``simplify(claimed - true)`` per element, in a separate process
   with a time budget, so that a hard simplification can never hang the caller;
2. **numerically**: the claimed value against reverse mode at the given point and at
   random points of a safe domain (float64, relative tolerance), with central finite
   differences of the function at the given point as a third, independent witness;
3. a **diagnosis** when they differ: a constant factor ("missing factor 2"), the wrong
   sign, a transposed matrix, the derivative with respect to another variable, a
   missing factor, a missing or extra term, the wrong shape.

The verdict is ``correct`` only when the symbolic difference simplifies to zero *and*
the numbers agree; ``wrong`` when some point gives different numbers (a counterexample
is reported); ``undecided`` otherwise (for instance when simplification ran out of
time although every number agrees).  It is never a false ``correct``.

Examples
--------
>>> r = check("x**2 * sin(x)", {"x": "2*x*sin(x) + x**2*cos(x)"})
>>> r.verdict
'correct'
>>> r = check("sin(x**2)", {"x": "cos(x**2)"}, at={"x": 1.5})
>>> r.verdict, r.diagnosis
('wrong', ['x: missing factor 2*x'])
"""
from __future__ import annotations

import json
import multiprocessing
from typing import Mapping

import numpy as np
import sympy as sp

from ..symbolic.expression import EvaluationError, Expression, parse
from ..symbolic.bridge import almost_everywhere, as_sympy, gradient_program, to_sympy

__all__ = ["check", "verify", "Report", "CORRECT", "WRONG", "UNDECIDED", "run_with_timeout",
           "deep"]

CORRECT, WRONG, UNDECIDED = "correct", "wrong", "undecided"
_EXIT = {CORRECT: 0, WRONG: 1, UNDECIDED: 3}


# --------------------------------------------------------------------------- report
class Report:
    """The outcome of :func:`check` or :func:`verify`.

    Attributes
    ----------
    verdict : str
        ``"correct"``, ``"wrong"`` or ``"undecided"``.
    expression : str
    variables : dict
        Per variable checked: ``claimed`` and ``true`` (text; for vectors and matrices
        also ``true_vector``, the vector form when the grammar can write it), ``symbolic``
        (``"equal"``, ``"not shown equal"``, ``"timeout"``, ``"skipped"``), ``numeric``
        (``"agree"`` / ``"differ"``) and ``max_error``.
    points : int
        How many points were compared numerically.
    counterexample : dict or None
        ``point`` (variable -> value), ``variable``, ``claimed``, ``true``.
    diagnosis : list of str
    notes : list of str

    Examples
    --------
    >>> r = check("x**3", {"x": "3*x"}, at={"x": 2})
    >>> print(r.text())  # doctest: +NORMALIZE_WHITESPACE
    WRONG: gradient of x**3
      d/dx: claimed 3*x
            true    3*x**2
            symbolic: not shown equal; numeric: differ at 11 point(s), max error 17.0215
      counterexample: at x=2: d/dx claimed 6, true 12
      diagnosis: x: missing factor x
    >>> r.exit_code, r.as_dict()["counterexample"]["true"]
    (1, 12.0)
    """

    def __init__(self, verdict: str, expression: str, variables: dict, points: int,
                 counterexample: dict | None, diagnosis: list, notes: list,
                 finite_differences: dict | None = None) -> None:
        self.verdict = verdict
        self.expression = expression
        self.variables = variables
        self.points = points
        self.counterexample = counterexample
        self.diagnosis = diagnosis
        self.notes = notes
        self.finite_differences = finite_differences

    @property
    def ok(self) -> bool:
        return self.verdict == CORRECT

    @property
    def exit_code(self) -> int:
        """0 correct, 1 wrong, 3 undecided (the CLI's exit status)."""
        return _EXIT[self.verdict]

    def __bool__(self) -> bool:
        return self.ok

    def as_dict(self) -> dict:
        return {"verdict": self.verdict, "expression": self.expression,
                "variables": self.variables, "points": self.points,
                "counterexample": self.counterexample, "diagnosis": self.diagnosis,
                "notes": self.notes, "finite_differences": self.finite_differences}

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.as_dict(), indent=indent, default=_jsonable)

    def text(self) -> str:
        head = {CORRECT: "correct", WRONG: "WRONG", UNDECIDED: "undecided"}[self.verdict]
        out = [f"{head}: gradient of {self.expression}"]
        for name, v in self.variables.items():
            out.append(f"  d/d{name}: claimed {v['claimed']}")
            if v.get("true_vector") is not None:
                out.append(f"  {' ' * len(name)}     true    {v['true_vector']}")
                if v.get("true") is not None:
                    out.append(f"  {' ' * len(name)}     per element {v['true']}")
            elif v.get("true") is not None:
                out.append(f"  {' ' * len(name)}     true    {v['true']}")
            out.append(f"  {' ' * len(name)}     symbolic: {v['symbolic']}; numeric: "
                       f"{v['numeric']} at {self.points} point(s), max error "
                       f"{_fmt(v['max_error'])}")
        if self.counterexample:
            c = self.counterexample
            at = ", ".join(f"{k}={_fmt(v)}" for k, v in c["point"].items())
            out.append(f"  counterexample: at {at}: d/d{c['variable']} claimed "
                       f"{_fmt(c['claimed'])}, true {_fmt(c['true'])}")
        for d in self.diagnosis:
            out.append(f"  diagnosis: {d}")
        for n in self.notes:
            out.append(f"  note: {n}")
        return "\n".join(out)

    __str__ = text

    def __repr__(self) -> str:
        return f"<Report {self.verdict}: {self.expression}>"


def _jsonable(x):
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, (np.floating, np.integer)):
        return x.item()
    return str(x)


def _fmt(v) -> str:
    if v is None:
        return "-"
    a = np.asarray(v, dtype=float)
    if a.ndim == 0:
        return f"{float(a):.6g}"
    return "[" + ", ".join(_fmt(x) for x in a) + "]"


# --------------------------------------------------------------------------- symbolic
def _is_zero(d, depth: int = 0) -> bool:
    """Whether ``d`` is zero almost everywhere (a proof, or False when none is found)."""
    d = almost_everywhere(sp.sympify(d))
    if d == 0:
        return True
    attempts = (sp.expand, sp.cancel, sp.simplify,
                lambda e: sp.simplify(sp.expand(e.rewrite(sp.exp))),
                lambda e: sp.trigsimp(sp.expand_trig(e)))
    for f in attempts:
        try:
            if f(d) == 0:
                return True
        except Exception:  # noqa: BLE001 - a failed rewrite is not an answer
            continue
    if depth < 2:
        cases = _kink_cases(d)
        if cases is not None:
            return all(_is_zero(c, depth + 1) for c in cases)
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
            if sp.expand(u - a) == 0:
                where.append((i, 1))
                break
            if sp.expand(u + a) == 0:
                where.append((i, -1))
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
        if sp.expand(diff - u) == 0:
            return s
        if sp.expand(diff + u) == 0:
            return -s
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


def _small(e, limit: int = 12) -> bool:
    return sp.count_ops(e) <= limit


def _explain(claimed, true) -> list:
    """Symbolic hints for one element pair that is not equal: a term, then a factor."""
    hints = []
    try:
        true = almost_everywhere(true)
        claimed = almost_everywhere(claimed)
        diff = sp.simplify(true - claimed)
        if diff != 0 and _small(diff):
            terms = sp.Add.make_args(sp.expand(true))
            if any(sp.simplify(t - diff) == 0 for t in terms):
                return [("missing", diff)]
            if any(sp.simplify(t - diff / 2) == 0 for t in terms):
                return [("sign", diff / 2)]
        if true != 0 and claimed != 0:
            ratio = sp.factor(sp.simplify(true / claimed))
            if ratio.is_number and ratio.is_finite and ratio != 0:
                return [("const", ratio)]
            num, den = sp.fraction(ratio)
            # A factor reads well as a monomial over anything: 2*x, 1/(1 + x**2).
            plain = not (isinstance(num, sp.Add) or ratio.has(sp.Piecewise))
            if ratio.free_symbols and _small(ratio, 8) and plain:
                return [("factor", ratio)]
        if diff != 0 and _small(diff):
            terms = sp.Add.make_args(sp.expand(claimed))
            if any(sp.simplify(t + diff) == 0 for t in terms):
                hints.append(("extra", -diff))
            else:
                hints.append(("differs", -diff))
    except Exception:  # noqa: BLE001 - hints are optional
        pass
    return hints


def _symbolic_job(pairs: list) -> list:
    """Per variable: status and hints.  Runs in a child process (may be killed)."""
    out = []
    for claimed, true in pairs:
        status = "equal"
        hints: list = []
        for c, t in zip(claimed, true):
            if not _is_zero(sp.sympify(c) - sp.sympify(t)):
                status = "not shown equal"
                hints = _explain(sp.sympify(c), sp.sympify(t))
                break
        out.append((status, [(k, str(e), float(e) if e.is_number else None)
                             for k, e in hints]))
    return out


def _display_job(trues: list) -> list:
    """Simplified text of each true gradient (None where it is too big to bother)."""
    out = []
    for elements in trues:
        exprs = [almost_everywhere(sp.sympify(e)) for e in elements]
        if sum(sp.count_ops(e) for e in exprs) > 400:
            out.append(None)
            continue
        texts = [str(sp.simplify(e)) for e in exprs]
        out.append(texts[0] if len(texts) == 1 else texts)
    return out


def _child(conn, fn, args):
    try:
        conn.send(("ok", fn(*args)))
    except BaseException as e:  # noqa: BLE001 - report any failure to the parent
        conn.send(("error", f"{type(e).__name__}: {e}"))
    finally:
        conn.close()


def run_with_timeout(fn, args: tuple, timeout: float):
    """Run ``fn(*args)`` in a child process; ``("timeout", None)`` after ``timeout`` s.

    The child is killed on timeout, so nothing (SymPy's ``simplify`` included) can
    hang the caller.  Returns ``("ok", result)``, ``("error", message)`` or
    ``("timeout", None)``.
    """
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(child, fn, args), daemon=True)
    proc.start()
    child.close()
    try:
        if parent.poll(timeout):
            try:
                return parent.recv()
            except EOFError:
                return ("error", "the symbolic worker stopped")
        return ("timeout", None)
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join(1)
        parent.close()


# --------------------------------------------------------------------------- numbers
def _close(a, b, rtol: float, atol: float) -> np.ndarray:
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    scale = np.maximum(np.abs(a), np.abs(b))
    return np.abs(a - b) <= atol + rtol * scale


def _random_point(rng, shapes: dict, kind: int) -> dict:
    lo, hi = ((-2.0, 2.0), (0.2, 2.0), (0.5, 1.5))[kind]
    pt = {}
    for k, s in shapes.items():
        v = rng.uniform(lo, hi, size=s)
        if kind == 0:
            v = np.where(np.abs(v) < 0.05, 0.3, v)  # stay off kinks at 0
        pt[k] = v
    return pt


def _finite(*arrays) -> bool:
    return all(np.all(np.isfinite(np.asarray(a, dtype=np.float64))) for a in arrays)


def _fd_gradient(f: Expression, point: dict, name: str) -> np.ndarray:
    """Central finite differences of ``f`` with respect to ``name`` (float64)."""
    from ..autograd import no_grad
    base = {k: np.array(v, dtype=np.float64) for k, v in point.items()}
    x = base[name]
    g = np.zeros(x.shape)
    with no_grad():
        for ix in np.ndindex(*x.shape):
            h = 1e-6 * max(1.0, abs(float(x[ix])))
            up = {k: v.copy() for k, v in base.items()}
            dn = {k: v.copy() for k, v in base.items()}
            up[name][ix] += h
            dn[name][ix] -= h
            g[ix] = (float(f.evaluate(**up).item()) - float(f.evaluate(**dn).item())) / (2 * h)
    return g


class _Claim:
    """A claimed gradient: expression text, an Expression, or a constant."""

    def __init__(self, value, variables: list) -> None:
        self.expression = None
        self.constant = None
        if isinstance(value, Expression):
            self.expression = value
        elif isinstance(value, str):
            self.expression = parse(value)
        else:
            self.constant = np.asarray(value, dtype=np.float64)
        if self.expression is not None:
            unknown = [v for v in self.expression.variables if v not in variables]
            if unknown:
                raise ValueError(f"the claimed gradient uses {', '.join(unknown)}, which "
                                 f"the expression does not have (variables: "
                                 f"{', '.join(variables)})")
        self.text = (self.expression.text if self.expression is not None
                     else np.array2string(self.constant, separator=", "))

    def value(self, point: dict) -> np.ndarray:
        from ..autograd import no_grad
        if self.constant is not None:
            return self.constant
        with no_grad():
            vals = {k: point[k] for k in self.expression.variables}
            return self.expression.evaluate(**vals).detach().numpy().astype(np.float64)

    def sympy(self, point: dict) -> np.ndarray:
        if self.constant is not None:
            return as_sympy(self.constant)
        vals = {k: point[k] for k in self.expression.variables}
        e = self.expression.to_sympy(**vals)
        return np.asarray(e.tolist() if isinstance(e, (sp.MatrixBase, sp.NDimArray))
                          else e, dtype=object)


def _fit(claimed: np.ndarray, shape: tuple):
    """The claimed array in the variable's shape, or None (wrong shape)."""
    if claimed.shape == shape:
        return claimed
    if claimed.ndim == 0:
        return np.broadcast_to(claimed, shape)
    if claimed.ndim == 2 and len(shape) == 1 and claimed.size == shape[0] and (
            1 in claimed.shape):
        return claimed.reshape(shape)
    return None


# --------------------------------------------------------------------------- check
def check(expr, grads, at: Mapping | None = None, samples: int = 10, *,
          timeout: float = 10.0, rtol: float = 1e-6, atol: float = 1e-9,
          seed: int = 0, symbolic: bool = True) -> Report:
    """Check a hand-derived gradient against the true one.

    Parameters
    ----------
    expr : str or Expression
        The function, such as ``"x**2 * sin(y)"``.
    grads : mapping or str
        Variable -> claimed gradient (expression text, an :class:`Expression`, or a
        number/array).  A single text is allowed when ``expr`` has one variable.
    at : mapping, optional
        Variable -> value (number, list, array or value text such as ``"[1, 2]"``):
        the point to check at, and the shapes of vector and matrix variables.  Missing
        variables are scalars drawn at random.
    samples : int
        Random points checked besides ``at``.
    timeout : float
        Seconds allowed for symbolic simplification (run in a child process).
    rtol, atol : float
        Numeric tolerance: ``|claimed - true| <= atol + rtol * max(|claimed|, |true|)``.
    seed : int
        Seed of the random points (the check is reproducible).
    symbolic : bool
        With ``False`` only numbers are compared (the verdict is then at best
        ``undecided``).

    Returns
    -------
    Report

    Examples
    --------
    >>> r = check("sum(x*x)", {"x": "x"}, at={"x": [1, 2]})
    >>> r.verdict, r.diagnosis
    ('wrong', ['x: missing factor 2'])
    >>> print(r.counterexample["claimed"], r.counterexample["true"])
    [1.0, 2.0] [2.0, 4.0]
    """
    # Random points may leave the function's domain (log of a negative number); they are
    # skipped, so numpy's warnings about them would only be noise.
    with np.errstate(all="ignore"):
        return _check(expr, grads, at, samples, timeout, rtol, atol, seed, symbolic)


def _check(expr, grads, at, samples, timeout, rtol, atol, seed, symbolic) -> Report:
    f = expr if isinstance(expr, Expression) else parse(expr)
    variables = f.variables
    if isinstance(grads, (str, Expression)):
        if len(variables) != 1:
            raise ValueError("give the claimed gradient as {variable: expression} when the "
                             f"expression has several variables ({', '.join(variables)})")
        grads = {variables[0]: grads}
    grads = dict(grads)
    for k in grads:
        if k not in variables:
            raise ValueError(f"{k!r} is not a variable of {f.text!r} (variables: "
                             f"{', '.join(variables) or 'none'})")
    if not grads:
        raise ValueError("no claimed gradient given")
    for k, v in [*grads.items(), *(at or {}).items()]:
        if v is None:
            raise TypeError(f"{k}: expected expression text, a number or an array, got None")
    if samples < 0:
        raise ValueError(f"samples must be at least 0, got {samples}")
    claims = {k: _Claim(v, variables) for k, v in grads.items()}
    at = {k: (np.asarray(_parse_value(v), dtype=np.float64)) for k, v in (at or {}).items()}
    for k in at:
        if k not in variables:
            raise ValueError(f"--at {k}: {k!r} is not a variable of {f.text!r}")
    # Variables without a value are scalars where that fits, else vectors/matrices.
    shapes = {k: np.shape(v) for k, v in f.shape_values(at).items()}
    rng = np.random.default_rng(seed)
    notes: list = []

    # Points: the given one (completed at random), then random ones until ``samples``
    # of them are usable (finite), moving to safer domains when many are not.
    base = _random_point(rng, shapes, 1)
    base.update(at)
    budget = 2 * (samples + 1)

    def candidates():
        yield base, True
        for t in range(3 * budget):
            yield _random_point(rng, shapes, t // budget), False

    points = candidates()

    per_var = {k: {"claimed": c.text, "true": None, "symbolic": "skipped",
                   "numeric": "agree", "max_error": 0.0} for k, c in claims.items()}
    counterexample = None
    diagnosis: list = []
    used = 0
    evidence: dict = {k: [] for k in claims}  # (claimed, true, all-true-grads) per point
    shape_bad: dict = {}
    for point, given in points:
        if used >= samples + 1:
            break
        try:
            true = f.gradient(**point)
            value = f.evaluate(**point)
        except Exception:  # noqa: BLE001
            if given:
                raise
            continue
        if not _finite(value.detach().numpy(), *true.values()):
            if given:
                notes.append("the function or its gradient is not finite at the given "
                             "point; it was skipped")
            continue
        row = {}
        try:
            for k, c in claims.items():
                row[k] = np.asarray(c.value(point), dtype=np.float64)
        except EvaluationError as e:
            # The claim's own operations do not fit the variables' shapes: a wrong
            # gradient (of the wrong shape), not bad input.
            per_var[k]["numeric"] = "cannot evaluate"
            return Report(WRONG, f.text, per_var, 0, None,
                          [f"{k}: wrong shape: the claimed gradient cannot be evaluated "
                           f"({e})"], notes)
        except Exception:  # noqa: BLE001
            if given:
                raise
            continue
        if not _finite(*row.values()):
            if given:
                notes.append("the claimed gradient is not finite at the given point")
            continue
        used += 1
        for k, c in claims.items():
            t = np.asarray(true[k], dtype=np.float64)
            cl = _fit(row[k], t.shape)
            if cl is None:
                shape_bad[k] = (row[k].shape, t.shape)
                continue
            err = float(np.max(np.abs(cl - t))) if t.size else 0.0
            per_var[k]["max_error"] = max(per_var[k]["max_error"], err)
            evidence[k].append((row[k], t, true, point))
            if not np.all(_close(cl, t, rtol, atol)):
                per_var[k]["numeric"] = "differ"
                if counterexample is None:
                    counterexample = {"point": {n: _listify(v) for n, v in point.items()},
                                      "variable": k, "claimed": _listify(row[k]),
                                      "true": _listify(t)}
    for k, (got, want) in shape_bad.items():
        per_var[k]["numeric"] = "differ"
        diagnosis.append(f"{k}: wrong shape: the claimed gradient has shape {got}, the "
                         f"gradient of a variable of shape {want} has shape {want}")
        if counterexample is None:
            p0 = base
            counterexample = {"point": {n: _listify(v) for n, v in p0.items()},
                              "variable": k, "claimed": _listify(claims[k].value(p0)),
                              "true": _listify(f.gradient(**p0)[k])}
    if used == 0:
        notes.append("no point where the function and both gradients are finite was found")
    for k in claims:
        if per_var[k]["numeric"] == "agree" and any(
                e[0].shape != e[1].shape for e in evidence[k]):
            notes.append(f"{k}: the claimed scalar was broadcast to shape {shapes[k]}")

    # Symbolic: true gradient from reverse mode on the IR, claimed from its own IR.
    sym_pairs = None
    true_syms: dict = {}
    if symbolic and used:
        try:
            shape_point = {k: np.zeros(s) + 0.5 for k, s in shapes.items()}
            prog = gradient_program(f.evaluate(**shape_point))
            closed = prog.closed_form(simplify=False)
            sym_pairs = []
            for k, c in claims.items():
                t = np.asarray(_tolist(closed[k]), dtype=object).reshape(shapes[k])
                true_syms[k] = t
                cs = c.sympy(shape_point)
                cs = _fit(cs, shapes[k]) if cs is not None else None
                if cs is None:
                    cs = np.full(shapes[k], sp.nan, dtype=object)
                per_var[k]["true"] = _show(t)
                sym_pairs.append((list(np.ravel(cs)), list(np.ravel(t))))
        except NotImplementedError as e:
            notes.append(f"no symbolic form: {e}")
            sym_pairs = None
    sym_result = None
    if sym_pairs is not None:
        status, sym_result = run_with_timeout(_symbolic_job, (sym_pairs,), timeout)
        if status == "timeout":
            notes.append(f"symbolic simplification did not finish within {timeout:g} s")
            for k in claims:
                per_var[k]["symbolic"] = "timeout"
            sym_result = None
        elif status == "error":
            notes.append(f"symbolic comparison failed ({sym_result})")
            for k in claims:
                per_var[k]["symbolic"] = "failed"
            sym_result = None
        else:
            for k, (st, _) in zip(claims, sym_result):
                per_var[k]["symbolic"] = st
            # A tidier form of the true gradient for people, if it comes quickly.
            status, shown = run_with_timeout(_display_job, ([p[1] for p in sym_pairs],),
                                             min(3.0, timeout))
            if status == "ok":
                for k, text in zip(claims, shown):
                    if text is not None:
                        # As _show writes it: [y_0*cos(...), ...], no quotes.
                        per_var[k]["true"] = text if shapes[k] == () else str(
                            np.asarray(text, dtype=object).reshape(shapes[k]).tolist()
                        ).replace("'", "")

    for k in claims:
        if shapes[k] != ():
            per_var[k]["true_vector"] = _vector_form(f, k, base)

    if sym_pairs is not None:
        _forgive_rounding(claims, per_var, sym_pairs, evidence, shapes, shape_bad, rtol,
                          atol, notes)
        if all(v["numeric"] != "differ" for v in per_var.values()):
            counterexample = None
    wrong = any(v["numeric"] == "differ" for v in per_var.values())
    if wrong:
        verdict = WRONG
        for k in claims:
            if per_var[k]["numeric"] == "differ" and k not in shape_bad:
                hints = None
                if sym_result is not None:
                    hints = sym_result[list(claims).index(k)][1]
                if shapes[k] and evidence[k] and evidence[k][0][0].ndim == 0:
                    diagnosis.append(f"{k}: wrong shape: the claimed gradient is a scalar, "
                                     f"but {k} has shape {shapes[k]}")
                    continue
                found = _diagnose(k, evidence[k], hints, rtol, atol)
                numeric_kinds = ("wrong sign", "missing factor", "extra factor",
                                 "transposed", "wrong variable", "the claimed gradient is")
                if not (found and found[0].startswith(numeric_kinds)):
                    sym = _symmetric_only(f, claims[k], k, evidence[k], shapes, rtol, atol)
                    if sym is not None:
                        found = [f"right only when {sym} is symmetric: the true gradient "
                                 f"has both {sym} and {sym}.T"]
                diagnosis.extend(f"{k}: {d}" for d in found)
    elif used and sym_result is not None and all(
            v["symbolic"] == "equal" for v in per_var.values()):
        verdict = CORRECT
    else:
        verdict = UNDECIDED
        if used:
            if all(v["symbolic"] != "timeout" for v in per_var.values()) and symbolic:
                notes.append(f"the numbers agree at {used} point(s), but simplification "
                             "did not show the expressions equal")
            elif symbolic:
                notes.append(f"the numbers agree at {used} point(s)")

    fd = None
    if used:
        p0 = evidence[next(iter(claims))][0][3] if evidence[next(iter(claims))] else None
        if p0 is not None:
            fd = {}
            for k in claims:
                try:
                    g = _fd_gradient(f, p0, k)
                    t = np.asarray(f.gradient(**p0)[k], dtype=np.float64)
                    fd[k] = {"value": _listify(g),
                             "agrees_with_reverse_mode": bool(np.all(
                                 _close(g, t, 1e-4, 1e-6)))}
                except Exception:  # noqa: BLE001 - a witness only
                    continue
            for k, v in fd.items():
                if not v["agrees_with_reverse_mode"]:
                    notes.append(f"{k}: central finite differences disagree with reverse "
                                 "mode at the first point (a kink nearby?)")
    return Report(verdict, f.text, per_var, used, counterexample, diagnosis, notes, fd)


def _symmetric_only(f: Expression, claim, name: str, evidence: list, shapes: dict,
                    rtol: float, atol: float):
    """The square matrix variable whose symmetry would make the claim right, or None.

    The classic slip: d(x.T @ A @ x)/dx written as 2 * A @ x, true for symmetric A.
    """
    for m, shape in shapes.items():
        if len(shape) != 2 or shape[0] != shape[1] or shape[0] < 2:
            continue
        good = 0
        for _, _, _, point in evidence[:3]:
            p = dict(point)
            p[m] = (np.asarray(point[m]) + np.asarray(point[m]).T) / 2
            try:
                true = np.asarray(f.gradient(**p)[name], dtype=np.float64)
                got = np.asarray(claim.value(p), dtype=np.float64)
            except Exception:  # noqa: BLE001 - then this is not the explanation
                break
            if got.shape != true.shape or not np.all(_close(got, true, rtol, atol)):
                break
            good += 1
        if good and good == min(3, len(evidence)):
            return m
    return None


def _vector_form(f: Expression, name: str, point: dict):
    """The true gradient in vector form (``A @ x + A.T @ x``), or None."""
    from ..symbolic.vecdiff import NoVectorForm, vector_gradient
    try:
        return vector_gradient(f, name, **point)
    except (NoVectorForm, ValueError, RuntimeError):
        return None


def _forgive_rounding(claims, per_var, sym_pairs, evidence, shapes, shape_bad, rtol, atol,
                      notes) -> None:
    """Float rounding, not a mistake: proved equal, and equal at 30 digits where not.

    A claim written with cancelling terms can lose digits in float64; when SymPy has
    shown it equal and exact evaluation at the disagreeing points agrees too, the
    numbers' disagreement is rounding.
    """
    from ..symbolic.bridge import leaf_symbols
    for i, k in enumerate(claims):
        if k in shape_bad or per_var[k]["numeric"] != "differ" \
                or per_var[k]["symbolic"] != "equal":
            continue
        claimed, true = sym_pairs[i]
        bad = [ev[3] for ev in evidence[k] if not np.all(_close(
            np.broadcast_to(ev[0], ev[1].shape), ev[1], rtol, atol))]
        ok = True
        for point in bad[:3]:
            subs = {}
            for name, shape in shapes.items():
                syms = leaf_symbols(name, shape)
                v = np.asarray(point[name], dtype=np.float64)
                for ix in np.ndindex(*shape):
                    subs[syms[ix]] = sp.Rational(float(v[ix]))
            for c, t in zip(claimed, true):
                a = sp.N(almost_everywhere(sp.sympify(c)).xreplace(subs), 30)
                b = sp.N(almost_everywhere(sp.sympify(t)).xreplace(subs), 30)
                if not (a.is_number and b.is_number) or abs(complex(a) - complex(b)) > (
                        1e-12 * max(1.0, abs(complex(b)))):
                    ok = False
                    break
            if not ok:
                break
        if ok:
            per_var[k]["numeric"] = "agree (after rounding)"
            notes.append(f"{k}: float64 values differ by rounding only (equal symbolically "
                         "and at 30 digits)")


def _parse_value(v):
    if isinstance(v, str):
        from ..symbolic.parser import parse_value
        return parse_value(v)
    from ..api.tensor import Tensor
    if isinstance(v, Tensor):
        return v.detach().numpy()
    return v


def _listify(v):
    a = np.asarray(v, dtype=np.float64)
    return float(a) if a.ndim == 0 else a.tolist()


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


def _constant_ratio(evidence, rtol, atol):
    """c such that claimed == c * true at every point, or None."""
    ratios = []
    for claimed, true, _, _ in evidence:
        c = np.broadcast_to(claimed, true.shape).astype(np.float64)
        mask = np.abs(true) > 1e-9
        if not np.any(mask):
            if np.any(np.abs(c) > 1e-9):
                return None
            continue
        r = c[mask] / true[mask]
        ratios.extend(r.tolist())
        if np.any(np.abs(c[~mask]) > 1e-9):
            return None
    if not ratios:
        return None
    r0 = ratios[0]
    if all(abs(r - r0) <= 1e-6 * max(1.0, abs(r0)) for r in ratios):
        return r0
    return None


def _diagnose(name: str, evidence: list, hints, rtol: float, atol: float) -> list:
    """Plain-words explanations of how the claimed gradient differs."""
    out: list = []
    if not evidence:
        return out
    ratio = _constant_ratio(evidence, rtol, atol)
    if ratio is None:
        # Rounding can hide a constant ratio from the numbers; SymPy may still see it.
        const = [value for kind, _, value in hints or () if kind == "const"]
        if const and const[0]:
            ratio = 1.0 / const[0]
    if ratio is not None:
        return [_factor_text(ratio)]
    # Transposed matrices.
    if all(c.ndim == 2 and c.shape == t.shape[::-1] or (c.ndim == 2 and c.shape == t.shape)
           for c, t, _, _ in evidence) and evidence[0][1].ndim == 2:
        if all(np.all(_close(c.T, t, rtol, atol)) for c, t, _, _ in evidence):
            return ["transposed: the claimed gradient is the transpose of the true one"]
    # The derivative with respect to another variable.
    for other in evidence[0][2]:
        if other == name:
            continue
        if all(np.shape(ev[2][other]) == np.shape(ev[1]) and np.all(
                _close(np.broadcast_to(ev[0], ev[1].shape), ev[2][other], rtol, atol))
               for ev in evidence):
            return [f"wrong variable: this is the derivative with respect to {other}, "
                    f"not {name}"]
    for kind, text, _ in hints or ():
        if kind == "factor":
            out.append(f"missing factor {text}")
        elif kind == "missing":
            out.append(f"missing term {text}")
        elif kind == "sign":
            out.append(f"wrong sign of the term {text}")
        elif kind == "extra":
            out.append(f"extra term {text}")
        elif kind == "differs":
            out.append(f"claimed - true = {text}")
    return out[:1] if out and out[0].startswith("missing factor") else out


def _factor_text(ratio: float) -> str:
    """Words for ``claimed = ratio * true``."""
    if abs(ratio + 1) < 1e-6:
        return "wrong sign: the claimed gradient is the negative of the true one"
    if abs(ratio) < 1e-12:
        return "the claimed gradient is zero where the true one is not"
    exact = sp.nsimplify(ratio, tolerance=1e-6 * max(1.0, abs(ratio)), rational=True)
    if sp.Abs(exact).is_Rational and max(sp.fraction(sp.Abs(exact))) <= 100:
        exact_r = exact
    else:
        exact_r = sp.Float(ratio, 6)
    sign = "" if ratio > 0 else "wrong sign and "
    mag = sp.Abs(exact_r)
    if mag < 1:
        return f"{sign}missing factor {_num_text(1 / mag)}"
    return f"{sign}extra factor {_num_text(mag)}"


def _num_text(x) -> str:
    x = sp.nsimplify(x) if isinstance(x, sp.Rational) else x
    return str(x)


# --------------------------------------------------------------------------- verify
def verify(t, rtol: float = 1e-6, atol: float = 1e-9) -> Report:
    """Check reverse mode on a traced scalar against SymPy at the traced values.

    The symbolic gradient comes from :func:`sympy.diff` of :func:`to_sympy` (no code in
    common with the op table's gradient rules); reverse mode runs the engine on a copy
    of the graph (``retain_graph=True``), leaving ``.grad`` untouched.  ``sympy.diff``
    grows quickly with depth: meant for graphs of teaching size (a 200-deep chain of
    ``tanh`` takes about a minute).

    Examples
    --------
    >>> import symgrad
    >>> x = symgrad.tensor([0.5, -1.0], requires_grad=True, name="x")
    >>> verify((symgrad.sin(x) * x).sum()).verdict
    'correct'
    """
    from ..autograd import grad
    from ..symbolic.bridge import _leaves_of, _topological, leaf_names, leaf_symbols
    if t.numel() != 1:
        raise RuntimeError("grad can be implicitly created only for scalar outputs")
    if t.grad_fn is None:
        raise RuntimeError("element 0 of tensors does not require grad and does not have "
                           "a grad_fn")
    accs = _leaves_of(_topological(t.grad_fn))
    leaves = [a.variable for a in accs]
    names = leaf_names(leaves)
    numeric = grad(t, leaves, retain_graph=True, allow_unused=True, materialize_grads=True)
    syms = {id(leaf): leaf_symbols(names[id(leaf)], tuple(leaf.shape)) for leaf in leaves}

    def symbolic():
        expr = to_sympy(t)
        expr = expr[0] if isinstance(expr, sp.MatrixBase) else expr
        subs = {}
        for leaf in leaves:
            data = np.asarray(leaf._data, dtype=np.float64)
            for ix in np.ndindex(*leaf.shape):
                subs[syms[id(leaf)][ix]] = sp.Float(float(data[ix]), 30)
        wants = []
        for leaf in leaves:
            s = syms[id(leaf)]
            want = np.zeros(s.shape)
            for ix in np.ndindex(*s.shape):
                d = almost_everywhere(sp.diff(expr, s[ix]))
                want[ix] = float(d.xreplace(subs).evalf(20))
            wants.append(want)
        return expr, wants

    try:
        expr, wants = symbolic()
    except RecursionError:
        # SymPy walks expressions recursively; a deep graph needs a deeper stack.
        expr, wants = deep(symbolic)
    per_var = {}
    verdict = CORRECT
    counterexample = None
    for leaf, g, want in zip(leaves, numeric, wants):
        name = names[id(leaf)]
        got = np.asarray(g.detach().numpy(), dtype=np.float64)
        good = bool(np.all(_close(got, want, max(rtol, _eps(leaf)), atol)))
        per_var[name] = {"claimed": "reverse mode", "true": "sympy.diff",
                         "symbolic": "evaluated", "numeric": "agree" if good else "differ",
                         "max_error": float(np.max(np.abs(got - want))) if got.size else 0.0}
        if not good:
            verdict = WRONG
            if counterexample is None:
                counterexample = {"point": {names[id(x)]: _listify(x._data) for x in leaves},
                                  "variable": name, "claimed": _listify(got),
                                  "true": _listify(want)}
    try:
        text = str(expr)
    except RecursionError:
        text = "<expression too deep to print>"
    if len(text) > 300:
        text = text[:297] + "..."
    return Report(verdict, text, per_var, 1, counterexample, [], [])


def deep(fn, limit: int = 100_000, stack_mb: int = 512):
    """Run ``fn()`` on a thread with a large stack and a high recursion limit.

    SymPy recurses through expression trees; graphs hundreds of nodes deep exceed
    Python's default limit.
    """
    import sys
    import threading
    out: dict = {}

    def run():
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(max(old, limit))
        try:
            out["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - re-raised in the caller
            out["error"] = e
        finally:
            sys.setrecursionlimit(old)

    size = threading.stack_size(stack_mb * 1024 * 1024)
    try:
        worker = threading.Thread(target=run)
        worker.start()
        worker.join()
    finally:
        threading.stack_size(size)
    if "error" in out:
        raise out["error"]
    return out["value"]


def _eps(leaf) -> float:
    # float32 graphs agree with exact values only to float32 precision.
    return 1e-4 if leaf.dtype.name in ("float32", "float16") else 1e-6
