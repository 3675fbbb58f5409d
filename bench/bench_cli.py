"""Wall time of ``symgrad`` commands run as processes, as a user runs them.

    python bench/bench_cli.py [--repeat 3]

Each command is started as a fresh process (``python -m symgrad ...``), best of
``--repeat``; the reference is SymPy's own plain ``diff`` of a small expression, also
started as a process (import included), and ``python -c "import numpy"``.  Prints seconds
and the ratio to the SymPy reference (the goal: at most 2 whatever the expression, and
the tanh chain's time linear in its depth, 1 to 64) and ``import symgrad`` against
``import numpy`` (the goal: at most 1.5).  The sources must be compiled (``pip install``
does it, also ``-e``): on a machine that sets PYTHONDONTWRITEBYTECODE, Python would
otherwise compile every module at every start.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _chain(depth: int) -> str:
    e = "x"
    for _ in range(depth):
        e = f"tanh(1.1*{e} + 0.1)"
    return e


_NET = "tanh(w2*tanh(w1*x + b1) + b2)"
COMMANDS = [
    ("version", ["--version"]),
    ("ops", ["ops"]),
    ("diff quadratic at a point", ["diff", "5*x**2 + 3*sin(y)", "--at", "x=4", "--at", "y=0"]),
    ("diff two-layer tanh net", ["diff", _NET]),
    ("diff three-deep tanh chain", ["diff", "tanh(tanh(tanh(x)))", "--at", "x=0.5"]),
    ("diff atan(x)*cosh(y)", ["diff", "atan(x)*cosh(y)"]),
    ("diff rational", ["diff", "(x**2 + 1)/(x - 1)"]),
    ("diff logistic loss", ["diff", "log(1 + exp(-y*(w1*x1 + w2*x2 + b)))"]),
    ("diff softmax cross-entropy", ["diff", "-sum(y*log_softmax(z))", "--shape", "y=n",
                                    "--shape", "z=n"]),
    ("diff dot, vector", ["diff", "sin(dot(x, y))", "--at", "x=[1,2,3]", "--at", "y=[5,6,7]"]),
    ("diff order 2", ["diff", "x**3*y", "--order", "2", "--at", "x=1", "--at", "y=2"]),
    ("diff net --order 2", ["diff", _NET, "--order", "2"]),
    ("check softplus", ["check", "softplus(x)", "--grad", "x=sigmoid(x)"]),
    ("check sin(dot)", ["check", "sin(dot(x,y))", "--grad", "x=cos(dot(x,y))*y"]),
    ("check net, right (1/cosh**2)", ["check", _NET, "--grad", "w1=w2*x/cosh(b1 + w1*x)**2"
                                      "*(1 - tanh(b2 + w2*tanh(b1 + w1*x))**2)"]),
    ("check net, wrong", ["check", _NET, "--grad", "w1=w2*x*(1 - tanh(b1 + w1*x)**2)"
                          "*(1 - tanh(b2 + w2*tanh(b1 + w1*x)))"]),
]
#: The tanh chain of each depth with --steps: its time should grow linearly in depth.
DEPTHS = (1, 2, 4, 8, 16, 32, 64)
SYMPY = ("import sympy as sp; x, y = sp.symbols('x y'); "
         "print(sp.diff(5*x**2 + 3*sp.sin(y), x))")


def best(argv: list, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        subprocess.run(argv, cwd=ROOT, capture_output=True, check=False)
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    ref = best([sys.executable, "-c", SYMPY], args.repeat)
    numpy = best([sys.executable, "-c", "import numpy"], args.repeat)
    ours = best([sys.executable, "-c", "import symgrad"], args.repeat)
    print(f"{'reference: sympy.diff as a process':44s} {ref:6.2f} s")
    print(f"{'reference: import numpy':44s} {numpy:6.2f} s")
    print(f"{'import symgrad':44s} {ours:6.2f} s   {ours / numpy:5.2f} x numpy")
    worst = 0.0
    for name, cmd in COMMANDS + [(f"diff tanh chain depth {d} --steps",
                                  ["diff", _chain(d), "--steps"]) for d in DEPTHS]:
        t = best([sys.executable, "-m", "symgrad", *cmd], args.repeat)
        worst = max(worst, t / ref)
        print(f"{name:44s} {t:6.2f} s   {t / ref:5.2f} x sympy")
    print(f"{'slowest command':44s} {'':6s}     {worst:5.2f} x sympy")


if __name__ == "__main__":
    main()
