"""Is a hand-derived gradient right?  ``symgrad.check`` and ``symgrad.verify``.

:func:`check` compares a claimed gradient with the true one in three ways:

1. **symbolically** (:mod:`.decision`): ``simplify(claimed - true)`` per element, in a
   separate process with a time budget, so that a hard simplification can never hang
   the caller;
2. **numerically** (:mod:`.sampling`): the claimed value against reverse mode at the
   given point and at random points of a safe domain (float64, relative tolerance), with
   central finite differences of the function at the given point as a third,
   independent witness;
3. a **diagnosis** (:mod:`.diagnosis`) when they differ: a constant factor ("missing
   factor 2"), the wrong sign, a transposed matrix, the derivative with respect to
   another variable, a missing chain-rule factor, a missing or extra term, a half-applied
   product rule, swapped variables, a dropped branch, a region where the claim is wrong,
   the wrong shape.

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
('wrong', ['x: missing factor 2*x', 'x: the chain rule: 2*x is the derivative of the inner x**2'])
"""
from __future__ import annotations

from typing import Mapping

import numpy as np
import sympy as sp

from .._util import deep
from ..autograd import grad
from ..symbolic.budget import check_expression
from ..symbolic.bridge import almost_everywhere, graph_leaves, leaf_names, leaf_symbols, to_sympy
from ..symbolic.expression import EvaluationError, Expression, parse
from ..symbolic.shapes import placeholder, resolve_shapes
from ..symbolic.vectors import NoVectorForm, vector_text
from .decision import compare_symbolically, symbolic_pairs
from .domain import Kinks, confirm, exact_point, kink_arguments
from .diagnosis import _symmetric_only as symmetric_only
from .diagnosis import diagnose_all, shape_mismatches
from .regions import domain_points
from .report import (CORRECT, UNDECIDED, WRONG, CheckError, CheckTypeError, Report, listify)
from .sampling import (Claim, close, finite_difference_witness, forgive_rounding, wide_sweep,
                       point_value, random_point, sample)
from .sizes import counterexample_at_other_sizes, proved_for_every_size
from .slips import named_slip

__all__ = ["check", "verify"]


def check(expr: str | Expression, grads, at: Mapping | None = None, samples: int = 10, *,
          timeout: float = 1.5, rtol: float = 1e-6, atol: float = 1e-9,
          seed: int = 0, symbolic: bool = True, shapes: Mapping | None = None) -> Report:
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
        Seconds of CPU time allowed for symbolic proofs (run in a child process; the
        proofs under the domain stop at 80 % of it, the child is ended at twice it), so
        that a check stays within about 3 s and does the same work on a busy machine.
    rtol, atol : float
        Numeric tolerance: ``|claimed - true| <= atol + rtol * max(|claimed|, |true|)``.
    seed : int
        Seed of the random points (the check is reproducible).
    symbolic : bool
        With ``False`` only numbers are compared (the verdict is then at best
        ``undecided``).
    shapes : mapping, optional
        Variable -> shape for variables without a value in ``at``: a tuple of sizes and
        names (``{"A": ("n", "m"), "x": ("m",)}``; equal names, equal sizes).  A claim
        in vector or matrix form is checked for every size whatever the shapes.

    Returns
    -------
    Report

    Raises
    ------
    CheckError
        A gradient for a variable the expression does not have, a claim with unknown
        variables, ... (a ``ValueError``); a :class:`~symgrad.symbolic.parser.ParseError`
        for text that does not parse.

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
    def run() -> Report:
        with np.errstate(all="ignore"):
            return _check(expr, grads, at, samples, timeout, rtol, atol, seed, symbolic,
                          shapes or {})
    try:
        return run()
    except RecursionError:
        # SymPy works recursively: an expression nested deeper than Python's default stack
        # allows is checked again in a child process with a deep one (this process's
        # recursion limit and stack size never change).
        return deep(run)


