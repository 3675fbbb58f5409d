"""``vmap`` refuses, as PyTorch's BatchedTensor does, to turn a value that depends on the
batched inputs into a Python value (``.item()``, ``bool``/``if``, ``int``, ``float``,
``.tolist()``, ``.numpy()``): same error type and message as PyTorch 2.13.  Tensors that do
not depend on the batched inputs (closed over, or passed with ``in_dims=None``) can still
be read, and results read freely once ``vmap`` returns."""
import numpy as np
import pytest
import torch

import symgrad

LIBS = (torch, symgrad)


def _outcome(lib, scenario):
    """``("ok", values)`` or ``(error type name, message)``."""
    try:
        out = scenario(lib)
    except Exception as e:  # the oracle decides which errors are expected
        return type(e).__name__, str(e)
    return "ok", np.asarray(out.detach().numpy() if hasattr(out, "detach") else out).tolist()


def _vmap(lib, f, *args, **kw):
    return lib.func.vmap(f, **kw)(*args)


SCENARIOS = {
    "item": lambda L: _vmap(L, lambda x: x * x.sum().item(), L.ones(3, 2)),
    "detached_item": lambda L: _vmap(L, lambda x: x * x.detach()[0].item(), L.ones(3, 2)),
    "derived_item": lambda L: _vmap(L, lambda x: (x * 2).item(), L.ones(3)),
    "float": lambda L: _vmap(L, lambda x: x * float(x), L.ones(3)),
    "int": lambda L: _vmap(L, lambda x: x * int(x), L.ones(3)),
    "complex": lambda L: _vmap(L, lambda x: x * abs(complex(x)), L.ones(3)),
    "bool": lambda L: _vmap(L, lambda x: x * bool(x), L.ones(3)),
    "if": lambda L: _vmap(L, lambda x: x if x > 0 else -x, L.tensor([1., -2., 3.])),
    "while": lambda L: _vmap(L, lambda x: x * 0 if (x > 5).any() else x, L.ones(3, 2)),
    "tolist": lambda L: _vmap(L, lambda x: x * len(x.tolist()), L.ones(3, 2)),
    "numpy": lambda L: _vmap(L, lambda x: x * x.numpy().sum(), L.ones(3, 2)),
    "asarray": lambda L: _vmap(L, lambda x: x * np.asarray(x).sum(), L.ones(3, 2)),
    "format": lambda L: _vmap(L, lambda x: x * len(f"{x:.2f}"), L.ones(3)),
    "index": lambda L: _vmap(L, lambda i: L.ones(2) * [1, 2, 3][i], L.tensor([0, 2])),
    "float_index": lambda L: _vmap(L, lambda i: L.ones(2) * [1, 2, 3][i], L.ones(2)),
    "mixed_with_unbatched": lambda L: _vmap(
        L, lambda x, y: x * (x + y).sum().item(), L.ones(3, 2), L.tensor(2.),
        in_dims=(0, None)),
    "unbatched_argument": lambda L: _vmap(
        L, lambda x, y: x * y.item() if y > 0 else x, L.ones(3, 2), L.tensor(2.),
        in_dims=(0, None)),
    "closed_over": lambda L: _closed(L),
    "nested_outer_sample": lambda L: _vmap(
        L, lambda x: _vmap(L, lambda y: y * x.item(), L.ones(2)), L.ones(3)),
    "nested_inner_sample": lambda L: _vmap(
        L, lambda x: _vmap(L, lambda y: y * bool(y), L.ones(2)) * x, L.ones(3)),
    "grad_inside": lambda L: _vmap(
        L, L.func.grad(lambda x: (x * x).sum() if x.sum() > 0 else x.sum()), L.ones(3, 2)),
    "item_under_grad": lambda L: _vmap(
        L, L.func.grad(lambda x: x.sum() * x.sum().item()), L.ones(3, 1)),
    "item_under_jvp": lambda L: _vmap(
        L, lambda x: L.func.jvp(lambda y: y * y.item(), (x,), (x,))[1], L.ones(3, 1)),
    "grad_of_closed_over": lambda L: _vmap(
        L, lambda x: L.func.grad(lambda y: (y * y).sum() if y.sum() > 0 else y.sum())(
            L.ones(2)) * x, L.ones(3, 1)),
    "result_after_vmap": lambda L: [_vmap(L, lambda x: x * 2, L.ones(3)).sum().item()],
}


def _closed(lib):
    c = lib.tensor([2., -1.])
    return _vmap(lib, lambda x: x * c.sum().item() if c[0] > 0 else x, lib.ones(3, 2))


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_same_outcome_as_torch(name):
    want = _outcome(torch, SCENARIOS[name])
    got = _outcome(symgrad, SCENARIOS[name])
    assert got == want


def test_refusals_are_exercised():
    """The oracle does refuse most scenarios (so the comparison above tests refusals)."""
    refused = [n for n, s in SCENARIOS.items() if _outcome(torch, s)[0] == "RuntimeError"]
    assert len(refused) >= 14


def test_a_sample_mark_does_not_outlive_vmap():
    """A tensor computed inside vmap and kept reads freely afterwards."""
    kept = []
    symgrad.func.vmap(lambda x: kept.append(x * 2) or x)(symgrad.ones(2))
    assert kept[0].item() == 2.0 and bool(kept[1])
