"""Readable closed forms in bounded time.

A derivative from symbolic reverse mode on the graph is already compact: each line of the
gradient program applies one op's rule, so ``1 - tanh(u)**2`` stays whole (not ``sech``)
and shared factors appear once per use.  What it needs is tidying, not search:

* :func:`tidy` (always, in the caller's process: linear in the expression's size) drops
  ``Piecewise`` branches taken on null sets and pulls out common factors;
* mode ``"auto"`` (the default) then tries cheap rational rewrites (``together``,
  ``factor(cancel(e))``) on small expressions that divide by something, where they are
  quick, and keeps one only where it is shorter: ``(x**2 - 2*x - 1)/(x - 1)**2``,
  ``exp(x)/(exp(x) + 1)**2``;
* mode ``"full"`` (the CLI's ``--simplify``) runs ``sympy.simplify`` on everything, whose
  time has no useful bound and whose forms (``cosh``, ``sech``) a course may not want.

The rewrites of both modes run in one child process under a time budget, so no SymPy call
can hold the caller for long: past the budget the tidied forms are kept.

Examples
--------
>>> import sympy as sp
>>> x, y = sp.symbols("x y")
>>> tidy(2*x*y + 2*x*sp.sin(y))
2*x*(y + sin(y))
>>> import numpy as np
>>> raw = 2*x/(x - 1) - (x**2 + 1)/(x - 1)**2
>>> tidy_all({"x": np.array([raw], dtype=object)})["x"]
array([(x**2 - 2*x - 1)/(x - 1)**2], dtype=object)
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from .._util import run_with_timeout
from .symbols import _obj, almost_everywhere

__all__ = ["tidy", "tidy_all", "MODES", "SMALL", "SMALL_BUDGET", "LARGE"]

MODES = ("auto", "full", "none")
#: Expressions with at most this many operations get the rewrites of mode "auto".
SMALL = 60
#: Seconds the rewrites of mode "auto" may take in all (they take hundredths: the budget
#: only guards against SymPy's rare pathological cases, such as a huge power to expand).
SMALL_BUDGET = 2.0
#: Past this many operations even factoring is skipped (its cost grows faster than the
#: form's size: 0.1-0.2 s at 760 operations): such a form (a deep chain's product of
#: dozens of factors) is read through its program (``--steps``), not tidied.
LARGE = 400


def _ops(e) -> int:
    return int(sp.count_ops(e)) if isinstance(e, sp.Basic) else 0


def tidy(e):
    """``e`` with null-set branches dropped and common factors pulled out (whichever of
    that and ``e`` itself has fewer operations)."""
    e = almost_everywhere(sp.sympify(e))
    if not isinstance(e, sp.Basic) or e.is_Atom:
        return e
    n = _ops(e)
    if n > LARGE:
        return e
    factored = sp.factor_terms(e)
    return factored if _ops(factored) < n else e


def _has_fraction(e) -> bool:
    """Whether ``e`` divides by something (what the rational rewrites can combine)."""
    return any(p.exp.is_negative for p in e.atoms(sp.Pow))


def _cheap(e) -> list:
    return [sp.together(e), sp.factor(sp.cancel(e))]


def _rewrite_each(exprs: list, full: bool) -> list:
    """Candidate forms of each expression (run in the child process)."""
    return [[sp.simplify(e)] if full else _cheap(e) for e in exprs]


def tidy_all(arrays: dict, mode: str = "auto", timeout: float = 10.0,
             cpu: bool = False) -> dict:
    """:func:`tidy` every element of ``arrays`` (name -> object array or 0-d) and, by
    ``mode``, rewrite the small ones cheaply ("auto") or simplify all ("full"); "none"
    keeps every element as it is.  Rewrites run in one child process killed after
    ``timeout`` seconds (``SMALL_BUDGET`` in "auto"; with ``cpu``, seconds of its own CPU
    time, a wall time of 20 times that the safety net: the same forms on a busy machine
    as on an idle one), keeping a rewritten form only where it has fewer operations."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    keep = (lambda e: e) if mode == "none" else tidy
    # Each distinct element once (a Hessian's mirrored halves, repeated entries).
    flat = {k: [sp.sympify(e) for e in np.ravel(np.asarray(a, dtype=object))]
            for k, a in arrays.items()}
    done = {e: keep(e) for e in dict.fromkeys(e for es in flat.values() for e in es)}
    if mode != "none":
        picks = [e for e, t in done.items()
                 if mode == "full" or (0 < _ops(t) <= SMALL and _has_fraction(t))]
        if picks:
            budget = timeout if mode == "full" else min(timeout, SMALL_BUDGET)
            status, forms = run_with_timeout(
                _rewrite_each, ([done[e] for e in picks], mode == "full"),
                max(20 * budget, 10.0) if cpu else budget, cpu=budget if cpu else None)
            if status == "ok":
                for e, candidates in zip(picks, forms):
                    best = min(candidates, key=_ops)
                    if _ops(best) < _ops(done[e]):
                        done[e] = best
    flat = {k: [done[e] for e in es] for k, es in flat.items()}
    out = {}
    for k, a in arrays.items():
        shape = np.shape(a)
        out[k] = (np.array(flat[k] + [None], dtype=object)[:-1].reshape(shape) if shape
                  else _obj(flat[k][0]))
    return out
