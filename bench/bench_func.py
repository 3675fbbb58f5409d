"""The cost lesson of forward and reverse mode, measured: ``jacfwd`` against ``jacrev``.

Two functions of the Jacobians tutorial's shape, ``tanh(W x + b)``:

* **wide** (R^n -> R^m with n = 1024 inputs, m = 16 outputs): a Jacobian of 16 rows and
  1024 columns; reverse mode needs 16 backward passes (one batched pass in symgrad and in
  PyTorch), forward mode 1024 tangents;
* **tall** (n = 16 inputs, m = 1024 outputs): the other way round.

and the Hessian of the tutorial's ``tanh(W x + b)`` at its sizes (R^512 -> R^32: a
32x512x512 Hessian) three ways: ``jacrev(jacrev(f))`` (reverse over reverse: 16,384 rows of
the inner Jacobian, in batched backward passes of chunks of rows), ``hessian(f)``
(``jacfwd(jacrev(f))``) and ``jacfwd(jacfwd(f))``.

and per-sample gradients, ``vmap(grad(loss), in_dims=(None, None, 0, 0))``, of the
per-sample-gradients tutorial's CNN (conv 1->32, conv 32->64, max-pool, linear 9216->128,
linear 128->10, log_softmax, nll_loss; 28x28 images, ``--batch`` samples): symgrad's batched
path (:mod:`symgrad.func.pergrad`: traced once, replayed on the batch, one backward) and
its loop over the samples, against ``torch.func``.

Each is timed in symgrad (``symgrad.func``) and PyTorch (``torch.func``, one thread) in the
same run, best of N after a warm-up, and the Jacobians are compared first (a wrong answer aborts).
Printed: the times, ``jacfwd / jacrev`` for each library (> 1: reverse mode wins), and
symgrad / PyTorch for each transform.

    python bench/bench_func.py [--n 1024] [--m 16] [--repeat 5] [--hessian 512x32]
                               [--batch 64]

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


def _hessians(libs: dict, n_in: int, n_out: int, repeat: int) -> int:
    """The tutorial's Hessian three ways in each library; 1 if one disagrees with torch."""
    print()
    print(f"Hessian of tanh(W x + b), R^{n_in} -> R^{n_out}: the first call (as a tutorial "
          f"makes it) and the best of {repeat}")
    print(f"{'transform':18} {'symgrad':>19} {'torch':>19} {'symgrad/torch':>14}")
    print(f"{'':18} {'first':>9} {'best':>9} {'first':>9} {'best':>9} {'first':>6} "
          f"{'best':>6}")
    ways = {"jacrev(jacrev)": lambda f, func: func.jacrev(func.jacrev(f, argnums=2), argnums=2),
            "hessian": lambda f, func: func.hessian(f, argnums=2),
            "jacfwd(jacfwd)": lambda f, func: func.jacfwd(func.jacfwd(f, argnums=2), argnums=2)}
    ref = None
    for way, make in ways.items():
        times = {}
        for lib_name in ("torch", "symgrad"):  # (torch's first Hessian is the reference)
            lib = libs[lib_name]
            f, inputs = _case(lib, n_in, n_out, seed=2)
            hess = make(f, lib.func)
            runs, value = [], None
            for _ in range(max(1, repeat)):  # (seconds each: no warm-up)
                t0 = time.perf_counter()
                value = hess(*inputs)
                runs.append(time.perf_counter() - t0)
            value = np.asarray(value.detach().numpy())
            ref = value if ref is None else ref
            if not np.allclose(value, ref, rtol=1e-4, atol=1e-4):
                print(f"bench_func: {lib_name}'s {way} disagrees with torch's "
                      f"(largest difference {np.abs(value - ref).max():.3g})")
                return 1
            times[lib_name] = runs[0], min(runs)
        (s0, s), (t0, t) = times["symgrad"], times["torch"]
        print(f"{way:18} {s0:8.3f}s {s:8.3f}s {t0:8.3f}s {t:8.3f}s {s0 / t0:6.2f} {s / t:6.2f}")
    return 0


