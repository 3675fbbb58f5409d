"""A DataLoader epoch over 60,000 small tensors, symgrad against PyTorch in one process.

The dataset is a ``TensorDataset`` of a (60000, 784) float32 tensor (MNIST-sized images)
and int64 labels; one epoch is iterating ``DataLoader(ds, batch_size=64, shuffle=True)``
and touching every batch.  Both loaders are seeded alike (``manual_seed``) and must yield
the same batches (the run stops otherwise: a fast wrong answer is not a result); then
they take turns, best of N epochs each.

    python bench/bench_data.py [--repeat 5] [--n 60000]

Prints the ratio symgrad / PyTorch (target <= 2).
"""
from __future__ import annotations

import argparse
import gc
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import symgrad  # noqa: E402


def epoch(T, ds) -> int:
    rows = 0
    for xb, yb in T.utils.data.DataLoader(ds, batch_size=64, shuffle=True):
        rows += xb.shape[0] + 0 * yb.shape[0]
    return rows


def generic(T, ds):
    """The same samples through a user's map-style Dataset (no fast path: one
    ``__getitem__`` per sample, then ``default_collate``)."""

    class Rows(T.utils.data.Dataset):
        def __len__(self):
            return len(ds)

        def __getitem__(self, i):
            return ds[i]

    return Rows()


def same_batches(torch, ds_s, ds_t) -> None:
    torch.manual_seed(7)
    symgrad.manual_seed(7)
    pairs = zip(symgrad.utils.data.DataLoader(ds_s, batch_size=64, shuffle=True),
                torch.utils.data.DataLoader(ds_t, batch_size=64, shuffle=True))
    for (xs, ys), (xt, yt) in pairs:
        if not (np.array_equal(xs.numpy(), xt.numpy()) and np.array_equal(ys.numpy(),
                                                                         yt.numpy())):
            sys.exit("bench_data: symgrad's batches differ from PyTorch's; not timed")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--n", type=int, default=60000)
    args = parser.parse_args()
    import torch  # noqa: E402  # why: the reference, loaded only when the bench runs
    rng = np.random.default_rng(0)
    x = rng.random((args.n, 28 * 28), dtype=np.float32)
    y = rng.integers(0, 10, args.n)
    ds_s = symgrad.utils.data.TensorDataset(symgrad.from_numpy(x), symgrad.from_numpy(y))
    ds_t = torch.utils.data.TensorDataset(torch.from_numpy(x), torch.from_numpy(y))
    same_batches(torch, ds_s, ds_t)
    cases = {"TensorDataset": ((symgrad, ds_s), (torch, ds_t)),
             "Dataset subclass": ((symgrad, generic(symgrad, ds_s)),
                                                (torch, generic(torch, ds_t)))}
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"DataLoader epoch: {args.n} samples of 784 float32, batch 64, shuffle "
          f"(best of {args.repeat}; load average {load:.2f})")
    for case, engines in cases.items():
        best = [float("inf"), float("inf")]
        gc.collect()
        gc.disable()
        try:
            for _ in range(args.repeat):
                for k, (T, ds) in enumerate(engines):
                    start = time.perf_counter()
                    assert epoch(T, ds) == args.n
                    best[k] = min(best[k], time.perf_counter() - start)
                    gc.collect()
        finally:
            gc.enable()
        ratio = best[0] / best[1]
        verdict = f" (target <= 2: {'PASS' if ratio <= 2 else 'MISS'})"
        print(f"  {case}: symgrad {best[0] * 1000:.1f} ms, torch {best[1] * 1000:.1f} ms, "
              f"ratio {ratio:.2f}{verdict}")


if __name__ == "__main__":
    main()
