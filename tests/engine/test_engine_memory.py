"""The reverse-mode engine at scale: long chains run without recursion (also when they are
torn down), saved values are released as soon as backward is done with them, and a graph
is collected once nothing refers to it.  The gradients of the long chains are PyTorch's.
"""
import gc
import tracemalloc
import weakref

import numpy as np
import pytest

import symgrad

torch = pytest.importorskip("torch")


def _long_chain(lib, n):
    x = lib.tensor(0.5, dtype=lib.float64, requires_grad=True)
    y = x
    for i in range(n):
        y = y * 1.0000001 if i % 2 else y + 0.001
    return x, y


def test_hundred_thousand_op_chain_backpropagates_iteratively():
    n = 100_000
    x, y = _long_chain(symgrad, n)
    y.backward()
    assert x.grad.item() == pytest.approx(1.0000001 ** (n // 2), rel=1e-12)
    tx, ty = _long_chain(torch, 1000)
    sx, sy = _long_chain(symgrad, 1000)
    ty.backward()
    sy.backward()
    assert sx.grad.item() == pytest.approx(tx.grad.item(), rel=1e-12)
    del y  # tearing down a 100,000-deep graph must not recurse either
    gc.collect()


def test_long_chain_with_saved_results_is_freed_without_recursion():
    x = symgrad.tensor(0.1, dtype=symgrad.float64, requires_grad=True)
    y = x
    for _ in range(30_000):
        y = y.tanh()  # saves its result: a reference cycle until backward frees it
    (g,) = symgrad.autograd.grad(y, x, retain_graph=True)
    t = torch.tensor(0.1, dtype=torch.float64, requires_grad=True)
    ty = t
    for _ in range(30_000):
        ty = ty.tanh()
    (tg,) = torch.autograd.grad(ty, t)
    assert g.item() == pytest.approx(tg.item(), rel=1e-9)
    del y
    gc.collect()


def test_saved_intermediate_dies_with_backward_and_survives_retain_graph():
    for retain in (False, True):
        x = symgrad.tensor([1.0, 2.0], requires_grad=True)
        h = x.exp()  # saved by ExpBackward (as its result) and by MulBackward (as self)
        ref = weakref.ref(h)
        y = (h * 2).sum()
        del h
        assert ref() is not None  # only the graph holds it now
        y.backward(retain_graph=retain)
        # No gc.collect(): freeing the saved values must drop the last reference at once.
        assert (ref() is not None) is retain
        if retain:
            y.backward()
            assert ref() is None
        np.testing.assert_allclose(x.grad.numpy(), (2 if retain else 1) * 2 * np.exp([1, 2]),
                                   rtol=1e-6)


def test_saved_values_released_by_autograd_grad_too():
    x = symgrad.tensor([1.0, 2.0], requires_grad=True)
    h = x.sin()
    ref = weakref.ref(h)
    y = (h * h).sum()
    del h
    symgrad.autograd.grad(y, x)
    assert ref() is None


def test_memory_of_intermediates_is_returned_after_backward():
    n = 1_000_000  # 8 MB per float64 tensor
    mb = 8 * n / 2 ** 20

    def run(retain):
        x = symgrad.ones(n, dtype=symgrad.float64, requires_grad=True)
        gc.collect()
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            y = ((x.exp() * 2).sin()).sum()  # two 8 MB intermediates are saved
            forward = tracemalloc.get_traced_memory()[0] - base
            y.backward(retain_graph=retain)
            after = tracemalloc.get_traced_memory()[0] - base
        finally:
            tracemalloc.stop()
        np.testing.assert_allclose(x.grad.numpy()[:3], np.cos(2 * np.e) * 2 * np.e)
        return forward / 2 ** 20, after / 2 ** 20

    forward, after = run(retain=False)
    assert forward >= 2 * mb * 0.95  # exp's result and mul's result are held by the graph
    assert after <= 1.5 * mb  # only x.grad remains
    forward, after = run(retain=True)
    assert after >= 2.9 * mb  # the saved intermediates and x.grad


def test_graph_is_collected_once_unreferenced():
    x = symgrad.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp().sigmoid().sum()
    node = weakref.ref(y.grad_fn)
    del y
    gc.collect()
    assert node() is None
