"""The engine runs nodes in PyTorch's order, on every path it has.

``backward()`` takes the engine's ordered fast path; ``backward(inputs=...)`` and
``autograd.grad`` take its general (heap) path.  Random graphs of exact IEEE operations
(+, -, * in float32), with a hook on every tensor and leaf, must log the same hooks with
the same values, and end with bit-identical gradients, as PyTorch 2.13: the order of
the gradient sums is visible in the last bits.
"""
import random

import numpy as np
import pytest

import symgrad

torch = pytest.importorskip("torch")


def _program(seed: int, n_leaves: int = 4, n_ops: int = 40):
    """A random DAG: (leaf values, [(op, i, j)]) over 0-d and 3-element values."""
    rng = random.Random(seed)
    shapes = [rng.choice([(), (3,)]) for _ in range(n_leaves)]
    leaves = [np.float32(rng.uniform(-2, 2)) if s == () else
              np.array([rng.uniform(-2, 2) for _ in range(3)], np.float32) for s in shapes]
    ops = []
    n = n_leaves
    for _ in range(n_ops):
        # Recent values more often: long chains as well as wide fans.
        i = rng.randrange(max(0, n - 6), n) if rng.random() < 0.7 else rng.randrange(n)
        j = rng.randrange(n)
        ops.append((rng.choice("+-*c"), i, j))
        n += 1
    return leaves, ops


def _run(lib, seed: int, how: str):
    leaves, ops = _program(seed)
    log = []
    xs = [lib.tensor(v, requires_grad=True) for v in leaves]
    for k, x in enumerate(xs):
        x.register_hook(lambda g, k=k: log.append(("leaf", k, g.detach().numpy().tolist())))
        x.register_post_accumulate_grad_hook(
            lambda t, k=k: log.append(("post", k, t.grad.numpy().tolist())))
    # Each leaf enters through its own node, so that no node makes two AccumulateGrad
    # nodes ready at once: PyTorch's queue leaves the order of such ties to its heap.
    values = [x * 1.5 for x in xs]
    for k, (op, i, j) in enumerate(ops):
        a, b = values[i], values[j]
        y = a + b if op == "+" else a - b if op == "-" else a * b if op == "*" else a * 0.75
        if k % 3 == 0:
            y.register_hook(lambda g, k=k: log.append(("hook", k, g.detach().numpy().tolist())))
        values.append(y)
    # Several outputs summed into the root: several branches meet at the end.
    root = values[-1].sum() + values[-2].sum() * 2 + values[-5].sum()
    if how == "backward":
        root.backward()
        grads = [x.grad for x in xs]
    elif how == "inputs":
        root.backward(inputs=xs)
        grads = [x.grad for x in xs]
    else:
        grads = list(lib.autograd.grad(root, xs, allow_unused=True))
    return log, [None if g is None else g.detach().numpy().tobytes() for g in grads]


@pytest.mark.parametrize("how", ["backward", "inputs", "grad"])
@pytest.mark.parametrize("seed", range(12))
def test_random_graph_order_and_bits_match_torch(seed, how):
    want_log, want = _run(torch, seed, how)
    got_log, got = _run(symgrad, seed, how)
    assert got_log == want_log
    assert got == want


def test_accumulate_grad_ties_same_on_both_paths():
    """Leaves made ready together by one node: the fast path runs them as the heap does."""
    log = []
    xs = [symgrad.tensor(float(k + 2), requires_grad=True) for k in range(6)]
    for k, x in enumerate(xs):
        x.register_post_accumulate_grad_hook(lambda t, k=k: log.append(k))
    y = xs[0] * xs[1] + xs[2] * xs[3] * (xs[4] - xs[5])
    runs = []
    for how in ("backward", "inputs", "backward"):
        log.clear()
        for x in xs:
            x.grad = None
        if how == "backward":
            y.backward(retain_graph=True)
        else:
            y.backward(inputs=xs, retain_graph=True)
        runs.append((list(log), [float(x.grad) for x in xs]))
    assert runs[0] == runs[1] == runs[2]
    assert sorted(runs[0][0]) == list(range(6))


def test_accumulate_grad_ready_together_run_in_one_go():
    """Two leaves made ready by the same node: both accumulate before the next node."""
    def scenario(lib):
        log = []
        a = lib.tensor(2.0, requires_grad=True)
        b = lib.tensor(3.0, requires_grad=True)
        c = lib.tensor(5.0, requires_grad=True)
        for name, t in (("a", a), ("b", b), ("c", c)):
            t.register_post_accumulate_grad_hook(lambda t, name=name: log.append(name))
        p = a * b
        q = p * c
        p.register_hook(lambda g: log.append("p"))
        q.backward()
        return sorted(log[:1]), log[1], sorted(log[2:]), [float(t.grad) for t in (a, b, c)]
    assert scenario(symgrad) == scenario(torch)
