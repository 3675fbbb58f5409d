"""Is a hand-derived Jacobian right?  :func:`check_jacobian`.

The true Jacobian of each input comes from forward mode on the graph (the tangent
program, :mod:`symgrad.symbolic.tangents`): symbolically over the elements, and at points
one forward pass per column.  A claim is compared with it symbolically (``simplify`` of
the difference, element by element), then at the given point and at random points; a
claim in matrix form (``A``) is proved equal for every size where the matrix algebra
writes the true one the same way, and any claim over vectors is tried at other
sizes too (``diag(cos(x))`` at sizes 1, 2, 4: a claim right at one size only is
wrong).  The claim's shape is the
Jacobian's: output elements × input elements (a vector for a scalar output or input).

Examples
--------
>>> r = check_jacobian("sin(x)", {"x": "diag(cos(x))"}, at={"x": [1, 2]})
>>> r.verdict, r.points
('correct', 11)
>>> check_jacobian("A @ x", {"x": "A"}, shapes={"A": ("n", "m"), "x": ("m",)}).variables[
...     "x"]["every_size"]
'proved'
>>> r = check_jacobian("sin(x)", {"x": "cos(x)"}, at={"x": [1, 2]})
>>> r.verdict, r.diagnosis[0]
('wrong', 'x: claimed shape [2], the Jacobian has shape [2, 2]')
>>> print(r.diagnosis[1])
x: that is the Jacobian's diagonal (an elementwise derivative); the Jacobian is diag(cos(x))
"""
from __future__ import annotations

from typing import Mapping

import numpy as np
import sympy as sp

from ..symbolic.expression import Expression, parse
from ..symbolic.forward_mode import jacobian_expression
from ..symbolic.matrix import NoVectorForm
from ..symbolic.matrix_forms import canonical, to_text
from ..symbolic.shapes import placeholder, resolve_shapes
from ..symbolic.vectors import matrix_value
from .report import CORRECT, UNDECIDED, WRONG, CheckError, Report, listify
from .sampling import Claim, close, point_value, random_point
from .sizes import other_shapes, outside_domain

__all__ = ["check_jacobian", "JacobianReport"]


class JacobianReport(Report):
    """A :class:`Report` whose text speaks of the Jacobian (``∂f/∂x``)."""

    def text(self) -> str:
        lines = super().text().splitlines()
        lines[0] = lines[0].replace(": gradient of ", ": Jacobian of ", 1)
        return "\n".join(line.replace(" d/d", " ∂f/∂", 1) for line in lines)

    __str__ = text


def _expected(out_shape: tuple, var_shape: tuple) -> tuple:
    n_out, n_in = int(np.prod(out_shape)), int(np.prod(var_shape))
    if not out_shape and not var_shape:
        return ()
    if not out_shape:
        return (n_in,)
    if not var_shape:
        return (n_out,)
    return (n_out, n_in)


def _fits(shape: tuple, want: tuple) -> bool:
    """The claim's shape is the Jacobian's (a vector may be a one-column matrix)."""
    return shape == want or (len(want) == 1 and len(shape) == 2 and 1 in shape
                             and int(np.prod(shape)) == want[0])


def check_jacobian(expr: str | Expression, jacobians: Mapping, at: Mapping | None = None,
                   samples: int = 10, *, rtol: float = 1e-6, atol: float = 1e-9,
                   seed: int = 0, shapes: Mapping | None = None) -> JacobianReport:
    """Check claimed Jacobians of ``expr`` (any output shape) against forward mode.

    Parameters
    ----------
    expr : str or Expression
    jacobians : mapping
        Input name -> the claimed Jacobian ``∂f/∂x`` (expression text, Expression, or a
        number/array): shape output elements × input elements.
    at, samples, rtol, atol, seed, shapes
        As for :func:`symgrad.check`.

    Returns
    -------
    JacobianReport

    Raises
    ------
    CheckError
        An input the expression does not have, a claim with unknown variables.
    """
    f = expr if isinstance(expr, Expression) else parse(expr)
    if not jacobians:
        raise CheckError("no claimed Jacobian given")
    for k in jacobians:
        if k not in f.variables:
            raise CheckError(f"{k!r} is not a variable of {f.text!r} (variables: "
                             f"{', '.join(f.variables) or 'none'})")
    if samples < 0:
        raise CheckError(f"samples must be at least 0, got {samples}")
    claims = {k: Claim(v, f.variables) for k, v in jacobians.items()}
    at = {k: point_value(v) for k, v in (at or {}).items()}
    sized, labels = resolve_shapes(shapes or {})
    values = f.shape_values({**{k: placeholder(s) for k, s in sized.items() if k not in at},
                             **at})
    names = list(jacobians)
    with np.errstate(all="ignore"):
        return _check(f, claims, names, at, values, labels, samples, rtol, atol, seed)


