"""Vector and matrix claims for every size: proved in the matrix algebra, tried at others.

A gradient written in matrix form (``2 * A.T @ (A @ x - b)``) claims something for every
size of the variables, not just for the size of the point it was checked at.  Two things
test that claim:

* :func:`proved_for_every_size` -- the true gradient's vector form (the op table's rules
  run on :mod:`symbolic matrices <symgrad.symbolic.matrix>`) and the claim have equal
  canonical forms: equal for every size, a proof;
* :func:`counterexample_at_other_sizes` -- numbers at other sizes, smallest first, with
  the sizes that must be equal kept equal (:func:`symgrad.symbolic.vectors.dimensions`):
  ``2*A @ x`` for the gradient of ``x.T @ A @ x`` fails at every size for a random ``A``,
  and ``A @ x`` for ``A.T @ x`` cannot even be evaluated where ``A`` is not square.

Examples
--------
>>> from symgrad import parse
>>> from symgrad.checking.sampling import Claim
>>> f = parse("sum((A @ x - b)**2)")
>>> point = {"A": np.ones((3, 2)), "x": np.ones(2), "b": np.ones(3)}
>>> proved_for_every_size(f, "x", Claim("2 * A.T @ A @ x - 2 * A.T @ b", f.variables), point)
True
>>> c = counterexample_at_other_sizes(f, {"x": Claim("2 * A @ (A @ x - b)", f.variables)},
...                                   point, np.random.default_rng(0), 1e-6, 1e-9)
>>> c["sizes"], c["why"][:18]  # (at 1x1 a matrix is its own transpose)
({'A': [1, 2], 'x': [2], 'b': [1]}, 'cannot be evaluate')
"""
from __future__ import annotations

import itertools
from typing import Iterator

import numpy as np

from ..symbolic.expression import EvaluationError, Expression
from ..symbolic.vectors import NoVectorForm, dimensions, proved_equal
from .report import listify
from .sampling import close, fit, random_point

__all__ = ["proved_for_every_size", "counterexample_at_other_sizes", "size_classes",
           "other_shapes", "outside_domain"]

#: The sizes tried, as (size of each class) patterns: equal sizes 1-4, then distinct ones.
_MAX_TRIES = 8


def size_classes(f: Expression, point: dict, labels: dict | None = None) -> dict | None:
    """Variable -> the size class of each of its dimensions, or None (no matrix form)."""
    try:
        return dimensions(f, point, labels)
    except (NoVectorForm, ValueError, TypeError, RuntimeError):
        return None


def proved_for_every_size(f: Expression, name: str, claim, point: dict,
                          labels: dict | None = None) -> bool:
    """Whether the claim for ``name`` equals the true gradient for every size (with the
    sizes that ``labels`` names equal, equal)."""
    if claim.expression is None:
        return False
    return proved_equal(f, name, claim.expression, point, labels)


def _patterns(k: int, base: tuple) -> list:
    """Size patterns for ``k`` classes, fewest elements first, without ``base``."""
    out = [(n,) * k for n in (1, 2, 4)]
    if k > 1:
        out += list(itertools.permutations(range(2, 2 + k)))[:4]
        out += [tuple(1 + (i % 2) for i in range(k)), tuple(2 - (i % 2) for i in range(k))]
    seen, ordered = set(), []
    for p in sorted(out, key=lambda p: (int(np.prod(p)), p)):
        if p != base and p not in seen:
            seen.add(p)
            ordered.append(p)
    return ordered[:_MAX_TRIES]


def other_shapes(f: Expression, point: dict, labels: dict | None = None) -> Iterator[dict]:
    """The variables' shapes at other sizes, smallest first (each size class of ``f``'s
    variables, as :func:`size_classes` finds them, through the tried patterns); nothing
    when the sizes cannot be told apart."""
    classes = size_classes(f, point, labels)
    if classes is None:
        return
    k = 1 + max((c for cs in classes.values() for c in cs), default=-1)
    if k == 0:
        return
    base = [0] * k
    for name, cs in classes.items():
        for c, n in zip(cs, np.shape(point[name])):
            base[c] = n
    for sizes in _patterns(k, tuple(base)):
        yield {n: tuple(sizes[c] for c in cs) for n, cs in classes.items()}


