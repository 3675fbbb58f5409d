#!/usr/bin/env python
"""Side-by-side benchmark of symgrad against torch, micrograd and plain numpy.

Four workloads, each run in this one process for every selected engine:

  tiny    0-d float32 chain y = tanh(y*1.01 + 0.1), 2000 steps: per-op overhead
  scalar  micrograd's demo MLP 2-16-16-1 on 100 moons points, op by op on scalars
  mlp     vectorised MLP 784-256-10, batch 256, softmax cross-entropy, float64
  large   (sin(x)*x + exp(-x*x)).sum() over 10**7 float64 values, time and peak memory

Before anything is timed, every engine's loss and gradients are compared with a
reference engine (np.allclose); the run aborts if they disagree.  Times are
best-of-N after a warm-up call, with the garbage collector disabled while timing
(it runs between repeats, outside the timed region).  The tables print symgrad's
time divided by each other engine's; a summary lists the targets with PASS/MISS.

    python bench/bench_engine.py [--quick] [--engines symgrad,torch,micrograd,numpy]
                                 [--only tiny,scalar,mlp,large] [--repeat N]
"""
import argparse
import gc
import importlib
import math
import os
import resource
import sys
import time
import tracemalloc
from pathlib import Path
from types import SimpleNamespace

import numpy as np

ENGINES = ("symgrad", "torch", "micrograd", "numpy")
WORKLOADS = ("tiny", "scalar", "mlp", "large")
# (default repeats, --quick repeats) per workload: best of N after one warm-up
REPEATS = {"tiny": (30, 3), "scalar": (7, 1), "mlp": (50, 5), "large": (7, 2)}

# micrograd's backward() builds its topological order recursively: the tiny
# chain (6000 ops plus constants) is deeper than Python's default limit.
sys.setrecursionlimit(max(sys.getrecursionlimit(), 50_000))
# run from anywhere: import symgrad from this checkout, not from site-packages
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
ERRORS = []  # (workload, engine, message) for engines that raised: left out, run exits 1


def attempt(workload, engine, fn, *args):
    """fn(*args), or None (recorded in ERRORS and printed) if it raises."""
    try:
        return fn(*args)
    except Exception as e:
        ERRORS.append((workload, engine, f"{type(e).__name__}: {e}"))
        print(f"  ERROR: {engine} raised {type(e).__name__}: {e} -- left out of [{workload}]")
        return None


# ---------------------------------------------------------------- helpers

def best_times(fns, repeat):
    """{key: best wall time of fns[key]() over `repeat` rounds}, after one warm-up call
    each.  The functions take turns within every round, so drift hits all alike; gc is
    disabled while timing and collected between runs, outside the timed region."""
    for fn in fns.values():
        fn()
    best = dict.fromkeys(fns, math.inf)
    was_enabled = gc.isenabled()
    gc.disable()
    gc.collect()
    gc.freeze()  # the ~200k long-lived objects (torch...) stay out of the collections below
    try:
        for _ in range(repeat):
            for key, fn in fns.items():
                gc.collect()
                t0 = time.perf_counter()
                fn()
                best[key] = min(best[key], time.perf_counter() - t0)
    finally:
        gc.unfreeze()
        if was_enabled:
            gc.enable()
    return best


def peak_memory(fn):
    """Peak bytes newly allocated during fn(), as seen by tracemalloc."""
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def cpu_and_faults(fns: dict, repeat: int) -> dict:
    """Per engine: the least CPU time (user + system, ms) and the fewest minor page faults
    of one call, over ``repeat`` rounds in turns.  Less moved by other processes than wall
    time; the faults count the fresh memory the kernel had to map."""
    best: dict = {}
    for _ in range(repeat):
        for name, fn in fns.items():
            gc.collect()
            a = resource.getrusage(resource.RUSAGE_SELF)
            fn()
            b = resource.getrusage(resource.RUSAGE_SELF)
            cpu = (b.ru_utime - a.ru_utime + b.ru_stime - a.ru_stime) * 1e3
            faults = b.ru_minflt - a.ru_minflt
            old = best.get(name, (math.inf, math.inf))
            best[name] = (min(old[0], cpu), min(old[1], faults))
    return best