def _arguments(expr, grads, at, samples) -> tuple[Expression, dict, dict]:
    """The parsed function, its claims and the given point, or CheckError."""
    f = expr if isinstance(expr, Expression) else parse(expr)
    variables = f.variables
    if isinstance(grads, (str, Expression)):
        if len(variables) != 1:
            raise CheckError("give the claimed gradient as {variable: expression} when the "
                             f"expression has several variables ({', '.join(variables)})")
        grads = {variables[0]: grads}
    grads = dict(grads)
    for k in grads:
        if k not in variables:
            raise CheckError(f"{k!r} is not a variable of {f.text!r} (variables: "
                             f"{', '.join(variables) or 'none'})")
    if not grads:
        raise CheckError("no claimed gradient given")
    for k, v in [*grads.items(), *(at or {}).items()]:
        if v is None:
            raise CheckTypeError(f"{k}: expected expression text, a number or an array, "
                                 "got None")
    if samples < 0:
        raise CheckError(f"samples must be at least 0, got {samples}")
    claims = {k: Claim(v, variables) for k, v in grads.items()}
    at = {k: point_value(v) for k, v in (at or {}).items()}
    for k in at:
        if k not in variables:
            raise CheckError(f"--at {k}: {k!r} is not a variable of {f.text!r}")
    return f, claims, at


def _check(expr, grads, at, samples, timeout, rtol, atol, seed, symbolic,
           given_shapes) -> Report:
    f, claims, at = _arguments(expr, grads, at, samples)
    # Variables without a value are scalars where that fits, else vectors/matrices.
    sized, labels = resolve_shapes(given_shapes)
    check_expression(f, sized, at, also=[c.expression for c in claims.values()])
    fixed = {k: placeholder(s) for k, s in sized.items() if k not in at}
    shapes = {k: np.shape(v) for k, v in f.shape_values({**fixed, **at}).items()}
    rng = np.random.default_rng(seed)
    notes: list = []

    # Symbolic forms first: their kinks and exact arithmetic decide which points and
    # which differences count.
    prepared = symbols = kinks = None
    if symbolic:
        try:
            prepared = symbolic_pairs(f, claims, shapes)
        except NotImplementedError as e:
            notes.append(f"no symbolic form: {e}")
        except (EvaluationError, RuntimeError, ValueError):
            pass  # (a claim that does not fit the shapes, a function that is no scalar:
            # the sampling says so, in the user's terms)
    if prepared is not None:
        pairs, function, _ = prepared
        exprs = [e for c, t in pairs for e in (*c, *t)] + [function] * (function is not None)
        symbols = sorted(set().union(*(sp.sympify(e).free_symbols for e in exprs)), key=str)
        kinks = Kinks(exprs, symbols)

    # Points: the given one (completed at random), then random ones until ``samples``
    # of them are usable (finite, inside the domain, off the kinks), moving to safer
    # domains when many are not.
    base = random_point(rng, shapes, 1)
    base.update(at)
    judge = _judge(f, kinks)
    function = prepared[1] if prepared is not None else None
    found = sample(f, claims, base, shapes, rng, samples, rtol, atol, notes, judge,
                   told=bool(at), more=lambda: domain_points(function, shapes, rng,
                                                             2 * (samples + 1)))
    per_var = found.per_var
    if found.unevaluable is not None:
        # The claim's own operations do not fit the variables' shapes: a wrong
        # gradient (of the wrong shape), not bad input.
        k, e = found.unevaluable
        per_var[k]["numeric"] = "cannot evaluate"
        if shapes[k] != ():
            per_var[k]["true_vector"] = _vector_form(f, k, base, labels)
        slip = named_slip(f, claims[k], k, [], shapes, rtol, atol, base)
        return Report(WRONG, f.text, per_var, 0, None,
                      [f"{k}: {slip}"] * (slip is not None) +
                      [f"{k}: wrong shape: the claimed gradient cannot be evaluated "
                       f"({e})"], notes)
    diagnosis = [f"{k}: {w}" for k in found.shape_bad
                 if (w := named_slip(f, claims[k], k, [], shapes, rtol, atol, base))]
    diagnosis += shape_mismatches(found.shape_bad)

    # Symbolic: true gradient from reverse mode on the IR, claimed from its own IR; a
    # difference of the numbers counts only where exact evaluation confirms it.
    sym_pairs = sym_result = None
    if prepared is not None and found.used:
        forgive_rounding(claims, per_var, prepared[0], found, shapes, rtol, atol, notes,
                         symbols)
        sym_pairs, sym_result = compare_symbolically(f, claims, shapes, per_var, timeout,
                                                     notes, prepared)
    # A vector variable anywhere makes every gradient a matter of sizes (∂/∂s of
    # sum(s + x) is numel(x)): forms for every size, proofs, and other sizes tried.
    sized = any(s != () for s in shapes.values())
    for k in claims:
        if sized:
            per_var[k]["true_vector"] = _vector_form(f, k, base, labels)
    if sym_pairs is not None:
        if all(v["numeric"] != "differ" for v in per_var.values()):
            found.counterexample = None
        if sym_result is not None:
            diagnosis += _pieces(f, claims, per_var, sym_pairs, sym_result, found, notes)
        _exactly_different(claims, per_var, found, notes, symbols, sym_pairs)
        wide_sweep(f, claims, per_var, sym_pairs, found, shapes, rng, rtol, atol, notes,
                   judge=judge, symbols=symbols)

    if found.used and sized:
        _every_size(f, claims, shapes, labels, base, at, per_var, found, rng, rtol, atol,
                    notes)

    if any(v["numeric"] == "differ" for v in per_var.values()):
        verdict = WRONG
        diagnosis += diagnose_all(f, claims, found, sym_result, shapes, rtol, atol)
        diagnosis += _symmetric_where(f, claims, found, per_var, shapes, rtol, atol,
                                      diagnosis, notes)
    elif found.used and sym_result is not None and all(
            v["symbolic"] == "equal" for v in per_var.values()):
        verdict = CORRECT
    else:
        verdict = UNDECIDED
        if found.used:
            if all(v["symbolic"] != "timeout" for v in per_var.values()) and symbolic:
                notes.append(f"the numbers agree at {found.used} point(s), but "
                             "simplification did not show the expressions equal")
            elif symbolic:
                notes.append(f"the numbers agree at {found.used} point(s)")

    fd = None
    first = found.evidence[next(iter(claims))]
    if found.used and first:
        fd = finite_difference_witness(f, claims, first[0][3], notes)
    return Report(verdict, f.text, per_var, found.used, found.counterexample, diagnosis,
                  notes, fd)


