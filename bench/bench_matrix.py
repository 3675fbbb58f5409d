"""Matrix calculus on the Matrix Cookbook list: symgrad next to SymPy's MatrixSymbol.diff.

    python bench/bench_matrix.py

For every identity of tests/symbolic/test_matrix_cookbook.py (the Cookbook's equations,
least squares, logistic regression, softmax cross-entropy, a dense layer):

* symgrad: the vector form from the op table's rules (``Expression.vector_gradient``),
  whether it is proved equal to the identity for every size, and the time;
* SymPy: the same function written with ``MatrixSymbol``s of symbolic size (where SymPy's
  matrix expressions can write it: they have no elementwise sigmoid, tanh or softmax of a
  vector) differentiated with ``.diff``; its result is evaluated at random values and
  compared with the identity: ``correct``, ``wrong`` (SymPy issue 26585: some products
  give 0), ``unevaluated`` (a ``Derivative`` is left), or ``error``.

Prints one row per identity and the totals.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import sympy as sp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "symbolic"))

import symgrad  # noqa: E402
from symgrad.symbolic.vectors import proved_equal  # noqa: E402
from test_matrix_cookbook import COOKBOOK, SIZES, evaluate, values  # noqa: E402

D = {c: sp.Symbol(c, integer=True, positive=True) for c in "nmkl"}


def symbols(dims: dict) -> dict:
    """MatrixSymbols of symbolic size; vectors are columns."""
    out = {}
    for name, d in dims.items():
        rows = D[d[0]] if d else 1
        cols = D[d[1]] if len(d) > 1 else 1
        out[name] = sp.MatrixSymbol(name, rows, cols)
    return out


def _det(M):
    return sp.Determinant(M)


def _tr(M):
    return sp.Trace(M)


#: The functions in SymPy's matrix expressions (None: SymPy cannot write them).
SYMPY = {
    "49": lambda s: _det(s["X"]),
    "51": lambda s: _det(s["A"] * s["X"] * s["B"]),
    "55": lambda s: sp.log(_det(s["X"].T * s["X"])),
    "57": lambda s: sp.log(sp.Abs(_det(s["X"]))),
    "57 logdet": lambda s: sp.log(_det(s["X"])),
    "58 k=2": lambda s: _det(s["X"] * s["X"]),
    "59-60": lambda s: _tr(s["C"].T * s["X"].I),  # (sum(C * X^-1), as SymPy writes it)
    "61": lambda s: s["a"].T * s["X"].I * s["b"],
    "62": lambda s: _det(s["X"].I),
    "63": lambda s: _tr(s["A"] * s["X"].I * s["B"]),
    "69": lambda s: s["x"].T * s["a"],
    "70": lambda s: s["a"].T * s["X"] * s["b"],
    "71": lambda s: s["a"].T * s["X"].T * s["b"],
    "72": lambda s: s["a"].T * s["X"] * s["a"],
    "78": lambda s: s["b"].T * s["X"].T * s["X"] * s["c"],
    "79": lambda s: (s["B"] * s["x"] + s["b"]).T * s["C"] * (s["D"] * s["x"] + s["d"]),
    "81": lambda s: s["x"].T * s["B"] * s["x"],
    "82": lambda s: s["b"].T * s["X"].T * s["D"] * s["X"] * s["c"],
    "83": lambda s: (s["X"] * s["b"] + s["c"]).T * s["D"] * (s["X"] * s["b"] + s["c"]),
    "101": lambda s: _tr(s["X"] * s["A"]),
    "102": lambda s: _tr(s["A"] * s["X"] * s["B"]),
    "103": lambda s: _tr(s["A"] * s["X"].T * s["B"]),
    "104": lambda s: _tr(s["X"].T * s["A"]),
    "105": lambda s: _tr(s["A"] * s["X"].T),
    "111": lambda s: _tr(s["X"] * s["X"]),
    "112": lambda s: _tr(s["X"] * s["X"] * s["B"]),
    "113": lambda s: _tr(s["X"].T * s["B"] * s["X"]),
    "114": lambda s: _tr(s["B"] * s["X"] * s["X"].T),
    "115": lambda s: _tr(s["X"] * s["X"].T * s["B"]),
    "116": lambda s: _tr(s["X"] * s["B"] * s["X"].T),
    "117": lambda s: _tr(s["B"] * s["X"].T * s["X"]),
    "least squares, x": lambda s: (s["A"] * s["x"] - s["b"]).T * (s["A"] * s["x"] - s["b"]),
    "least squares, A": lambda s: (s["A"] * s["x"] - s["b"]).T * (s["A"] * s["x"] - s["b"]),
}


def _numeric(e, sizes: dict, syms: dict, point: dict) -> np.ndarray:
    """A SymPy matrix expression at concrete sizes and values."""
    e = e.subs({D[c]: n for c, n in sizes.items()})
    swap = {}
    for name, ms in syms.items():
        v = np.asarray(point[name], dtype=np.float64)
        v = v.reshape(-1, 1) if v.ndim == 1 else v.reshape(1, 1) if v.ndim == 0 else v
        swap[ms.subs({D[c]: n for c, n in sizes.items()})] = sp.ImmutableMatrix(v)
    e = e.xreplace(swap).doit()
    if isinstance(e, (sp.NDimArray,)) or hasattr(e, "as_explicit"):
        e = e.as_explicit() if hasattr(e, "as_explicit") else e
    return np.asarray(sp.Array(e).tolist() if not isinstance(e, sp.MatrixBase) else
                      e.tolist(), dtype=np.float64)


def sympy_verdict(eq: str, var: str, dims: dict, identity: str) -> tuple[str, float]:
    build = SYMPY.get(eq)
    if build is None:
        return "cannot write it", 0.0
    syms = symbols(dims)
    f = build(syms)
    t0 = time.perf_counter()
    try:
        g = f.diff(syms[var])
    except Exception as err:  # noqa: BLE001 - what SymPy does is what is measured
        return f"error ({type(err).__name__})", time.perf_counter() - t0
    took = time.perf_counter() - t0
    if g.has(sp.Derivative):
        return "unevaluated", took
    sizes = SIZES[0]
    point = values(dims, sizes, 7)
    want = evaluate(identity, point)
    try:
        got = _numeric(g, sizes, syms, point)
    except Exception as err:  # noqa: BLE001
        return f"no value ({type(err).__name__})", took
    got = np.squeeze(got)
    if got.shape != np.squeeze(want).shape and got.size == 1 and float(got) == 0:
        return "wrong (0)", took
    ok = got.shape == np.squeeze(want).shape and np.allclose(got, np.squeeze(want))
    return ("correct" if ok else "wrong"), took


def symgrad_verdict(f: str, var: str, dims: dict, identity: str) -> tuple[str, str, float]:
    e = symgrad.parse(f)
    point = values(dims, SIZES[0], 0)
    labels = {k: tuple(d) for k, d in dims.items()}
    t0 = time.perf_counter()
    form = e.vector_gradient(var, **point)
    proved = proved_equal(e, var, symgrad.parse(identity), point, labels)
    return form, "proved" if proved else "not proved", time.perf_counter() - t0


def main() -> None:
    rows = []
    for eq, f, var, dims, identity, _ in COOKBOOK:
        form, proved, t_sg = symgrad_verdict(f, var, dims, identity)
        verdict, t_sp = sympy_verdict(eq, var, dims, identity)
        rows.append((eq, f, var, form, proved, t_sg, verdict, t_sp))
        print(f"{eq:26s} d/d{var:2s} symgrad {proved:10s} {1e3 * t_sg:6.0f} ms   "
              f"SymPy {verdict:18s} {1e3 * t_sp:6.0f} ms   {form}")
    n = len(rows)
    print(f"\n{n} identities: symgrad proved {sum(r[4] == 'proved' for r in rows)}; "
          f"SymPy correct {sum(r[6] == 'correct' for r in rows)}, "
          f"wrong {sum(r[6].startswith('wrong') for r in rows)}, "
          f"unevaluated {sum(r[6] == 'unevaluated' for r in rows)}, "
          f"cannot write {sum(r[6] == 'cannot write it' for r in rows)}, "
          f"other {sum(r[6].startswith(('error', 'no value')) for r in rows)}")
    print(f"median time: symgrad {1e3 * float(np.median([r[5] for r in rows])):.0f} ms, "
          f"SymPy {1e3 * float(np.median([r[7] for r in rows if r[7]])):.0f} ms")


if __name__ == "__main__":
    main()
