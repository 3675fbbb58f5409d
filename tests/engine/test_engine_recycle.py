"""A backward pass on numpy arrays reuses the large arrays it alone owns
(symgrad.engine.recycle): bounded extra memory, the same gradients bit for bit as without
reuse, PyTorch's gradients, and nothing the user holds is ever written into.

Sizes are 2**17 float64 values (1 MiB, the reuse threshold) or a little more: large
enough for the pool, cheap enough for the suite.
"""
import gc
import tracemalloc

import numpy as np
import pytest

import symgrad
from symgrad.engine import recycle, reverse, rules

torch = pytest.importorskip("torch")

N = 1 << 17  # 1 MiB of float64
MB = 8 * N


@pytest.fixture
def no_reuse(monkeypatch):
    """Turn the pool off (the threshold out of reach), for a reference run."""
    def off():
        for mod in (recycle, rules, reverse):
            monkeypatch.setattr(mod, "LEND_BYTES", 1 << 62)
    return off


def _workload(lib, xs):
    x = lib.tensor(xs, dtype=lib.float64, requires_grad=True)
    y = (lib.sin(x) * x + lib.exp(-x * x)).sum()
    return x, y


def _backward_peak(xs) -> tuple:
    """(extra peak, extra memory left) of backward, in arrays of the input's size."""
    x, y = _workload(symgrad, xs)
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        y.backward()
        cur, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return (peak - base) / MB, (cur - base) / MB, x.grad.numpy().copy()


def test_large_elementwise_backward_needs_two_arrays_and_is_torchs(no_reuse):
    xs = np.linspace(-3, 3, N)
    peak, left, g = _backward_peak(xs)
    # The gradient being summed and one rule result at a time; before the pool the pass
    # held four (every rule result and sum fresh).
    assert peak <= 2.1
    assert left <= 1.1  # x.grad, the pass's own array (no copy), and nothing else
    xt, yt = _workload(torch, xs)
    yt.backward()
    np.testing.assert_allclose(g, xt.grad.numpy(), rtol=1e-13, atol=1e-13)
    no_reuse()
    peak_off, _, g_off = _backward_peak(xs)
    assert peak_off > peak  # (the bound above is the pool's doing)
    assert np.array_equal(g, g_off)  # same ufunc loops on the same operands


CASES = {
    "tanh-sigmoid": lambda L, x, w: (L.tanh(x) * L.sigmoid(w)).sum(),
    "div-pow": lambda L, x, w: (x / (w * w + 1) + x ** 3).sum(),
    "broadcast-bias": lambda L, x, w: (L.relu(x.reshape(256, -1) + w[:512]) ** 2).mean(),
    "where-clamp": lambda L, x, w: L.where(x > 0, x.clamp(-1, 0.5), w * 2).sum(),
    "matmul-softmax": lambda L, x, w: L.log_softmax(x.reshape(512, 256) @ w.reshape(256, 512),
                                                    dim=1).sum(),
    "reused-input": lambda L, x, w: (x * x * x + x.exp() * w).sum(),
    "float32": lambda L, x, w: ((x.float() * w.float()).cos() - x.float()).sum(),
}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_reuse_gives_the_same_gradients_bit_for_bit(case, no_reuse):
    rng = np.random.default_rng(5)
    xs, ws = rng.uniform(-2, 2, N), rng.uniform(-2, 2, N)

    def grads(L):
        x = L.tensor(xs, requires_grad=True, dtype=L.float64)
        w = L.tensor(ws, requires_grad=True, dtype=L.float64)
        CASES[case](L, x, w).backward()
        return [t.grad.numpy().copy() for t in (x, w)]

    on = grads(symgrad)
    for g in on:
        assert type(g) is np.ndarray and g.flags.c_contiguous
    for g, t in zip(on, grads(torch)):
        np.testing.assert_allclose(g, t, rtol=1e-5 if case == "float32" else 1e-10,
                                   atol=1e-6 if case == "float32" else 1e-10)
    no_reuse()
    for a, b in zip(on, grads(symgrad)):
        assert np.array_equal(a, b)


def test_nothing_the_user_holds_is_written_into():
    xs = np.linspace(-1, 1, N)
    x = symgrad.tensor(xs, requires_grad=True, dtype=symgrad.float64)
    h = x.exp()  # kept by the user: saved by exp, never pooled
    kept = []
    h.register_hook(lambda g: kept.append(g) or None)  # a hook keeps its gradient
    seed = symgrad.ones(N, dtype=symgrad.float64)
    seed_before = seed.numpy().copy()
    y = h * x + x  # add passes the seed on as it is, twice
    y.backward(seed)
    # the seed, the kept gradient and the kept tensor hold what they held
    assert np.array_equal(seed.numpy(), seed_before)
    assert np.array_equal(kept[0].numpy(), xs)
    assert np.array_equal(h.detach().numpy(), np.exp(xs))
    expected = np.exp(xs) * xs + np.exp(xs) + 1
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-14)
    before = x.grad.numpy().copy()
    held = x.grad
    (x * 3).sum().backward()  # .grad grows in place, keeping its identity
    assert x.grad is held
    np.testing.assert_allclose(x.grad.numpy(), before + 3, rtol=1e-14)


def test_retained_graph_runs_again_and_pool_is_empty_after():
    xs = np.linspace(-2, 2, N)
    x, y = _workload(symgrad, xs)
    y.backward(retain_graph=True)
    first = x.grad.numpy().copy()
    x.grad = None
    y.backward()
    assert np.array_equal(x.grad.numpy(), first)
    assert len(recycle.POOL) == 0 and recycle.POOL.depth == 0


def test_autograd_grad_results_are_not_reused():
    xs = np.linspace(-2, 2, N)
    x = symgrad.tensor(xs, requires_grad=True, dtype=symgrad.float64)
    h = x.sin()
    y = (h * h).exp().sum()
    gh, gx = symgrad.autograd.grad(y, (h, x))
    s = np.sin(xs)
    expected_h = np.exp(s * s) * 2 * s
    np.testing.assert_allclose(gh.numpy(), expected_h, rtol=1e-13)
    np.testing.assert_allclose(gx.numpy(), expected_h * np.cos(xs), rtol=1e-13)


def test_lent_ufuncs_write_into_pooled_arrays_only():
    a = np.arange(6.0)
    box = [np.zeros(6)]
    recycle.start()
    try:
        saved = recycle.LEND_BYTES
        recycle.LEND_BYTES = 0
        recycle.give(box)
        assert len(recycle.POOL) == 1
        pooled = recycle.POOL[0]
        lent = recycle.lend(a)
        assert type(lent) is recycle.Lent
        r = lent * 2.0
        assert r is pooled and type(r) is np.ndarray  # the result lives in the dead array
        assert np.array_equal(r, a * 2) and np.array_equal(a, np.arange(6.0))
        assert type(lent + 1) is np.ndarray  # pool empty: a fresh, plain array
        assert recycle.plain(lent[::2]).base is not None  # views stay views, plain
        held = np.ones(6)
        other = held  # noqa: F841 (a second reference: not dead)
        recycle.give([held])
        assert len(recycle.POOL) == 0
    finally:
        recycle.LEND_BYTES = saved
        recycle.stop()
    assert len(recycle.POOL) == 0
