"""Size and time of symbolic gradients: symgrad's straight-line program vs sympy.diff.

    python bench/bench_symbolic.py [--max-depth 64]

For f_d = tanh(1.1*tanh(... tanh(1.1*x + 0.1) ...) + 0.1) (d nested tanh), prints:

* symgrad: time to build the straight-line gradient program (reverse mode on the IR),
  its number of lines and its total operation count (SymPy ``count_ops`` of all lines);
* SymPy: time of ``sympy.diff`` on the nested expression and the operation count of the
  derivative as a tree; then ``sympy.cse`` of that derivative: time and operation count
  of the replacements plus the reduced expression.

The straight-line program grows linearly with d; the tree that ``diff`` returns repeats
the inner tanh chains and grows quadratically (CSE recovers sharing, at a cost).
"""
from __future__ import annotations

import argparse
import time

import sympy as sp

import symgrad
from symgrad._util import deep
from symgrad.symbolic.bridge import gradient_program


def nested_tensor(d: int):
    x = symgrad.tensor(0.3, dtype=symgrad.float64, requires_grad=True, name="x")
    f = x
    for _ in range(d):
        f = symgrad.tanh(1.1 * f + 0.1)
    return x, f


def nested_sympy(d: int):
    x = sp.Symbol("x", real=True)
    f = x
    for _ in range(d):
        f = sp.tanh(sp.Rational(11, 10) * f + sp.Rational(1, 10))
    return x, f


def _deep(fn):
    """Run ``fn`` with a high recursion limit on a thread with a 512 MB stack."""
    return deep(fn, limit=200_000)


def measure(d: int) -> dict:
    x, f = nested_tensor(d)
    t0 = time.perf_counter()
    prog = gradient_program(f)
    t_prog = time.perf_counter() - t0
    prog_ops = prog.size()

    xs, fs = nested_sympy(d)
    note = ""
    t0 = time.perf_counter()
    try:
        df = sp.diff(fs, xs)
    except RecursionError:
        # SymPy's diff recurses through the tree: deep nesting exceeds Python's default
        # limit.  Retry with a large limit on a thread with a large stack.
        note = "diff: RecursionError at the default limit; retried with a larger one"
        df = _deep(lambda: sp.diff(fs, xs))
    t_diff = time.perf_counter() - t0
    diff_ops = int(_deep(lambda: sp.count_ops(df)))
    t0 = time.perf_counter()
    reps, reduced = _deep(lambda: sp.cse(df))
    t_cse = time.perf_counter() - t0
    cse_ops = sum(int(sp.count_ops(e)) for _, e in reps) + sum(
        int(sp.count_ops(e)) for e in reduced)

    # The program agrees with sympy.diff (a sanity check, not a timing).
    at = {xs: sp.Float(0.3, 30)}
    want = float(_deep(lambda: df.xreplace(at).evalf(20)))
    got = float(prog.evaluate()["x"])
    assert abs(got - want) <= 1e-9 * max(1.0, abs(want)), (d, got, want)
    return {"note": note, "d": d, "lines": len(prog.lines), "prog_ops": prog_ops, "t_prog": t_prog,
            "diff_ops": diff_ops, "t_diff": t_diff, "cse_lines": len(reps) + 1,
            "cse_ops": cse_ops, "t_cse": t_cse}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-depth", type=int, default=64)
    args = ap.parse_args()
    depths = [d for d in (2, 4, 8, 16, 32, 64, 128) if d <= args.max_depth]
    head = (f"{'d':>4} | {'program lines':>13} {'ops':>7} {'time s':>8} | "
            f"{'diff ops':>9} {'time s':>8} | {'cse lines':>9} {'ops':>7} {'time s':>8}")
    print(head)
    print("-" * len(head))
    notes = []
    for d in depths:
        r = measure(d)
        print(f"{r['d']:>4} | {r['lines']:>13} {r['prog_ops']:>7} {r['t_prog']:>8.3f} | "
              f"{r['diff_ops']:>9} {r['t_diff']:>8.3f} | {r['cse_lines']:>9} "
              f"{r['cse_ops']:>7} {r['t_cse']:>8.3f}")
        if r["note"]:
            notes.append(f"d={d}: {r['note']}")
    for n in notes:
        print(n)


if __name__ == "__main__":
    main()