def to_numpy(v):
    """float64 ndarray from a float, an ndarray, a micrograd Value or a tensor."""
    if isinstance(v, (int, float, np.ndarray, np.generic)):
        return np.asarray(v, dtype=np.float64)
    if hasattr(v, "detach"):
        v = v.detach()
    return np.asarray(v.numpy() if hasattr(v, "numpy") else v.data, dtype=np.float64)


def case(step, leaves=None, result=None, forward=None):
    """One engine's workload: `step` is timed, `result()` -> (loss, [grads]) is checked.
    `step` returns the loss (autograd engines: grads are read from `leaves`) or,
    for hand-written numpy (leaves=None), (loss, [grads])."""
    if result is None:
        def result():
            out = step()
            loss, grads = out if leaves is None else (out, [p.grad for p in leaves])
            return to_numpy(loss), [to_numpy(g) for g in grads]
    return SimpleNamespace(step=step, result=result, forward=forward)


def check(workload, cases, rtol, atol):
    """Abort unless every engine's loss and gradients match the first engine's."""
    results = {n: attempt(workload, n, c.result) for n, c in cases.items()}
    for n in [n for n, r in results.items() if r is None]:
        del cases[n], results[n]
    if not results:
        return
    (ref_name, ref), *others = results.items()
    if not others:
        print(f"  WARNING: {workload}: only {ref_name} ran, gradients not cross-checked")
    for name, res in others:
        if len(res[1]) != len(ref[1]):
            sys.exit(f"ABORT [{workload}]: {name} returned {len(res[1])} gradients, "
                     f"{ref_name} {len(ref[1])}")
        for what, a, b in [("output", res[0], ref[0])] + [
                (f"grad[{i}]", g, r) for i, (g, r) in enumerate(zip(res[1], ref[1]))]:
            if a.shape != b.shape or not np.allclose(a, b, rtol=rtol, atol=atol):
                diff = np.max(np.abs(a - b)) if a.shape == b.shape else f"shape {a.shape} vs {b.shape}"
                sys.exit(f"ABORT [{workload}]: {name} {what} disagrees with {ref_name} "
                         f"(max abs diff {diff}, rtol={rtol}, atol={atol}); not timing a wrong answer")
    print(f"  check: {', '.join(cases)} agree (output and {len(ref[1])} gradients)")


def table(rows, cols, ratio_keys):
    """rows: {engine: {key: value}}; cols: [(key, header, fmt)]; adds symgrad/x columns."""
    headers = ["engine"] + [h for _, h, _ in cols] + [f"sg/x {k}" for k in ratio_keys]
    lines = []
    sg = rows.get("symgrad")
    for name, r in rows.items():
        cells = [name] + [fmt.format(r[k]) if r.get(k) is not None else "n/a" for k, _, fmt in cols]
        for k in ratio_keys:
            ok = sg and name != "symgrad" and sg.get(k) and r.get(k)
            cells.append(f"{sg[k] / r[k]:.2f}" if ok else "-")
        lines.append(cells)
    widths = [max(len(c[i]) for c in [headers] + lines) for i in range(len(headers))]
    for c in [headers] + lines:
        print("  " + "  ".join(s.ljust(w) if i == 0 else s.rjust(w)
                               for i, (s, w) in enumerate(zip(c, widths))))


class Summary:
    def __init__(self):
        self.items = []

    def add(self, rows, workload, key, other, target=None, label=None):
        sg, ref = rows.get("symgrad", {}).get(key), rows.get(other, {}).get(key)
        if other in rows:
            self.items.append((workload, label or key, f"symgrad/{other}",
                               sg / ref if sg and ref else None, target))

    def print(self):
        print("\n== summary: symgrad / other (lower is better) ==")
        for workload, label, what, ratio, target in self.items:
            r = f"{ratio:6.3f}" if ratio is not None else "    n/a"
            t = f"<= {target:<4}" if target else "(info) "
            failed = any(e[:2] == (workload, "symgrad") for e in ERRORS)
            status = ("ERROR" if failed else "n/a" if ratio is None else "-" if not target
                      else "PASS" if ratio <= target else "MISS")
            print(f"  {workload:<7} {label:<10} {what:<18} {r}   {t}  {status}")
        if not any(ratio is not None for *_, ratio, _ in self.items):
            print("  (symgrad not run: no ratios)")
        for workload, engine, message in ERRORS:
            print(f"  ERROR   {workload:<7} {engine} raised {message}")


