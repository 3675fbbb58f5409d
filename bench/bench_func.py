"""The cost lesson of forward and reverse mode, measured: ``jacfwd`` against ``jacrev``.

Two functions of the Jacobians tutorial's shape, ``tanh(W x + b)``:

* **wide** (R^n -> R^m with n = 1024 inputs, m = 16 outputs): a Jacobian of 16 rows and
  1024 columns; reverse mode needs 16 backward passes (one batched pass in symgrad and in
  PyTorch), forward mode 1024 tangents;
* **tall** (n = 16 inputs, m = 1024 outputs): the other way round.

Each is timed in symgrad (``symgrad.func``) and PyTorch (``torch.func``, one thread) in the
same run, best of N after a warm-up, and the Jacobians are compared first (a wrong answer aborts).
Printed: the times, ``jacfwd / jacrev`` for each library (> 1: reverse mode wins), and
symgrad / PyTorch for each transform.

    python bench/bench_func.py [--n 1024] [--m 16] [--repeat 5]

symgrad is imported from this checkout.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

# One thread for numpy's BLAS as for PyTorch: on a busy machine OpenBLAS's threads spin
# against each other and the ratio would measure the load.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import symgrad  # noqa: E402


def _case(lib, n_in: int, n_out: int, seed: int):
    rng = np.random.default_rng(seed)
    w = lib.tensor(rng.standard_normal((n_out, n_in)) / np.sqrt(n_in), dtype=lib.float32)
    b = lib.tensor(rng.standard_normal(n_out), dtype=lib.float32)
    x = lib.tensor(rng.standard_normal(n_in), dtype=lib.float32)

    def predict(weight, bias, v):
        return lib.nn.functional.linear(v, weight, bias).tanh()
    return predict, (w, b, x)


def _best(fn, repeat: int) -> float:
    fn()  # warm-up
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1024, help="the long side (default 1024)")
    parser.add_argument("--m", type=int, default=16, help="the short side (default 16)")
    parser.add_argument("--repeat", type=int, default=5, help="best of N (default 5)")
    args = parser.parse_args(argv)
    try:
        import torch
    except ImportError:
        print("bench_func: PyTorch is the reference here: pip install torch==2.13.0")
        return 2
    torch.set_num_threads(1)  # symgrad's numpy runs on one thread too (a fair, steady compare)
    libs = {"symgrad": symgrad, "torch": torch}
    shapes = {"wide": (args.n, args.m), "tall": (args.m, args.n)}
    times: dict = {}
    print(f"tanh(W x + b): wide R^{args.n} -> R^{args.m}, tall R^{args.m} -> R^{args.n}; "
          f"best of {args.repeat}")
    print(f"{'function':8} {'transform':9} {'symgrad':>12} {'torch':>12} {'symgrad/torch':>14}")
    for name, (n_in, n_out) in shapes.items():
        results = {}
        for lib_name, lib in libs.items():
            f, inputs = _case(lib, n_in, n_out, seed=1)
            for transform in ("jacfwd", "jacrev"):
                jac = getattr(lib.func, transform)(f, argnums=2)
                results[lib_name, transform] = np.asarray(jac(*inputs).detach().numpy())
                times[name, lib_name, transform] = _best(lambda: jac(*inputs), args.repeat)
        ref = results["torch", "jacrev"]
        for key, value in results.items():
            if not np.allclose(value, ref, rtol=1e-4, atol=1e-5):
                print(f"bench_func: {key} disagrees with torch's jacrev on '{name}' "
                      f"(largest difference {np.abs(value - ref).max():.3g})")
                return 1
        for transform in ("jacfwd", "jacrev"):
            s, t = times[name, "symgrad", transform], times[name, "torch", transform]
            print(f"{name:8} {transform:9} {s * 1e3:10.2f}ms {t * 1e3:10.2f}ms {s / t:14.1f}")
    print()
    print(f"{'jacfwd / jacrev':24} {'wide':>8} {'tall':>8}")
    for lib_name in libs:
        ratios = [times[n, lib_name, "jacfwd"] / times[n, lib_name, "jacrev"] for n in shapes]
        print(f"{lib_name:24} {ratios[0]:8.2f} {ratios[1]:8.2f}")
    print("(> 1: reverse mode is faster; the lesson: jacrev for wide, jacfwd for tall)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
