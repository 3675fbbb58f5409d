"""Threads, as PyTorch has them: grad mode and inference mode belong to the thread that
sets them (the default dtype and anomaly mode are process-wide in PyTorch 2.13, and so
here), and independent graphs are built and differentiated concurrently with the results
of a single thread."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import symgrad

torch_ = pytest.importorskip("torch")


def _graph(lib, seed: int):
    """One small independent graph; its gradients."""
    rng = np.random.default_rng(seed)
    w = lib.tensor(rng.normal(size=(3, 2)), requires_grad=True)
    x = lib.tensor(rng.normal(size=(4, 3)))
    b = lib.tensor(rng.normal(size=2), requires_grad=True)
    loss = ((x @ w + b).tanh() ** 2).sum() + (w * w).mean()
    loss.backward()
    return np.concatenate([w.grad.numpy().ravel(), b.grad.numpy().ravel()])


def test_many_threads_give_single_thread_results():
    n_threads, per_thread = 8, 1000
    want = {s: _graph(symgrad, s) for s in range(per_thread)}
    got = [dict() for _ in range(n_threads)]
    errors = []
    stop = threading.Event()

    def work(k):
        try:
            for s in range(per_thread):
                got[k][s] = _graph(symgrad, s)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(repr(e))

    def toggler():  # no_grad on and off in another thread, all the while
        while not stop.is_set():
            with symgrad.no_grad():
                (symgrad.ones(2, requires_grad=True) * 2).sum()

    threads = [threading.Thread(target=work, args=(k,)) for k in range(n_threads)]
    noise = threading.Thread(target=toggler)
    noise.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    noise.join()
    assert errors == []
    for k in range(n_threads):
        for s in range(per_thread):
            np.testing.assert_array_equal(got[k][s], want[s])


def _modes_seen_by_a_thread(lib, enter):
    seen = {}

    def look():
        x = lib.ones(2, requires_grad=True)
        seen.update(grad=lib.is_grad_enabled(), inference=lib.is_inference_mode_enabled(),
                    records=(x * 2).requires_grad, dtype=str(lib.get_default_dtype()),
                    anomaly=lib.is_anomaly_enabled())
    with enter(lib):
        t = threading.Thread(target=look)
        t.start()
        t.join()
        here = {"grad": lib.is_grad_enabled(), "inference": lib.is_inference_mode_enabled()}
    return seen, here


class _Modes:
    def __init__(self, lib, which):
        self.lib, self.which = lib, which

    def __enter__(self):
        L = self.lib
        self.ctx = {"no_grad": L.no_grad, "inference_mode": L.inference_mode,
                    "set_grad_enabled(False)": lambda: L.set_grad_enabled(False)}.get(
            self.which)
        if self.ctx is not None:
            self.ctx = self.ctx()
            self.ctx.__enter__()
        elif self.which == "default dtype":
            L.set_default_dtype(L.float64)
        elif self.which == "anomaly":
            L.set_anomaly_enabled(True)

    def __exit__(self, *exc):
        if self.ctx is not None:
            self.ctx.__exit__(*exc)
        self.lib.set_default_dtype(self.lib.float32)
        self.lib.set_anomaly_enabled(False)


@pytest.mark.parametrize("which", ["no_grad", "inference_mode", "set_grad_enabled(False)",
                                   "default dtype", "anomaly"])
def test_which_modes_are_per_thread_as_in_torch(which):
    def run(lib):
        return _modes_seen_by_a_thread(lib, lambda L: _Modes(L, which))
    assert run(symgrad) == run(torch_)


def test_backward_in_one_thread_leaves_others_recording():
    """A backward pass turns grad mode off for its own thread only."""
    started, release = threading.Event(), threading.Event()
    seen = []

    def hook(g):
        started.set()
        release.wait(5)
        return g

    x = symgrad.tensor(1.0, requires_grad=True)
    y = x * 3
    y.register_hook(hook)
    t = threading.Thread(target=y.backward)
    t.start()
    assert started.wait(5)
    z = symgrad.tensor(2.0, requires_grad=True)
    seen.append((z * z).requires_grad)
    (z * z).backward()
    release.set()
    t.join()
    assert seen == [True] and z.grad.item() == 4.0 and x.grad.item() == 3.0
