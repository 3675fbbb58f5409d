"""``check --batch`` at class scale: a generated problem set of N answers (default 2,000,
about a fifth of them distinct, as a class's are), timed with --jobs 1 and --jobs 2.

    python bench/bench_batch.py [--problems 2000]
"""
from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# (function, answers: the right one first, then typical mistakes)
PROBLEMS = [
    ("x**2 * sin(x)", ["2*x*sin(x) + x**2*cos(x)", "2*x*cos(x)", "2*x*sin(x)",
                       "x*(2*sin(x) + x*cos(x))"]),
    ("sin(x**2)", ["2*x*cos(x**2)", "cos(x**2)", "2*x*sin(x**2)"]),
    ("exp(-x**2/2)", ["-x*exp(-x**2/2)", "x*exp(-x**2/2)", "exp(-x**2/2)"]),
    ("log(1 + exp(x))", ["sigmoid(x)", "exp(x)/(1 + exp(x))", "1/(1 + exp(x))"]),
    ("tanh(w*x + b)", ["x*(1 - tanh(w*x + b)**2)", "1 - tanh(w*x + b)**2",
                       "x*(1 + tanh(w*x + b)**2)"]),
    ("sqrt(x**2 + 1)", ["x/sqrt(x**2 + 1)", "1/(2*sqrt(x**2 + 1))", "2*x/sqrt(x**2 + 1)"]),
    ("x**3 / 3 - x", ["x**2 - 1", "x**2", "3*x**2 - 1"]),
    ("atan(x)", ["1/(1 + x**2)", "1/(1 - x**2)", "-1/(1 + x**2)"]),
]


def problem_set(n: int, seed: int = 0) -> str:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        expr, answers = rng.choice(PROBLEMS)
        var = "w" if expr.startswith("tanh") else "x"
        claim = rng.choice(answers)
        if rng.random() < 0.25:  # a rewriting of the same answer: another distinct text
            claim = f"{rng.choice([1, 2, 3])}*({claim})/{rng.choice([1, 2, 3])}"
        out.append(f'[[problem]]\nname = "s{i}"\nexpr = "{expr}"\n'
                   f'grad = {{ {var} = "{claim}" }}\n')
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--problems", type=int, default=2000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "class.toml"
        path.write_text(problem_set(args.problems))
        for jobs in (1, 2):
            t = time.perf_counter()
            r = subprocess.run([sys.executable, "-m", "symgrad", "check", "--batch", str(path),
                                "--jobs", str(jobs)], capture_output=True, text=True)
            summary = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else r.stderr
            print(f"--jobs {jobs}: {time.perf_counter() - t:6.1f} s   {summary}")


if __name__ == "__main__":
    main()
