"""Numbers: the claimed and the true gradient compared at points, and a third witness.

The given point comes first (completed at random), then random points of ever safer
domains until enough are usable (finite); at each, the claim is evaluated and compared
with reverse mode (float64, relative tolerance).  Central finite differences of the
function are an independent witness, and exact evaluation at 30 digits tells float64
rounding from a mistake.

Examples
--------
>>> from symgrad import parse
>>> round(float(central_differences(parse("x**3"), {"x": 2.0}, "x")), 6)
12.0
>>> bool(np.all(close([1.0, 2.0], [1.0, 2.0 + 1e-12], 1e-6, 1e-9)))
True
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import sympy as sp

from ..api.tensor import Tensor
from ..autograd import no_grad
from ..symbolic.bridge import almost_everywhere, as_sympy, leaf_symbols
from ..symbolic.expression import EvaluationError, Expression, parse
from ..symbolic.parser import parse_value
from .domain import MAX_EXACT_OPS, confirm, exact, exact_point, real_at_point
from .report import CheckError, listify

__all__ = ["Claim", "Samples", "close", "fit", "point_value", "random_point", "sample",
           "central_differences", "finite_difference_witness", "forgive_rounding",
           "wide_sweep", "WIDE_POINTS"]

#: Points of other scales tried where the numbers agree but no proof settles a claim.
WIDE_POINTS = 24


def close(a, b, rtol: float, atol: float) -> np.ndarray:
    """Elementwise ``|a - b| <= atol + rtol * max(|a|, |b|)``."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    scale = np.maximum(np.abs(a), np.abs(b))
    return np.abs(a - b) <= atol + rtol * scale


def random_point(rng, shapes: dict, kind: int) -> dict:
    """Uniform values per variable: kind 0 in [-2, 2] (off 0), 1 in [0.2, 2], 2 in [0.5,
    1.5]; kind 3 of every scale, ``±10**u`` for ``u`` uniform in [-2, 3] (a domain such
    as ``x > 5``)."""
    if kind == 3:
        return {k: rng.choice([-1.0, 1.0], size=s) * 10.0 ** rng.uniform(-2, 3, size=s)
                for k, s in shapes.items()}
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


def point_value(v) -> np.ndarray:
    """A value of ``at``: value text (``"[1, 2]"``), a tensor, a number or an array."""
    if isinstance(v, str):
        v = parse_value(v)
    elif isinstance(v, Tensor):
        v = v.detach().numpy()
    return np.asarray(v, dtype=np.float64)


class Claim:
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
                raise CheckError(f"the claimed gradient uses {', '.join(unknown)}, which "
                                 f"the expression does not have (variables: "
                                 f"{', '.join(variables)})")
        self.text = (self.expression.text if self.expression is not None
                     else np.array2string(self.constant, separator=", "))

    def value(self, point: dict) -> np.ndarray:
        """The claim's value at ``point`` (float64)."""
        if self.constant is not None:
            return self.constant
        with no_grad():
            vals = {k: point[k] for k in self.expression.variables}
            return self.expression.evaluate(**vals).detach().numpy().astype(np.float64)

    def sympy(self, point: dict) -> np.ndarray:
        """The claim's SymPy elements (an object array); ``point`` fixes the shapes."""
        if self.constant is not None:
            return as_sympy(self.constant)
        vals = {k: point[k] for k in self.expression.variables}
        e = self.expression.to_sympy(**vals)
        return np.asarray(e.tolist() if isinstance(e, (sp.MatrixBase, sp.NDimArray))
                          else e, dtype=object)


def fit(claimed: np.ndarray, shape: tuple) -> np.ndarray | None:
    """The claimed array in the variable's shape, or None (wrong shape)."""
    if claimed.shape == shape:
        return claimed
    if claimed.ndim == 0:
        return np.broadcast_to(claimed, shape)
    if claimed.ndim == 2 and len(shape) == 1 and claimed.size == shape[0] and (
            1 in claimed.shape):
        return claimed.reshape(shape)
    return None


@dataclass
class Samples:
    """What the points showed.

    ``evidence[k]`` holds ``(claimed, true, all true gradients, point)`` per usable
    point; ``unevaluable`` is ``(variable, error)`` when a claim's own operations do
    not fit the variables' shapes (then the sampling stopped there).
    """

    per_var: dict
    evidence: dict
    shape_bad: dict = field(default_factory=dict)
    counterexample: dict | None = None
    nonfinite: dict = field(default_factory=dict)  # variable -> a point where the claim
    used: int = 0                                  # is nan or inf and the truth is not
    unevaluable: tuple | None = None


