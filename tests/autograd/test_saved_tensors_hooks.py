"""Saved-tensor hooks against PyTorch 2.13: what is packed, in which order, when it is
unpacked, what a pack hook may return (any object), save_on_cpu, identity of saved
tensors (``_saved_self is x``, ``_saved_result is not y``), nesting, threads, errors."""
from __future__ import annotations

import os
import tempfile
import threading
import uuid

import pytest

import symgrad
from conftest import check_same, same_outcome

torch = pytest.importorskip("torch")


def _log(lib):
    """The events of a pack/unpack pair as text (values and grad_fn names)."""
    events = []

    def pack(x):
        events.append(("pack", repr(x)))
        return x

    def unpack(x):
        events.append(("unpack", repr(x)))
        return x
    return events, pack, unpack


@pytest.mark.parametrize("build", [
    lambda L, a, b: a * b, lambda L, a, b: L.exp(a), lambda L, a, b: a.pow(2) * b,
    lambda L, a, b: (a / b).sum(), lambda L, a, b: a @ b, lambda L, a, b: L.tanh(a * 2),
    lambda L, a, b: L.dot(a, b).sigmoid(),
])
def test_pack_and_unpack_order(build):
    def run(L):
        a = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = L.ones(3, requires_grad=True) * 2
        events, pack, unpack = _log(L)
        with L.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = build(L, a, b)
        events.append(("forward done", ""))
        y.sum().backward()
        return [events, a.grad]
    check_same(run)


def test_identity_of_saved_tensors():
    def run(L):
        a = L.randn(5, requires_grad=True)
        b = L.ones(5, requires_grad=True)
        y = a * b
        e = L.exp(a)
        return [y.grad_fn._saved_self is a, y.grad_fn._saved_other is b,
                e.grad_fn._saved_result.equal(e), e.grad_fn._saved_result is e,
                e.grad_fn._saved_result.grad_fn is e.grad_fn]
    assert run(symgrad) == run(torch)


def test_pack_may_return_any_object():
    def run(L):
        out = []
        storage = []
        for pack, unpack in [(lambda x: x * 4, lambda x: x / 4),
                             (lambda x: storage.append(x) or len(storage) - 1,
                              lambda i: storage[i]),
                             (lambda x: (x - 1, lambda t: t + 1), lambda p: p[1](p[0])),
                             (lambda x: (x.device, x.cpu()), lambda p: p[1].to(p[0]))]:
            x = L.tensor([0.5, -1.5, 2.0], requires_grad=True)
            with L.autograd.graph.saved_tensors_hooks(pack, unpack):
                y = L.pow(x, 2) * x
            y.sum().backward()
            out.append(x.grad)
        return out
    check_same(run)


def test_save_on_cpu_and_modules():
    def run(L):
        class Model(L.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = L.nn.Parameter(L.tensor([1.0, 2.0]))

            def forward(self, x):
                with L.autograd.graph.save_on_cpu(pin_memory=True):
                    return self.w * x
        m = L.nn.DataParallel(Model())
        m(L.tensor([3.0, 4.0])).sum().backward()
        return [m.module.w.grad, repr(m)]
    check_same(run)


def test_files_on_disk_and_double_access(tmp_path):
    def run(L):
        d = tempfile.mkdtemp(dir=tmp_path)

        def pack(t):
            name = os.path.join(d, str(uuid.uuid4()))
            L.save(t, name)
            return name

        def unpack(name):
            t = L.load(name)
            os.remove(name)
            return t
        x = L.ones(5, requires_grad=True)
        with L.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = x.pow(2)
        first = y.grad_fn._saved_self
        try:
            y.grad_fn._saved_self
            second = "succeeded"
        except Exception:  # noqa: BLE001 - the file is gone, as in the tutorial
            second = "failed"
        return [first, second]
    check_same(run)


def test_packed_objects_are_freed_by_backward(tmp_path):
    def run(L):
        d = tempfile.mkdtemp(dir=tmp_path)

        class SelfDeleting:
            def __init__(self):
                self.name = os.path.join(d, str(uuid.uuid4()))

            def __del__(self):
                os.remove(self.name)

        def pack(t):
            f = SelfDeleting()
            L.save(t, f.name)
            return f
        x = L.ones(5, requires_grad=True)
        with L.autograd.graph.saved_tensors_hooks(pack, lambda f: L.load(f.name)):
            y = x.pow(2) * x
        during = len(os.listdir(d))
        y.sum().backward()
        return [x.grad, during, len(os.listdir(d))]
    check_same(run)


def test_errors_and_nesting():
    def bad_unpack(L):
        x = L.ones(2, requires_grad=True)
        with L.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: 3):
            y = x * x
        return y.sum().backward()
    same_outcome(bad_unpack)

    def disabled(L):
        with L.autograd.graph.disable_saved_tensors_hooks("no hooks in here"):
            with L.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
    same_outcome(disabled)

    def nested(L):
        seen = []
        x = L.ones(2, requires_grad=True)
        with L.autograd.graph.saved_tensors_hooks(lambda t: seen.append("outer") or t,
                                                  lambda t: t):
            with L.autograd.graph.saved_tensors_hooks(lambda t: seen.append("inner") or t,
                                                      lambda t: t):
                y = L.exp(x)
            z = L.exp(y)
        z.sum().backward()
        return [seen, x.grad]
    check_same(nested)


def test_hooks_belong_to_their_thread():
    def run(L):
        seen = []
        x = L.ones(2, requires_grad=True)
        entered, done = threading.Event(), threading.Event()

        def other():
            entered.wait(5)
            L.exp(x)  # not packed: the hooks are the main thread's
            done.set()
        t = threading.Thread(target=other)
        t.start()
        with L.autograd.graph.saved_tensors_hooks(lambda v: seen.append(1) or v, lambda v: v):
            entered.set()
            done.wait(5)
            L.exp(x)
        t.join()
        return len(seen)
    assert run(symgrad) == run(torch) == 1
