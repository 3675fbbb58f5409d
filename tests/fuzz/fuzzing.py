"""Generators of hostile and random input for symgrad's text surfaces, and the one oracle
they are judged by: every input ends in an exit status of the contract (0 done, 1 wrong,
2 bad input as one clear line, 3 undecided), never an internal error (70), a traceback or
a hang, and nothing typed is ever executed.

Used by tests/fuzz/test_fuzz.py (a fixed, short sample) and bench/fuzz.py (as long as you
like: ``python bench/fuzz.py --minutes 30``).
"""
from __future__ import annotations

import random
import time

from click.testing import CliRunner

from symgrad_cli.main import cli

FUNCTIONS = ["sin", "cos", "tanh", "exp", "log", "sqrt", "sigmoid", "relu", "abs", "atan",
             "cosh", "softplus", "log1p", "erf", "asinh", "sum", "mean", "norm", "logsumexp",
             "dot", "max", "det", "trace", "sign", "ln", "sec"]
ATOMS = ["x", "y", "z", "w", "A", "0", "1", "2.5", "1e-10", "1e300", "pi", "e", "-1",
         "0.1", "1000", "x.T"]
NOISE = ["(", ")", "**", "*", "+", "-", "/", "@", ",", ".", "^", "'", '"', "__import__",
         "os.system('echo hi')", "lambda", "[", "]", "{", "}", "\\", "\x00", "é", "∂", " ",
         "--help", "-o", "x=", ";", "#", "\n", "1" * 400, "(" * 60, ")" * 60]
HOSTILE = ["__import__('os').system('touch /tmp/pwned')", "exec('1')", "eval('1')",
           "open('/etc/passwd')", "x.__class__", "().__class__.__bases__", "x**(2**100)",
           "x*(y*0+10)**(y*0+5000)", "sin(0)**x", "tanh(" * 120 + "x" + ")" * 120,
           "x + (y*0+0.5)**((y*0+10)**(y*0+100))", "-tanh(x)", "--", "-", "", " ",
           "1/0", "log(0)", "sqrt(-1)", "0**0", "x**-1000", "exp(exp(exp(x)))"]


def expression(rng: random.Random, depth: int = 0) -> str:
    """A random expression of the grammar (sometimes ill-typed, sometimes wrong)."""
    r = rng.random()
    if depth > 4 or r < 0.3:
        return rng.choice(ATOMS)
    if r < 0.6:
        op = rng.choice(["+", "-", "*", "/", "**", "@"])
        return f"({expression(rng, depth + 1)} {op} {expression(rng, depth + 1)})"
    f = rng.choice(FUNCTIONS)
    args = [expression(rng, depth + 1) for _ in range(2 if f == "dot" else 1)]
    return f"{f}({', '.join(args)})"


def mutate(rng: random.Random, text: str) -> str:
    """``text`` with a few random insertions, deletions and noise."""
    chars = list(text)
    for _ in range(rng.randint(1, 3)):
        k = rng.randint(0, len(chars))
        if rng.random() < 0.5 and chars:
            del chars[min(k, len(chars) - 1)]
        else:
            chars[k:k] = rng.choice(NOISE)
    return "".join(chars)


def value(rng: random.Random) -> str:
    return rng.choice(["4", "-0.5", "[1,2,3]", "[[1,2],[3,4]]", "[0]", "nan", "inf", "1e400",
                       "[1,", "x", "[[1,2],[3]]", "-1e-300", "[]", "2"])


def command(rng: random.Random) -> list:
    """A random command line for diff, check or draw."""
    pick = rng.random()
    expr = rng.choice(HOSTILE) if pick < 0.15 else (
        mutate(rng, expression(rng)) if pick < 0.45 else expression(rng))
    at = []
    for v in rng.sample(["x", "y", "z", "A", "w"], rng.randint(0, 3)):
        at += ["--at", f"{v}={value(rng)}"]
    kind = rng.random()
    if kind < 0.5:
        extra = ["--order", str(rng.choice([1, 2, 3]))] if rng.random() < 0.2 else []
        return ["diff", expr, *at, *extra, *(["--json"] if rng.random() < 0.3 else [])]
    if kind < 0.85:
        claim = mutate(rng, expr) if rng.random() < 0.5 else expression(rng)
        return ["check", expr, "--grad", f"x={claim}", *at, "--samples", "3",
                "--timeout", "5"]
    return ["draw", expr, *at, "-o", rng.choice(["-", "out.dot", "out.xyz", ""]),
            "--format", "dot"]


def run_one(args: list) -> tuple[bool, str]:
    """Whether ``args`` ended as the contract says, and what happened."""
    r = CliRunner().invoke(cli, args)
    ok = r.exit_code in (0, 1, 2, 3) and (r.exception is None
                                         or isinstance(r.exception, SystemExit))
    text = r.output
    if "internal error" in text or "Traceback" in text:
        ok = False
    if r.exit_code == 2 and not text.startswith("Usage"):  # (click's usage errors aside)
        lines = [ln for ln in text.strip().splitlines() if ln.strip()]
        # one line, or a line with the text and a caret under the column
        ok = ok and 1 <= len(lines) <= 3 and lines[0].startswith("symgrad: error")
    return ok, f"exit {r.exit_code}: {text[-300:]!r}"


def fuzz(seed: int, n: int | None = None, seconds: float | None = None) -> tuple[int, list]:
    """Run ``n`` inputs (or for ``seconds``); returns (count, failures)."""
    rng = random.Random(seed)
    failures, count = [], 0
    end = None if seconds is None else time.monotonic() + seconds
    while (n is None or count < n) and (end is None or time.monotonic() < end):
        args = command(rng)
        ok, what = run_one(args)
        count += 1
        if not ok:
            failures.append((args, what))
    return count, failures