def _judge(f: Expression, kinks):
    """Why a point cannot be judged (on a kink, outside the domain where f is real), or
    None: the op records decide the domain (:meth:`Expression.domain_error`)."""
    def why(point: dict) -> str | None:
        if kinks is not None and kinks.near(point):
            return "on a kink of the function (it has no derivative there)"
        try:
            err = f.domain_error(**point)
        except Exception:  # noqa: BLE001 - evaluation failed: the sampler decides
            return None
        if err is not None:
            return "outside the domain where the function is real"
        return None
    return why


def _symmetric_where(f: Expression, claims: dict, found, per_var: dict, shapes: dict,
                     rtol: float, atol: float, diagnosis: list, notes: list) -> list:
    """Where a wrong claim is right, for matrices: ``right where A is symmetric`` when
    the claim is the true gradient wherever the square matrix ``A`` is replaced by its
    symmetric part (``2*A @ x`` for ``x.T @ A @ x``; ``inverse(A)`` for ``logdet(A)``,
    the transpose of the truth).  Recorded in ``per_var[k]["where"]``; a line of its own
    unless the diagnosis says it already, a note where it names a transpose."""
    out = []
    for k in claims:
        if per_var[k]["numeric"] != "differ" or per_var[k].get("where") or \
                not found.evidence[k]:
            continue
        m = symmetric_only(f, claims[k], k, found.evidence[k], shapes, rtol, atol)
        if m is None:
            continue
        per_var[k]["where"] = f"right where {m} is symmetric, wrong where it is not"
        mine = [line for line in diagnosis if line.startswith(f"{k}: ")]
        if any("symmetric" in line for line in mine):
            continue
        if any("transpose" in line for line in mine):  # (the diagnosis names the mistake)
            notes.append(f"{k}: {per_var[k]['where']}")
        else:
            out.append(f"{k}: {per_var[k]['where']}")
    return out