# ---------------------------------------------------------------- engines

def load_engines(requested, explicit):
    """Import the requested engines, plus torch, micrograd and numpy (when importable)
    as references for the gradient checks.  Returns (engines, timed names, notes)."""
    engines, notes = {}, []
    for name in ENGINES:
        wanted = name in requested
        if name == "symgrad" and not wanted:
            continue
        try:
            if name == "micrograd":
                engines[name] = SimpleNamespace(Value=importlib.import_module("micrograd.engine").Value,
                                                MLP=importlib.import_module("micrograd.nn").MLP)
            else:
                engines[name] = importlib.import_module(name)
                if not hasattr(engines[name], "tensor") and name != "numpy":
                    del engines[name]  # e.g. a namespace package: symgrad/ without __init__.py yet
                    raise ImportError(f"{name} has no tensor()")
        except Exception as e:  # symgrad may be half-written: any import error means "absent"
            if wanted and explicit:
                sys.exit(f"cannot import {name}: {type(e).__name__}: {e}")
            if wanted:
                notes.append(f"{name} not importable ({type(e).__name__}: {e}), skipped")
    return engines, [n for n in ENGINES if n in requested and n in engines], notes


def micrograd_tanh(v):
    """tanh for micrograd Values, in micrograd's style: the PyPI release (0.1.0)
    has only +, *, ** and relu; this is the tanh from Karpathy's lecture notebook."""
    t = math.tanh(v.data)
    out = type(v)(t, (v,), "tanh")

    def _backward():
        v.grad += (1 - t * t) * out.grad
    out._backward = _backward
    return out


# ---------------------------------------------------------------- 1. tiny

TINY_STEPS = 2000


def tanh_chain(y, tanh, steps):
    for _ in range(steps):
        y = tanh(y * 1.01 + 0.1)
    return y


def chain_case(leaf, tanh, steps):
    def forward():
        x = leaf()
        return x, tanh_chain(x, tanh, steps)

    def step():
        x, y = forward()
        y.backward()
        return x, y

    def result():
        x, y = step()
        return to_numpy(y), [to_numpy(x.grad)]
    return case(step, result=result, forward=forward)


def tiny_tensor(T, steps):
    return chain_case(lambda: T.tensor(0.5, dtype=T.float32, requires_grad=True), T.tanh, steps)


def tiny_micrograd(mg, steps):
    return chain_case(lambda: mg.Value(0.5), getattr(mg.Value, "tanh", micrograd_tanh), steps)


def run_tiny(engines, timed, repeat, summary):
    ops = 3 * TINY_STEPS
    print(f"\n[tiny] 0-d float32 chain y = tanh(y*1.01 + 0.1), {TINY_STEPS} steps = {ops} ops; "
          f"us per op, best of {repeat}")
    if "micrograd" in engines and not hasattr(engines["micrograd"].Value, "tanh"):
        print("  (micrograd's Value has no tanh: a micrograd-style one is added; micrograd is float64)")
    cases = build("tiny", engines, TINY_STEPS)
    check("tiny", cases, rtol=1e-4, atol=1e-6)
    # the 2000-step gradient underflows to 0: check a 10-step chain too
    check("tiny", build("tiny", {n: engines[n] for n in cases}, 10), rtol=1e-4, atol=1e-6)
    names = [n for n in timed if n in cases]
    t = best_times({(n, f): getattr(cases[n], f) for n in names for f in ("forward", "step")}, repeat)
    us = {k: v / ops * 1e6 for k, v in t.items()}
    rows = {n: {"forward": us[n, "forward"], "backward": us[n, "step"] - us[n, "forward"],
                "fwd+bwd": us[n, "step"]} for n in names}
    table(rows, [(k, k, "{:.2f}") for k in ("forward", "backward", "fwd+bwd")], ["forward", "backward"])
    summary.add(rows, "tiny", "forward", "torch", target=1.0)
    summary.add(rows, "tiny", "backward", "torch", target=1.0)
    return rows


# ---------------------------------------------------------------- 2. scalar

MLP_SIZES = (2, 16, 16, 1)