def counterexample_at_other_sizes(f: Expression, claims: dict, point: dict, rng,
                                  rtol: float, atol: float, smaller: bool = False,
                                  labels: dict | None = None) -> dict | None:
    """The first point, smallest sizes first, where a claim differs from the gradient
    (or cannot be evaluated): a counterexample with its ``sizes``; None if none.  With
    ``smaller``, only sizes with fewer elements in all than ``point`` has, and no matrix
    with a side of 1 (where a transposed claim can look right)."""
    total = sum(int(np.size(v)) for v in point.values())
    factor_here = _factors(f, claims, point) if smaller else None
    for shapes in other_shapes(f, point, labels):
        if smaller and sum(int(np.prod(s)) for s in shapes.values()) >= total:
            continue
        if smaller and any(len(s) == 2 and 1 in s for s in shapes.values()):
            continue  # (a matrix with a side of 1 can hide a transpose: 2x2 at least)
        found = _try(f, claims, shapes, rng, rtol, atol)
        if smaller and found is not None and found.get("claimed") is not None and \
                factor_here is not None and not factor_here.get(found["variable"], True) \
                and _one_ratio(found["claimed"], found["true"]):
            continue  # (a product-rule term a plain factor 2 at size 1: it hides the term)
        if found is not None:
            found["sizes"] = {n: list(s) for n, s in shapes.items()}
            return found
    return None


def _try(f: Expression, claims: dict, shapes: dict, rng, rtol, atol) -> dict | None:
    """One usable random point at ``shapes`` (inside the domain of the function, its
    gradient finite)."""
    for kind in (0, 1, 2):
        point = random_point(rng, shapes, kind)
        try:
            true = f.gradient(**point)
        except Exception:  # noqa: BLE001 - these sizes do not fit the function
            return None
        finite = all(np.all(np.isfinite(v)) for v in true.values())
        if not finite or outside_domain(f, point):
            continue  # (logdet's gradient is finite, 0, where det < 0: not judged there)
        for name, claim in claims.items():
            t = np.asarray(true[name], dtype=np.float64)
            try:
                got = np.asarray(claim.value(point), dtype=np.float64)
            except EvaluationError as err:
                return _counterexample(point, name, None, t, f"cannot be evaluated: {err}")
            cl = fit(got, t.shape)
            if cl is None:
                return _counterexample(point, name, got, t,
                                       f"has shape {list(got.shape)}, not {list(t.shape)}")
            if np.all(np.isfinite(cl)) and not np.all(close(cl, t, rtol, atol)):
                return _counterexample(point, name, got, t, None)
        return None
    return None


def _one_ratio(claimed, true) -> bool:
    """Whether ``claimed`` is one constant times ``true`` (elementwise, where true is
    not 0)."""
    c = np.asarray(claimed, dtype=np.float64)
    t = np.asarray(true, dtype=np.float64)
    try:
        c = np.broadcast_to(c, t.shape)
    except ValueError:
        return False
    mask = np.abs(t) > 1e-12
    if not np.any(mask) or np.any(np.abs(c[~mask]) > 1e-12):
        return False
    r = c[mask] / t[mask]
    return bool(np.all(np.abs(r - r[0]) <= 1e-9 * max(1.0, abs(r[0]))))


def _factors(f: Expression, claims: dict, point: dict) -> dict | None:
    """Per variable, whether its claim is a constant multiple of the truth at
    ``point`` (a smaller counterexample must not turn a mistake of another kind into a
    factor), or None where the point cannot be evaluated."""
    try:
        true = f.gradient(**point)
        return {k: _one_ratio(np.asarray(c.value(point), dtype=np.float64), true[k])
                for k, c in claims.items()}
    except Exception:  # noqa: BLE001 - the numbers decide as before
        return None


def outside_domain(f: Expression, point: dict) -> bool:
    """Whether ``point`` lies outside the domain where ``f`` is real (not judged)."""
    try:
        return f.domain_error(**point) is not None
    except Exception:  # noqa: BLE001 - cannot tell: the numbers decide
        return False


def _counterexample(point: dict, name: str, claimed, true, why) -> dict:
    out = {"point": {n: listify(v) for n, v in point.items()}, "variable": name,
           "claimed": None if claimed is None else listify(claimed), "true": listify(true)}
    if why:
        out["why"] = why
    return out
