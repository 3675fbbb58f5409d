"""The longer fuzz run: every strategy of tests/fuzz/fuzzing.py (random and hostile
command lines through ``diff``, ``check`` and ``draw``; crafted ``symgrad.save`` files,
``.npy`` headers and archives for ``symgrad.load``; problem files for ``check --batch``;
sizes within and beyond the limits; hostile names; signals to real processes), judged as
that module says.

    python bench/fuzz.py --minutes 30 [--seed 0] [--strategies sizes,toml]

Prints ``N inputs, F failures`` (and the count per strategy) and the first failures.
"""
from __future__ import annotations

import argparse
import collections
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "fuzz"))

from fuzzing import STRATEGIES, fuzz  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--strategies", default="",
                    help=f"comma-separated, among {', '.join(STRATEGIES)} (default: all)")
    args = ap.parse_args()
    picked = tuple(s for s in args.strategies.split(",") if s) or None
    unknown = [s for s in picked or () if s not in STRATEGIES]
    if unknown:
        ap.error(f"unknown strategies: {', '.join(unknown)}")
    counts: collections.Counter = collections.Counter()
    with tempfile.TemporaryDirectory() as d:
        os.chdir(d)  # (drawings land here)
        count, failures = fuzz(args.seed, seconds=60 * args.minutes, strategies=picked,
                               counts=counts, on_failure=lambda f: print(
                                   "failure:", *f, sep="\n  ", flush=True))
    print(f"{count} inputs, {len(failures)} failures")
    print("  by strategy: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    for given, what in failures[:10]:
        print(" ", given, "->", what)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
