"""LeNet forward and backward on a (64, 1, 32, 32) float32 batch: symgrad against PyTorch
(CPU) in one process, with the same weights and inputs (the network of PyTorch's 60-minute
blitz: conv 1->6 5x5, relu, max-pool 2, conv 6->16 5x5, relu, max-pool 2, flatten, linear
400->120->84->10, MSE loss).

    python bench/bench_conv.py [--repeat 20] [--batch 64] [--threads 1]

Prints the best time of each library per step (forward, forward+backward) and the ratio
symgrad / PyTorch (goal: within 3x).  Before timing, the loss and every parameter's
gradient are compared (np.allclose): a fast wrong answer is no result.  Both libraries run
with ``--threads`` threads (default 1): PyTorch's intra-op threads, and numpy's BLAS
(OpenBLAS, set through its environment variables before numpy is imported; on a busy
machine OpenBLAS's many threads spin against each other and time the load, not the code).
"""
from __future__ import annotations

import argparse
import ast
import gc
import os
import sys
import time


def _threads(argv: list) -> str:
    for i, a in enumerate(argv):
        if a == "--threads" and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith("--threads="):
            return a.split("=", 1)[1]
    return "1"


for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, _threads(sys.argv))

import numpy as np  # noqa: E402  (after the thread settings)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import symgrad  # noqa: E402


def lenet(lib):
    """The LeNet of examples/models/lenet.py (the blitz's network, written once there)
    with ``torch`` bound to ``lib``."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples",
                        "models", "lenet.py")
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    net = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Net")
    namespace = {"torch": lib, "nn": lib.nn, "F": lib.nn.functional}
    exec(compile(ast.Module([net], type_ignores=[]), path, "exec"), namespace)  # noqa: S102
    return namespace["Net"]()


def same_weights(src, dst, lib) -> None:
    """Copy the PyTorch net's parameters into the symgrad net."""
    with lib.no_grad():
        for (name, p), (_, q) in zip(src.named_parameters(), dst.named_parameters()):
            q.copy_(lib.tensor(p.detach().numpy()))


def step(lib, net, x, target, backward: bool):
    out = net(x)
    loss = lib.nn.functional.mse_loss(out, target)
    if backward:
        net.zero_grad()
        loss.backward()
    return loss


def best(fn, repeat: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeat):
        gc.collect()
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    import torch
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((args.batch, 1, 32, 32)).astype(np.float32)
    ts = rng.standard_normal((args.batch, 10)).astype(np.float32)
    tnet, snet = lenet(torch), lenet(symgrad)
    same_weights(tnet, snet, symgrad)
    tx, tt = torch.tensor(xs), torch.tensor(ts)
    sx, st = symgrad.tensor(xs), symgrad.tensor(ts)

    tl, sl = step(torch, tnet, tx, tt, True), step(symgrad, snet, sx, st, True)
    ok = np.allclose(tl.item(), sl.item(), rtol=1e-4)
    for (name, p), (_, q) in zip(tnet.named_parameters(), snet.named_parameters()):
        if not np.allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-3, atol=1e-5):
            print(f"gradient of {name} differs: largest difference "
                  f"{np.abs(p.grad.numpy() - q.grad.numpy()).max():.3g}")
            ok = False
    if not ok:
        print("symgrad and PyTorch disagree: no timing")
        return 1
    load = os.getloadavg()[0]
    print(f"LeNet, batch {args.batch}x1x32x32 float32, best of {args.repeat} "
          f"(load average {load:.2f}{', noisy' if load > 0.5 else ''})")
    for backward, what in ((False, "forward"), (True, "forward+backward")):
        t_torch = best(lambda: step(torch, tnet, tx, tt, backward), args.repeat)
        t_sym = best(lambda: step(symgrad, snet, sx, st, backward), args.repeat)
        print(f"  {what:17s} torch {t_torch * 1e3:7.2f} ms   symgrad {t_sym * 1e3:7.2f} ms"
              f"   ratio {t_sym / t_torch:5.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