def _cnn(lib, batch: int):
    """The tutorial's CNN and batch (numpy draws, the same in both libraries)."""
    rng = np.random.default_rng(3)
    nn, F = lib.nn, lib.nn.functional

    class SimpleCNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 32, 3, 1)
            self.conv2 = nn.Conv2d(32, 64, 3, 1)
            self.fc1 = nn.Linear(9216, 128)
            self.fc2 = nn.Linear(128, 10)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv2(F.relu(self.conv1(x)))), 2)
            x = self.fc2(F.relu(self.fc1(lib.flatten(x, 1))))
            return F.log_softmax(x, dim=1)

    model = SimpleCNN()
    params = {k: lib.tensor(rng.standard_normal(tuple(v.shape)) * 0.05, dtype=lib.float32)
              for k, v in model.named_parameters()}
    data = lib.tensor(rng.standard_normal((batch, 1, 28, 28)), dtype=lib.float32)
    targets = lib.tensor(rng.integers(0, 10, batch))

    def loss(params, buffers, sample, target):
        out = lib.func.functional_call(model, (params, buffers), (sample.unsqueeze(0),))
        return F.nll_loss(out, target.unsqueeze(0))
    return loss, (params, {}, data, targets)


def _per_sample(libs: dict, batch: int, repeat: int) -> int:
    """vmap(grad) of the tutorial's CNN: symgrad batched and looping, torch.func."""
    print()
    print(f"per-sample gradients of the tutorial's CNN, {batch} samples: best of {repeat}")
    times, ref = {}, None
    for name in ("torch", "symgrad", "symgrad loop"):
        lib = libs[name.split()[0]]
        loss, inputs = _cnn(lib, batch)
        per_sample = lib.func.grad(loss)
        if name == "symgrad loop":
            per_sample.per_sample = None  # (no batched path: vmap's loop over the samples)
        fn = lib.func.vmap(per_sample, in_dims=(None, None, 0, 0))
        runs = []
        for _ in range(max(1, repeat)):
            t0 = time.perf_counter()
            got = fn(*inputs)
            runs.append(time.perf_counter() - t0)
        got = {k: np.asarray(v.detach().numpy()) for k, v in got.items()}
        ref = got if ref is None else ref
        for k, v in got.items():
            if not np.allclose(v, ref[k], rtol=1e-4, atol=1e-6):
                print(f"bench_func: {name}'s per-sample gradient of {k} disagrees with torch's "
                      f"(largest difference {np.abs(v - ref[k]).max():.3g})")
                return 1
        times[name] = min(runs)
    for name, t in times.items():
        print(f"{name:14} {t:8.3f}s {t / times['torch']:8.2f}x torch")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1024, help="the long side (default 1024)")
    parser.add_argument("--m", type=int, default=16, help="the short side (default 16)")
    parser.add_argument("--repeat", type=int, default=5, help="best of N (default 5)")
    parser.add_argument("--hessian", default="512x32",
                        help="the Hessian case's inputs x outputs (default 512x32; 0: skip)")
    parser.add_argument("--hessian-repeat", type=int, default=2,
                        help="best of N for the Hessians (default 2)")
    parser.add_argument("--batch", type=int, default=64,
                        help="samples of the per-sample-gradients case (default 64; 0: skip)")
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
    if args.hessian == "0":
        return _per_sample(libs, args.batch, args.hessian_repeat) if args.batch > 0 else 0
    try:
        n_in, n_out = (int(v) for v in args.hessian.lower().split("x"))
    except ValueError:
        print(f"bench_func: --hessian wants INPUTSxOUTPUTS (such as 512x32), got "
              f"{args.hessian!r}")
        return 2
    if _hessians(libs, n_in, n_out, args.hessian_repeat):
        return 1
    return _per_sample(libs, args.batch, args.hessian_repeat) if args.batch > 0 else 0


if __name__ == "__main__":
    sys.exit(main())