def _pieces(f: Expression, claims: dict, per_var: dict, sym_pairs: list, sym_result: list,
            found, notes: list) -> list:
    """Claims shown wrong on a piece of the domain at an exact point: wrong there, with
    that point as the counterexample when the numbers found none; the diagnosis says
    where the claim is right and where wrong."""
    out = []
    for k, (_, _, pieces) in zip(claims, sym_result):
        if isinstance(pieces, dict):  # (undecided: say what was settled and what not)
            notes.append(f"{k}: proved for {' and '.join(pieces['proved for'])}; not "
                         f"settled for {' and '.join(pieces['not settled for'])}")
            continue
        if not pieces:
            continue
        where, rows = pieces
        per_var[k]["regions"] = [{"where": w, "status": st, "point": p} for w, st, p, *_ in
                                 rows]
        value = next(p for _, st, p, *_ in rows if st == "different")
        if where:
            per_var[k]["where"] = where
            there = ""
            for w, st, _, c, t in rows:  # (the first wrong pieces, within 200 characters)
                if st == "different" and c and (not there or len(there) < 200):
                    there += ("; " if there else "") + \
                        f"for {w} the true gradient is {t}, the claim {c}"
            c_elems, t_elems = sym_pairs[list(claims).index(k)]
            dropped = not kink_arguments(c_elems) and bool(kink_arguments(t_elems))
            out.append(f"{k}: {where}" + (f" ({there})" if there else "") +
                       (": the claim drops a branch of the piecewise gradient"
                        if dropped else ""))
        if per_var[k]["numeric"] == "differ" and found.counterexample is not None:
            continue
        if isinstance(value, dict):  # (kinks in several variables: scalars only)
            if set(value) != set(f.variables):
                continue
            point = {n: np.float64(v) for n, v in value.items()}
        else:
            point = {n: np.float64(value) for n in f.variables}
        try:
            true = np.asarray(f.gradient(**point)[k], dtype=np.float64)
            claimed = np.asarray(claims[k].value(point), dtype=np.float64)
        except Exception:  # noqa: BLE001 - the exact point stands without float values
            continue
        per_var[k]["numeric"] = "differ"
        found.evidence[k].append((claimed, true, f.gradient(**point), point))
        if found.counterexample is None:
            found.counterexample = {"point": {n: listify(v) for n, v in point.items()},
                                    "variable": k, "claimed": listify(claimed),
                                    "true": listify(true)}
    return out


def _exactly_different(claims: dict, per_var: dict, found, notes: list,
                       symbols: list | None = None, sym_pairs: list | None = None) -> None:
    """A claim proved different (a non-zero rational difference, a constant factor other
    than 1) is wrong even where the numbers agree within tolerance (``4.000001*x**3`` for
    the gradient of ``x**4``): the counterexample is the sampled point where the relative
    difference is largest and exact evaluation confirms it."""
    for i, k in enumerate(claims):
        if per_var[k]["symbolic"] != "not equal" or per_var[k]["numeric"] == "differ":
            continue
        ranked = []
        for claimed, t, _, point in found.evidence[k]:
            c = np.broadcast_to(claimed, t.shape)
            rel = float(np.max(np.abs(c - t) / np.maximum(np.abs(t), 1e-300))) if t.size \
                else 0.0
            ranked.append((rel, claimed, t, point))
        ranked.sort(key=lambda r: -r[0])
        best = None
        for rel, claimed, t, point in ranked[:4]:
            if rel <= 1e-15:  # (the difference is below float64's reach)
                break
            if symbols is not None and sym_pairs is not None:
                subs = exact_point(point, symbols)
                if subs is None or confirm(*sym_pairs[i], subs) != "different":
                    continue
            best = (rel, claimed, t, point)
            break
        if best is None:
            continue
        worst, claimed, t, point = best
        per_var[k]["numeric"] = "differ"
        notes.append(f"{k}: the claim is proved different from the true gradient (relative "
                     f"difference {worst:.3g} at the counterexample, confirmed exactly)")
        if found.counterexample is None:
            found.counterexample = {"point": {n: listify(v) for n, v in point.items()},
                                    "variable": k, "claimed": listify(claimed),
                                    "true": listify(t)}