def sample(f: Expression, claims: dict, base: dict, shapes: dict, rng, samples: int,
           rtol: float, atol: float, notes: list, judge=None, told: bool = True,
           more=None) -> Samples:
    """Compare claims and reverse mode at ``base``, then at random points, until
    ``samples + 1`` points were usable; notes about skipped points go to ``notes``.
    ``judge(point)`` says why a point cannot be judged (outside the domain where f is
    real and differentiable, on a kink), or None; ``told``: the user gave ``base`` (else
    a point skipped there needs no note); ``more()`` gives points tried last (inside
    the exact domain of f, for a domain the random scales miss)."""
    budget = 2 * (samples + 1)

    def candidates():
        yield base, True
        for t in range(4 * budget):
            yield random_point(rng, shapes, t // budget), False
        for point in (more() if more is not None else ()):
            yield point, False

    per_var = {k: {"claimed": c.text, "true": None, "symbolic": "skipped",
                   "numeric": "agree", "max_error": 0.0} for k, c in claims.items()}
    out = Samples(per_var, {k: [] for k in claims})
    for point, given in candidates():
        if out.used >= samples + 1:
            break
        try:
            true = f.gradient(**point)
            value = f.evaluate(**point)
        except np.linalg.LinAlgError as e:  # (a singular matrix given: no verdict there)
            if given and told:
                notes.append(f"the gradient cannot be computed at the given point ({e}); "
                             "it was skipped")
            continue
        except Exception:  # noqa: BLE001
            if given:
                raise
            continue
        if not _finite(value.detach().numpy(), *true.values()):
            if given and told:
                notes.append("the function or its gradient is not finite at the given "
                             "point; it was skipped")
            continue
        why = judge(point) if judge is not None else None
        if why is not None:
            if given and told:
                notes.append(f"the given point is {why}: neither side is judged there")
            continue
        row = {}
        try:
            for k, c in claims.items():
                row[k] = np.asarray(c.value(point), dtype=np.float64)
        except EvaluationError as e:
            out.unevaluable = (k, e)
            return out
        except np.linalg.LinAlgError as e:
            if given and told:
                notes.append(f"the claim cannot be computed at the given point ({e}); it "
                             "was skipped")
            continue
        except Exception:  # noqa: BLE001
            if given:
                raise
            continue
        if not _finite(*row.values()):
            # The true gradient is finite here and the claim is not: a counterexample
            # (``2*exp(-log(x))`` for ``log(x**2)`` at x < 0).
            out.used += 1
            for k in claims:
                if not _finite(row[k]) and k not in out.nonfinite:
                    out.nonfinite[k] = point
                    out.per_var[k]["numeric"] = "differ"
                    if out.counterexample is None:
                        out.counterexample = {
                            "point": {n: listify(v) for n, v in point.items()},
                            "variable": k, "claimed": listify(row[k]),
                            "true": listify(np.asarray(true[k], dtype=np.float64))}
            continue
        out.used += 1
        _compare(claims, row, true, point, out, rtol, atol)
    _rescale(claims, out, rtol, atol)
    for k, (got, want) in out.shape_bad.items():
        per_var[k]["numeric"] = "differ"
        if out.counterexample is None:
            out.counterexample = {"point": {n: listify(v) for n, v in base.items()},
                                  "variable": k, "claimed": listify(claims[k].value(base)),
                                  "true": listify(f.gradient(**base)[k])}
    if out.used == 0:
        notes.append("no point where the function and both gradients are finite was found")
    for k in claims:
        if per_var[k]["numeric"] == "agree" and any(
                e[0].shape != e[1].shape for e in out.evidence[k]):
            notes.append(f"{k}: the claimed scalar was broadcast to shape {shapes[k]}")
    return out


def _compare(claims: dict, row: dict, true: dict, point: dict, out: Samples, rtol: float,
             atol: float) -> None:
    """One usable point: each claim against reverse mode, into ``out``."""
    for k in claims:
        t = np.asarray(true[k], dtype=np.float64)
        cl = fit(row[k], t.shape)
        if cl is None:
            out.shape_bad[k] = (row[k].shape, t.shape)
            continue
        err = float(np.max(np.abs(cl - t))) if t.size else 0.0
        out.per_var[k]["max_error"] = max(out.per_var[k]["max_error"], err)
        out.evidence[k].append((row[k], t, true, point))
        if not np.all(close(cl, t, rtol, atol)):
            out.per_var[k]["numeric"] = "differ"
            if out.counterexample is None:
                out.counterexample = {"point": {n: listify(v) for n, v in point.items()},
                                      "variable": k, "claimed": listify(row[k]),
                                      "true": listify(t)}


def _rescale(claims: dict, out: Samples, rtol: float, atol: float) -> None:
    """Agreement relative to the size of the gradient: where the true values are small
    (``1e-10*x**2``), the absolute tolerance shrinks with them, so that a claim wrong by a
    factor is not taken for rounding."""
    for k in claims:
        ev = out.evidence[k]
        scale = max((float(np.max(np.abs(t))) for _, t, _, _ in ev if np.size(t)),
                    default=0.0)
        if not 0 < scale < 1 or out.per_var[k]["numeric"] != "agree":
            continue
        for claimed, t, _, point in ev:
            if not np.all(close(fit(claimed, t.shape), t, rtol, atol * scale)):
                out.per_var[k]["numeric"] = "differ"
                if out.counterexample is None:
                    out.counterexample = {"point": {n: listify(v) for n, v in point.items()},
                                          "variable": k, "claimed": listify(claimed),
                                          "true": listify(t)}
                break


def central_differences(f: Expression, point: dict, name: str) -> np.ndarray:
    """Central finite differences of ``f`` with respect to ``name`` (float64)."""
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


def finite_difference_witness(f: Expression, claims: dict, point: dict, notes: list) -> dict:
    """Per variable: finite differences at ``point`` and whether reverse mode agrees."""
    fd = {}
    for k in claims:
        try:
            g = central_differences(f, point, k)
            t = np.asarray(f.gradient(**point)[k], dtype=np.float64)
            fd[k] = {"value": listify(g),
                     "agrees_with_reverse_mode": bool(np.all(close(g, t, 1e-4, 1e-6)))}
        except Exception:  # noqa: BLE001 - a witness only
            continue
    for k, v in fd.items():
        if not v["agrees_with_reverse_mode"]:
            notes.append(f"{k}: central finite differences disagree with reverse "
                         "mode at the first point (a kink nearby?)")
    return fd


def _at_30_digits(claimed: list, true: list, point: dict, shapes: dict) -> list:
    """Each element pair evaluated exactly at ``point`` (its floats as exact rationals),
    to 30 digits: ``(claimed, true)`` complex pairs, None where one is no number."""
    subs = {}
    for name, shape in shapes.items():
        syms = leaf_symbols(name, shape)
        v = np.asarray(point[name], dtype=np.float64)
        for ix in np.ndindex(*shape):
            subs[syms[ix]] = sp.Rational(float(v[ix]))
    out = []
    for c, t in zip(claimed, true):
        a = sp.N(almost_everywhere(sp.sympify(c)).xreplace(subs), 30)
        b = sp.N(almost_everywhere(sp.sympify(t)).xreplace(subs), 30)
        out.append((complex(a), complex(b)) if a.is_number and b.is_number else None)
    return out


def _exactly_close(claimed: list, true: list, point: dict, shapes: dict) -> bool:
    """Whether the claim equals the truth at ``point`` to 12 digits, computed exactly."""
    return all(p is not None and abs(p[0] - p[1]) <= 1e-12 * max(1.0, abs(p[1]))
               for p in _at_30_digits(claimed, true, point, shapes))


def _exactly_apart(claimed: list, true: list, point: dict, shapes: dict, rtol: float) -> bool:
    """Whether the claim differs from the truth at ``point`` by more than ``rtol``
    (relative), computed exactly: a difference that is no float64 rounding."""
    return any(p is not None and abs(p[0] - p[1]) > rtol * max(1.0, abs(p[1]))
               for p in _at_30_digits(claimed, true, point, shapes))


def wide_sweep(f: Expression, claims: dict, per_var: dict, sym_pairs: list, found: Samples,
               shapes: dict, rng, rtol: float, atol: float, notes: list,
               points: int = WIDE_POINTS, judge=None, symbols: list | None = None) -> None:
    """For claims the numbers agree with but no proof settles: points at other scales,
    each coordinate ``±10**u`` with ``u`` uniform in [-2, 3], tried smallest first, where a
    difference that shows only far out (``relu(x - 5)`` added to the gradient) is found.
    A difference counts only when exact evaluation at 30 digits confirms it (no float64
    rounding), at points ``judge`` accepts (inside the domain, off the kinks)."""
    todo = [i for i, k in enumerate(claims) if per_var[k]["numeric"] == "agree"
            and per_var[k]["symbolic"] not in ("equal", "skipped")]
    if not todo:
        return
    candidates = [{k: rng.choice([-1.0, 1.0], size=s) * 10.0 ** rng.uniform(-2, 3, size=s)
                   for k, s in shapes.items()} for _ in range(points)]
    # smallest first: the counterexample a reader can check by hand
    candidates.sort(key=lambda p: max((float(np.max(np.abs(v))) for v in p.values()
                                       if np.size(v)), default=0.0))
    for point in candidates:
        try:
            with np.errstate(all="ignore"):
                true = f.gradient(**point)
                rows = {k: np.asarray(c.value(point), dtype=np.float64)
                        for k, c in claims.items()}
        except Exception:  # noqa: BLE001 - outside the domain: another point
            continue
        if judge is not None and (not _finite(f.evaluate(**point).detach().numpy())
                                  or judge(point) is not None):
            continue
        for i in list(todo):
            k = list(claims)[i]
            t = np.asarray(true[k], dtype=np.float64)
            if not _finite(t):
                continue
            c = np.broadcast_to(rows[k], t.shape)
            if _finite(c) and np.all(close(c, t, rtol, atol)):
                continue
            claimed, exact_true = sym_pairs[i]
            if symbols is not None:
                subs = exact_point(point, symbols)
                if subs is None or confirm(claimed, exact_true, subs) != "different":
                    continue
            elif not _exactly_apart(claimed, exact_true, point, shapes, 10 * rtol):
                continue
            todo.remove(i)
            found.used += 1
            found.evidence[k].append((rows[k], t, true, point))
            per_var[k]["max_error"] = max(per_var[k]["max_error"],
                                          float(np.max(np.abs(c - t))) if t.size else 0.0)
            per_var[k]["numeric"] = "differ"
            notes.append(f"{k}: the claim agrees near the scale of 1 but not at this point of "
                         "another scale")
            if found.counterexample is None:
                found.counterexample = {"point": {n: listify(v) for n, v in point.items()},
                                        "variable": k, "claimed": listify(c),
                                        "true": listify(t)}
        if not todo:
            return


def forgive_rounding(claims: dict, per_var: dict, sym_pairs: list, found: Samples,
                     shapes: dict, rtol: float, atol: float, notes: list,
                     symbols: list | None = None) -> None:
    """Float rounding, not a mistake: a difference of the numbers counts only where exact
    evaluation confirms it (:func:`~.domain.confirm`: floats as the decimals written,
    30 then 60 digits, judged against the size of the summed terms).

    A claim written with cancelling terms can lose digits in float64, and a true
    gradient that cancels to 0 comes out as 1e-16; where exact evaluation at the
    disagreeing points finds them equal, the numbers' disagreement is rounding.  The
    counterexample becomes a confirmed point (or None).
    """
    kept = None
    if symbols is not None:
        _overflow_is_no_counterexample(claims, per_var, sym_pairs, found, rtol, atol,
                                       symbols)
    for i, k in enumerate(claims):
        if k in found.shape_bad or per_var[k]["numeric"] != "differ" \
                or k in found.nonfinite:
            continue  # (a claim that is nan where the truth is finite is no rounding)
        claimed, true = sym_pairs[i]
        bad = [ev for ev in found.evidence[k] if not np.all(close(
            np.broadcast_to(ev[0], ev[1].shape), ev[1], rtol, atol))] or found.evidence[k]
        verdicts = []
        for ev in bad[:3]:
            if symbols is None:
                verdicts.append("equal" if per_var[k]["symbolic"] == "equal" and
                                _exactly_close(claimed, true, ev[3], shapes) else "unknown")
                continue
            subs = exact_point(ev[3], symbols)
            worst = _worst_elements(ev)
            verdicts.append("unknown" if subs is None else confirm(
                [claimed[j] for j in worst], [true[j] for j in worst], subs))
            if verdicts[-1] == "different":
                kept = kept or {"point": {n: listify(v) for n, v in ev[3].items()},
                                "variable": k, "claimed": listify(ev[0]),
                                "true": listify(ev[1])}
                break
        if verdicts and all(v == "equal" for v in verdicts) or (
                symbols is not None and verdicts and "different" not in verdicts
                and not _too_large(claimed, true)):
            per_var[k]["numeric"] = "agree (after rounding)"
            notes.append(f"{k}: float64 values differ by rounding only (no difference "
                         "survives exact evaluation)")
    if found.counterexample is not None:
        k = found.counterexample["variable"]
        if per_var.get(k, {}).get("numeric") != "differ" or (
                kept is not None and k == kept["variable"]
                and k not in found.nonfinite and k not in found.shape_bad):
            found.counterexample = kept


def _overflow_is_no_counterexample(claims: dict, per_var: dict, sym_pairs: list,
                                   found: Samples, rtol: float, atol: float,
                                   symbols: list) -> None:
    """A claim that is ``nan`` or ``inf`` in float64 where the truth is finite is a
    counterexample only where it is not real: an operation of it outside its domain
    (``sqrt`` of a negative number, ``1/0``), shown by exact evaluation of each of its
    parts.  Where every part is real (``exp(x)/(1 + exp(x))`` at x = 1000 overflows to
    ``inf/inf``), the claim is judged by its exact value: different (confirmed), or the
    point does not count."""
    for i, k in enumerate(claims):
        point = found.nonfinite.get(k)
        if point is None:
            continue
        claimed, true = sym_pairs[i]
        subs = exact_point(point, symbols)
        if subs is None or sum(sp.count_ops(c) for c in claimed) > MAX_EXACT_OPS:
            continue
        try:
            undefined = _outside_its_domain(claims[k], point) or not all(
                real_at_point(sp.sympify(c), subs) for c in claimed)
        except Exception:  # noqa: BLE001 - not evaluable exactly: the float verdict stands
            continue
        if undefined:
            continue  # (not real there: a counterexample)
        verdict = confirm(claimed, true, subs)
        del found.nonfinite[k]
        differ = verdict == "different" or any(
            not np.all(close(np.broadcast_to(c, t.shape), t, rtol, atol))
            for c, t, _, _ in found.evidence[k])
        per_var[k]["numeric"] = "differ" if differ else "agree"
        cex = found.counterexample
        if cex is not None and cex["variable"] == k and \
                cex["point"] == {n: listify(v) for n, v in point.items()}:
            if verdict == "different":  # (the claim's exact value, not float64's nan)
                cex["claimed"] = listify(np.asarray(
                    [complex(sp.N(exact(sp.sympify(c)).xreplace(subs), 17)).real
                     for c in claimed]).reshape(np.shape(cex["true"])))
            else:
                found.counterexample = None


def _outside_its_domain(claim: Claim, point: dict) -> bool:
    """Whether an operation of the claim (as written: SymPy's form may have lost it,
    ``exp(-log(x))`` is ``1/x``) leaves its domain at ``point`` for another reason than
    float64's overflow (``log`` of a negative number, ``sqrt`` below 0, ``1/0``)."""
    if claim.expression is None:
        return True
    err = claim.expression.domain_error(**{v: point[v] for v in claim.expression.variables})
    return err is not None and "overflow" not in str(err)


def _worst_elements(ev, count: int = 3) -> list:
    """The flat indices of the elements that differ most (relative) at one point."""
    c = np.broadcast_to(ev[0], ev[1].shape).astype(np.float64).ravel()
    t = np.asarray(ev[1], dtype=np.float64).ravel()
    rel = np.abs(c - t) / np.maximum(np.maximum(np.abs(c), np.abs(t)), 1e-300)
    return [int(j) for j in np.argsort(-rel)[:count]] if t.size else []


def _too_large(claimed: list, true: list) -> bool:
    """Whether exact evaluation was refused for size (then the float64 verdict stands)."""
    return any(sp.count_ops(c) + sp.count_ops(t) > MAX_EXACT_OPS
               for c, t in zip(claimed[:3], true[:3]))