def moons(n=100, noise=0.1, seed=0):
    """Two interleaved half circles with gaussian noise (like sklearn's make_moons), labels -1/+1."""
    rng = np.random.default_rng(seed)
    t = np.linspace(0, np.pi, n // 2)
    outer = np.stack([np.cos(t), np.sin(t)], 1)
    inner = np.stack([1 - np.cos(t), 0.5 - np.sin(t)], 1)
    X = np.concatenate([outer, inner]) + rng.normal(0, noise, (n, 2))
    y = np.concatenate([-np.ones(n // 2), np.ones(n // 2)])
    return X.tolist(), y.tolist()


def mlp_weights(sizes=MLP_SIZES, seed=1):
    """Per layer (W[nout][nin], b[nout]) as micrograd initialises them: uniform(-1,1), b = 0."""
    rng = np.random.default_rng(seed)
    return [(rng.uniform(-1, 1, (nout, nin)).tolist(), [0.0] * nout)
            for nin, nout in zip(sizes[:-1], sizes[1:])]


def svm_loss(model, params, X, Y, const):
    """micrograd demo.ipynb's loss(): SVM max-margin loss + 1e-4 L2, op by op."""
    inputs = [[const(v) for v in row] for row in X]
    scores = [model(x) for x in inputs]
    losses = [(1 + -yi * si).relu() for yi, si in zip(Y, scores)]
    data_loss = sum(losses) * (1.0 / len(losses))
    reg_loss = 1e-4 * sum(p * p for p in params)
    return data_loss + reg_loss


def scalar_micrograd(mg, X, Y, weights):
    model = mg.MLP(MLP_SIZES[0], list(MLP_SIZES[1:]))
    for layer, (W, b) in zip(model.layers, weights):
        for neuron, w_row, b_j in zip(layer.neurons, W, b):
            for p, v in zip(neuron.w, w_row):
                p.data = v
            neuron.b.data = b_j
    params = model.parameters()

    def step():
        model.zero_grad()
        loss = svm_loss(model, params, X, Y, mg.Value)
        loss.backward()
        return loss
    return case(step, params)


def scalar_tensor(T, X, Y, weights):
    def leaf(v):
        return T.tensor(v, dtype=T.float64, requires_grad=True)

    def const(v):
        return T.tensor(v, dtype=T.float64)
    layers = [([[leaf(v) for v in row] for row in W], [leaf(v) for v in b]) for W, b in weights]
    params = [p for W, b in layers for w_row, b_j in zip(W, b) for p in (*w_row, b_j)]

    def model(x):  # micrograd.nn MLP/Layer/Neuron __call__, same op sequence
        for i, (W, b) in enumerate(layers):
            out = []
            for w_row, b_j in zip(W, b):
                act = sum((wi * xi for wi, xi in zip(w_row, x)), b_j)
                out.append(act.relu() if i != len(layers) - 1 else act)
            x = out[0] if len(out) == 1 else out
        return x

    def step():
        for p in params:
            p.grad = None
        loss = svm_loss(model, params, X, Y, const)
        loss.backward()
        return loss
    return case(step, params)


def run_scalar(engines, timed, repeat, summary):
    X, Y = moons()
    weights = mlp_weights()
    print(f"\n[scalar] micrograd demo: MLP {'-'.join(map(str, MLP_SIZES))} (ReLU), {len(X)} moons points, "
          f"SVM loss + L2, float64 scalars; ms per forward+backward step, best of {repeat}")
    cases = build("scalar", engines, X, Y, weights)
    check("scalar", cases, rtol=1e-7, atol=1e-10)
    t = best_times({n: cases[n].step for n in timed if n in cases}, repeat)
    rows = {n: {"step ms": v * 1e3} for n, v in t.items()}
    table(rows, [("step ms", "step ms", "{:.1f}")], ["step ms"])
    summary.add(rows, "scalar", "step ms", "micrograd", target=1.0, label="step")
    summary.add(rows, "scalar", "step ms", "torch", label="step")
    return rows


# ---------------------------------------------------------------- 3. mlp

def mlp_data(batch=256, nin=784, nhid=256, nout=10, seed=2):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, nout, batch)
    return SimpleNamespace(
        x=rng.standard_normal((batch, nin)), onehot=np.eye(nout)[labels],
        W1=rng.standard_normal((nin, nhid)) / np.sqrt(nin), b1=0.1 * rng.standard_normal(nhid),
        W2=rng.standard_normal((nhid, nout)) / np.sqrt(nhid), b2=0.1 * rng.standard_normal(nout))


def mlp_tensor(T, d):
    params = [T.tensor(a, dtype=T.float64, requires_grad=True) for a in (d.W1, d.b1, d.W2, d.b2)]
    x, onehot = T.tensor(d.x, dtype=T.float64), T.tensor(d.onehot, dtype=T.float64)
    W1, b1, W2, b2 = params

    def step():
        for p in params:
            p.grad = None
        logits = T.tanh(x @ W1 + b1) @ W2 + b2
        with T.no_grad():
            m = logits.max(dim=1, keepdim=True)[0]
        z = logits - m
        logp = z - T.log(T.exp(z).sum(dim=1, keepdim=True))
        loss = -(logp * onehot).sum(dim=1).mean()
        loss.backward()
        return loss
    return case(step, params)


def mlp_numpy(_, d):
    def step():
        x, onehot, W1, b1, W2, b2 = d.x, d.onehot, d.W1, d.b1, d.W2, d.b2
        h = np.tanh(x @ W1 + b1)
        logits = h @ W2 + b2
        z = logits - logits.max(axis=1, keepdims=True)
        e = np.exp(z)
        s = e.sum(axis=1, keepdims=True)
        logp = z - np.log(s)
        loss = -(logp * onehot).sum(axis=1).mean()
        # backward
        dlogits = (e / s - onehot) / len(x)
        dW2, db2 = h.T @ dlogits, dlogits.sum(axis=0)
        da = (dlogits @ W2.T) * (1 - h * h)
        dW1, db1 = x.T @ da, da.sum(axis=0)
        return loss, [dW1, db1, dW2, db2]
    return case(step)


def run_mlp(engines, timed, repeat, summary):
    d = mlp_data()
    print(f"\n[mlp] MLP 784-256-10 tanh, batch 256, softmax cross-entropy from basic ops, float64; "
          f"ms per forward+backward, best of {repeat}")
    cases = build("mlp", engines, d)
    check("mlp", cases, rtol=1e-6, atol=1e-9)
    t = best_times({n: cases[n].step for n in timed if n in cases}, repeat)
    rows = {n: {"step ms": v * 1e3} for n, v in t.items()}
    table(rows, [("step ms", "step ms", "{:.2f}")], ["step ms"])
    summary.add(rows, "mlp", "step ms", "numpy", target=1.3, label="step")
    summary.add(rows, "mlp", "step ms", "torch", label="step")
    return rows


# ---------------------------------------------------------------- 4. large

LARGE_N = 10 ** 7


def large_tensor(T, xs):
    x = T.tensor(xs, dtype=T.float64, requires_grad=True)

    def step():
        x.grad = None
        y = (T.sin(x) * x + T.exp(-x * x)).sum()
        y.backward()
        return y
    return case(step, [x])


def large_numpy(_, x):
    def step():
        s = np.sin(x)
        e = np.exp(-x * x)
        y = (s * x + e).sum()
        # backward, reusing s and e: d/dx = cos(x)*x + sin(x) - 2*x*exp(-x*x)
        g = np.cos(x)
        g *= x
        g += s
        g -= 2 * x * e
        return y, [g]
    return case(step)


def run_large(engines, timed, repeat, summary):
    xs = np.random.default_rng(3).uniform(-3, 3, LARGE_N)
    print(f"\n[large] (sin(x)*x + exp(-x*x)).sum(), 10**7 float64, forward+backward; best of {repeat}; "
          f"peak = tracemalloc peak of one step")
    cases = build("large", engines, xs)
    check("large", cases, rtol=1e-9, atol=1e-9)
    t = best_times({n: cases[n].step for n in timed if n in cases}, repeat)
    rows = {n: {"step ms": v * 1e3, "peak MB": None if n == "torch" else peak_memory(cases[n].step) / 2 ** 20}
            for n, v in t.items()}
    gc.disable()
    try:
        cf = cpu_and_faults({n: cases[n].step for n in rows}, repeat)
    finally:
        gc.enable()
    for n, (cpu, faults) in cf.items():
        rows[n]["cpu ms"], rows[n]["faults"] = cpu, faults
    grad_mb = xs.nbytes / 2 ** 20
    for n, r in rows.items():
        if r["peak MB"] is not None and r["peak MB"] < grad_mb:
            print(f"  WARNING: {n}'s peak ({r['peak MB']:.0f} MB) is below its gradient's own size "
                  f"({grad_mb:.0f} MB): its allocations are not visible to tracemalloc")
    table(rows, [("step ms", "step ms", "{:.1f}"), ("peak MB", "peak MB", "{:.0f}"),
                 ("cpu ms", "cpu ms", "{:.1f}"), ("faults", "faults", "{:.0f}")],
          ["step ms", "peak MB", "cpu ms", "faults"])
    if "torch" in rows:
        print("  (torch's allocator does not report to tracemalloc: its peak is not measured)")
    summary.add(rows, "large", "step ms", "numpy", target=1.1, label="time")
    summary.add(rows, "large", "peak MB", "numpy", target=1.5, label="peak mem")
    summary.add(rows, "large", "step ms", "torch", label="time")
    summary.add(rows, "large", "cpu ms", "numpy", target=1.1, label="cpu time")
    return rows


# ---------------------------------------------------------------- main

RUNNERS = {"tiny": run_tiny, "scalar": run_scalar, "mlp": run_mlp, "large": run_large}
# per workload: engine -> case factory; the first engine present is the check's reference
MAKERS = {
    "tiny": {"torch": tiny_tensor, "micrograd": tiny_micrograd, "symgrad": tiny_tensor},
    "scalar": {"micrograd": scalar_micrograd, "torch": scalar_tensor, "symgrad": scalar_tensor},
    "mlp": {"numpy": mlp_numpy, "torch": mlp_tensor, "symgrad": mlp_tensor},
    "large": {"numpy": large_numpy, "torch": large_tensor, "symgrad": large_tensor},
}


def build(workload, engines, *data):
    """The workload's cases for every loaded engine that runs it, reference first."""
    cases = {n: attempt(workload, n, make, engines[n], *data)
             for n, make in MAKERS[workload].items() if n in engines}
    return {n: c for n, c in cases.items() if c is not None}


def parse_list(text, allowed, what):
    items = [s.strip() for s in text.split(",") if s.strip()]
    bad = [s for s in items if s not in allowed]
    if bad:
        sys.exit(f"unknown {what}: {', '.join(bad)} (choose from {', '.join(allowed)})")
    return items


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats (whole run < 30 s)")
    ap.add_argument("--engines", help=f"comma list from {','.join(ENGINES)} "
                                      "(default: all; symgrad only if importable)")
    ap.add_argument("--only", default=",".join(WORKLOADS), help=f"comma list from {','.join(WORKLOADS)}")
    ap.add_argument("--repeat", type=int, help="best of N for every workload (overrides the defaults)")
    args = ap.parse_args(argv)
    requested = parse_list(args.engines, ENGINES, "engine") if args.engines else list(ENGINES)
    workloads = parse_list(args.only, WORKLOADS, "workload")
    engines, timed, notes = load_engines(requested, explicit=bool(args.engines))

    versions = [f"python {sys.version.split()[0]}", f"numpy {np.__version__}"]
    if "torch" in engines:
        versions.append(f"torch {engines['torch'].__version__} ({engines['torch'].get_num_threads()} threads)")
    print("symgrad engine benchmark: " + ", ".join(versions))
    load = os.getloadavg()[0]
    print(f"machine: {os.cpu_count()} cores, load average {load:.2f}"
          + ("  -- WARNING: machine busy, timings will be noisy" if load > 0.5 else ""))
    print(f"engines timed: {', '.join(timed)}" + "".join(f"\n  note: {s}" for s in notes))
    print("times: best of N after a warm-up, gc disabled while timing; sg/x = symgrad time / x time")

    t0 = time.perf_counter()
    summary = Summary()
    for w in workloads:
        if not any(n in MAKERS[w] for n in timed):
            print(f"\n[{w}] skipped: none of {', '.join(MAKERS[w])} selected")
            continue
        RUNNERS[w](engines, timed, args.repeat or REPEATS[w][args.quick], summary)
    summary.print()
    print(f"\ntotal {time.perf_counter() - t0:.1f} s")
    return 1 if ERRORS else 0


if __name__ == "__main__":
    sys.exit(main())