def _check(f, claims, names, at, values, labels, samples, rtol, atol, seed):
    program = f.tangent_program(names, **values)
    out_shape = np.shape(program.tangent)
    true_all = program.jacobian_matrix("none")
    per_var, diagnosis, notes = {}, [], []
    cols, start = {}, 0
    for k in names:
        n = int(np.size(values[k]))
        cols[k] = (start, start + n)
        start += n
    bad_shape, symbolic = {}, {}
    for k, c in claims.items():
        want = _expected(out_shape, np.shape(values[k]))
        a, b = cols[k]
        true = np.array(true_all[:, a:b].tolist(), dtype=object).reshape(want)
        entry = {"claimed": c.text, "true": str(_public(true)), "symbolic": "skipped",
                 "numeric": "agree", "max_error": 0.0}
        if np.ndim(values[k]) or len(out_shape):
            try:
                entry["true_vector"] = to_text(jacobian_expression(f, k, values, labels),
                                               identity="I")
            except (NoVectorForm, ValueError, TypeError, RuntimeError):
                pass
        try:
            claimed = c.sympy(values)
        except Exception as err:  # noqa: BLE001 - the claim's own shapes do not fit
            entry.update(symbolic="not equal", numeric="differ")
            diagnosis.append(f"{k}: the claim cannot be evaluated: {err}")
            per_var[k] = entry
            bad_shape[k] = True
            continue
        if not _fits(claimed.shape, want):
            entry.update(symbolic="not equal", numeric="differ", max_error=None)
            shape = claimed.shape if claimed.ndim != 2 or claimed.shape[1] != 1 else \
                claimed.shape[:1]
            diagnosis.append(f"{k}: claimed shape {list(shape)}, the Jacobian has "
                             f"shape {list(want)}")
            if len(want) == 2 and want[0] == want[1] == claimed.size and all(
                    sp.simplify(sp.sympify(a) - true[i, i]) == 0
                    for i, a in enumerate(np.ravel(claimed))):
                diagnosis.append(f"{k}: that is the Jacobian's diagonal (an elementwise "
                                 f"derivative); the Jacobian is diag({c.text})")
            per_var[k] = entry
            bad_shape[k] = True
            continue
        claimed = claimed.reshape(want)
        symbolic[k] = (claimed, true)
        if np.ndim(values[k]) or len(out_shape):
            entry["every_size"] = _every_size(f, k, c, values, labels)
        per_var[k] = entry
    counterexample, used = None, 0
    rng = np.random.default_rng(seed)
    points = ([at] if len(at) == len(f.variables) else []) + [
        {**random_point(rng, {v: np.shape(values[v]) for v in f.variables}, t % 3)}
        for t in range(3 * (samples + 1))]
    for point in points:
        if used >= samples + 1:
            break
        try:
            jac = program.jacobian(point)
        except Exception:  # noqa: BLE001 - outside the domain: another point
            continue
        if not np.all(np.isfinite(jac)):
            continue
        used += 1
        for k, c in claims.items():
            if bad_shape.get(k):
                continue
            a, b = cols[k]
            want = _expected(out_shape, np.shape(values[k]))
            true = jac[:, a:b].reshape(want)
            try:
                got = np.asarray(c.value(point), dtype=np.float64).reshape(want)
            except Exception:  # noqa: BLE001
                got = np.full(want, np.nan)
            err = float(np.max(np.abs(got - true), initial=0.0)) if np.all(
                np.isfinite(got)) else float("inf")
            per_var[k]["max_error"] = max(per_var[k]["max_error"], err)
            if not np.all(close(got, true, rtol, atol)):
                per_var[k]["numeric"] = "differ"
                if counterexample is None:
                    counterexample = {"point": {n: listify(v) for n, v in point.items()},
                                      "variable": k, "claimed": listify(got),
                                      "true": listify(true)}
    if counterexample is None and not bad_shape and any(np.ndim(v) for v in values.values()):
        counterexample = _other_sizes(f, claims, names, values, labels, rng, rtol, atol)
        if counterexample is not None:
            k = counterexample["variable"]
            per_var[k]["numeric"] = "differ"
            per_var[k].pop("every_size", None)
            sizes = ", ".join(f"{n}: {'x'.join(map(str, s)) or 'scalar'}"
                              for n, s in counterexample["sizes"].items())
            notes.append(f"{k}: right at the sizes checked, wrong at other sizes ({sizes})")
    for k, (claimed, true) in symbolic.items():  # (only where the numbers agree)
        if per_var[k]["numeric"] == "agree":
            per_var[k]["symbolic"] = ("equal" if all(_zero(sp.sympify(a) - sp.sympify(b))
                                                     for a, b in zip(np.ravel(claimed),
                                                                     np.ravel(true)))
                                      else "not shown equal")
        else:
            per_var[k]["symbolic"] = "not equal"
    for k, v in per_var.items():
        if v["numeric"] == "differ" and v["symbolic"] == "not shown equal":
            v["symbolic"] = "not equal"
    if any(v["numeric"] == "differ" for v in per_var.values()):
        verdict = WRONG
    elif all(v["symbolic"] == "equal" for v in per_var.values()):
        verdict = CORRECT
    else:
        verdict = UNDECIDED
        notes.append("not shown equal symbolically; equal at every point tried")
    if used == 0:
        notes.append("no point where the Jacobian is finite was found")
    return JacobianReport(verdict, f.text, per_var, used, counterexample, diagnosis, notes)


