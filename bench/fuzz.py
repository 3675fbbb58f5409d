"""The longer fuzz run: random and hostile command lines through ``diff``, ``check`` and
``draw`` (in-process), judged as tests/fuzz/fuzzing.py says.

    python bench/fuzz.py --minutes 30 [--seed 0]

Prints ``N inputs, F failures`` and the first failures' command lines.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "fuzz"))

from fuzzing import fuzz  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        os.chdir(d)  # (drawings land here)
        count, failures = fuzz(args.seed, seconds=60 * args.minutes)
    print(f"{count} inputs, {len(failures)} failures")
    for cmd, what in failures[:10]:
        print(" ", cmd, "->", what)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