def _every_size(f, claims, shapes, labels, base, at, per_var, found, rng, rtol, atol,
                notes) -> None:
    """A claim in an expression of vectors or matrices holds for every size: proved in
    the matrix algebra, and tried at other sizes (smallest first) whether proved or
    not."""
    for k, claim in claims.items():
        if proved_for_every_size(f, k, claim, base, labels):
            per_var[k]["every_size"] = "proved"
            if per_var[k]["numeric"] == "agree" and per_var[k]["symbolic"] != "equal":
                per_var[k]["symbolic"] = "equal"  # (the matrix algebra's proof)
    given = any(shapes[k] != () and k in at for k in shapes)
    if all(v["numeric"] != "differ" for v in per_var.values()):
        cex = counterexample_at_other_sizes(f, claims, base, rng, rtol, atol, labels=labels)
        if cex is None:
            return
        k = cex["variable"]
        per_var[k].pop("every_size", None)
        sizes = ", ".join(f"{n}: {'x'.join(map(str, s)) or 'scalar'}"
                          for n, s in cex["sizes"].items())
        if given:  # the sizes were the user's: right there, but say it is not general
            notes.append(f"{k}: right at the sizes given, but not for every size (it "
                         f"differs at {sizes})")
            return
        per_var[k]["numeric"] = "differ"
        found.counterexample = cex
        notes.append(f"{k}: right at the sizes of the point checked, wrong at other "
                     f"sizes ({sizes})")
    elif not given:
        # The sizes were ours to choose: show the mistake at the smallest that shows it.
        cex = counterexample_at_other_sizes(f, claims, base, rng, rtol, atol, smaller=True,
                                            labels=labels)
        if cex is not None:
            found.counterexample = cex


def _vector_form(f: Expression, name: str, point: dict, labels: dict) -> str | None:
    """The true gradient in vector form (``A @ x + A.T @ x``), or None; ``labels`` the
    sizes' names (a mean's ``numel(y)`` rather than the traced size)."""
    try:
        return vector_text(f, name, point, labels)
    except (NoVectorForm, ValueError, RuntimeError):
        return None


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
    if t.numel() != 1:
        raise RuntimeError("grad can be implicitly created only for scalar outputs")
    if t.grad_fn is None:
        raise RuntimeError("element 0 of tensors does not require grad and does not have "
                           "a grad_fn")
    leaves = graph_leaves(t)
    names = leaf_names(leaves)
    numeric = grad(t, leaves, retain_graph=True, allow_unused=True, materialize_grads=True)
    data = {id(leaf): np.asarray(leaf.detach().numpy(), dtype=np.float64) for leaf in leaves}
    syms = {id(leaf): leaf_symbols(names[id(leaf)], tuple(leaf.shape)) for leaf in leaves}

    def symbolic():
        expr = to_sympy(t)
        expr = expr[0] if isinstance(expr, sp.MatrixBase) else expr
        subs = {}
        for leaf in leaves:
            for ix in np.ndindex(*leaf.shape):
                subs[syms[id(leaf)][ix]] = sp.Float(float(data[id(leaf)][ix]), 30)
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
        # SymPy walks expressions recursively; a deep graph is worked on in a child process
        # with a deep stack (this one's limit never changes), whence its text comes back.
        expr, wants = deep(lambda: (lambda e, w: (str(e), w))(*symbolic()))
    per_var = {}
    verdict = CORRECT
    counterexample = None
    for leaf, g, want in zip(leaves, numeric, wants):
        name = names[id(leaf)]
        got = np.asarray(g.detach().numpy(), dtype=np.float64)
        good = bool(np.all(close(got, want, max(rtol, _eps(leaf)), atol)))
        per_var[name] = {"claimed": "reverse mode", "true": "sympy.diff",
                         "symbolic": "evaluated", "numeric": "agree" if good else "differ",
                         "max_error": float(np.max(np.abs(got - want))) if got.size else 0.0}
        if not good:
            verdict = WRONG
            if counterexample is None:
                counterexample = {"point": {names[id(x)]: listify(data[id(x)]) for x in leaves},
                                  "variable": name, "claimed": listify(got),
                                  "true": listify(want)}
    try:
        text = str(expr)
    except RecursionError:
        text = "<expression too deep to print>"
    if len(text) > 300:
        text = text[:297] + "..."
    return Report(verdict, text, per_var, 1, counterexample, [], [])


def _eps(leaf) -> float:
    # float32 graphs agree with exact values only to float32 precision.
    return 1e-4 if leaf.dtype.name in ("float32", "float16") else 1e-6