def _every_size(f, k: str, claim: Claim, values: Mapping, labels: Mapping) -> str:
    """``"proved"`` when the claim's matrix form and the true one have equal canonical
    forms (true for every size), else ``"not shown"``."""
    if claim.expression is None:
        return "not shown"
    try:
        true = canonical(jacobian_expression(f, k, values, labels))
        vals = {n: values[n] for n in claim.expression.variables}
        claimed = canonical(matrix_value(claim.expression, vals, labels))
    except (NoVectorForm, ValueError, TypeError, RuntimeError):
        return "not shown"
    return "proved" if true.key == claimed.key else "not shown"


def _other_sizes(f, claims, names, values, labels, rng, rtol, atol) -> dict | None:
    """A point at other sizes (smallest first) where a claim differs from forward mode's
    Jacobian, with its ``sizes``; None if none is found."""
    for shapes in other_shapes(f, dict(values), labels):
        point = random_point(rng, shapes, 1)
        try:
            program = f.tangent_program(names, **point)
            jac = program.jacobian(point)
        except Exception:  # noqa: BLE001 - these sizes do not fit the function
            continue
        if not np.all(np.isfinite(jac)) or outside_domain(f, point):
            continue
        out_shape, start = np.shape(program.tangent), 0
        for name in names:
            n = int(np.size(point[name]))
            want = _expected(out_shape, np.shape(point[name]))
            true = jac[:, start:start + n].reshape(want)
            start += n
            try:
                got = np.asarray(claims[name].value(point), dtype=np.float64)
                ok = _fits(got.shape, want) and bool(np.all(close(got.reshape(want), true,
                                                                  rtol, atol)))
            except Exception:  # noqa: BLE001 - the claim does not fit these sizes
                got, ok = None, False
            if not ok:
                return {"point": {v: listify(x) for v, x in point.items()},
                        "variable": name, "claimed": None if got is None else listify(got),
                        "true": listify(true), "why": None if got is not None else
                        "cannot be evaluated at these sizes",
                        "sizes": {v: list(s) for v, s in shapes.items()}}
    return None


#: The largest difference (operations) ``sympy.simplify`` is run on; past it only cheap
#: rewrites are tried (simplify's time grows fast with the size: seconds at a few hundred).
_SIMPLIFY_OPS = 60


def _zero(d) -> bool:
    """Whether the difference ``d`` is shown to be 0 (cheap rewrites first)."""
    if d == 0:
        return True
    for rewrite in (sp.expand, sp.cancel):
        if rewrite(d) == 0:
            return True
    return sp.count_ops(d) <= _SIMPLIFY_OPS and sp.simplify(d) == 0


def _public(a: np.ndarray):
    if a.ndim == 0:
        return a[()]
    return sp.Matrix(a.tolist()) if a.ndim <= 2 else sp.Array(a.tolist())
