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

# Writes of the batch into a tensor that is not batched, shapes that depend on each
# sample's values, and ``.data`` of a batched tensor (PyTorch's messages, each op's own).
_X = [[1., -2., 3.], [4., 5., -6.]]
WRITES = {
    "copy_": lambda L, v: L.zeros(3).copy_(v),
    "copy_0d": lambda L, v: L.zeros(3).copy_(v.sum()),
    "mul_": lambda L, v: L.ones(3).mul_(v),
    "sub_": lambda L, v: L.ones(3).sub_(v),
    "div_": lambda L, v: L.ones(3).div_(v),
    "add_": lambda L, v: L.zeros(3).add_(v),
    "add_alpha": lambda L, v: L.zeros(2, 3).add_(v, alpha=2),
    "fill_": lambda L, v: L.zeros(3).fill_(v.sum()),
    "clamp_": lambda L, v: L.zeros(3).clamp_(max=v),
    "lerp_": lambda L, v: L.zeros(3).lerp_(v, 0.5),
    "masked_fill_mask": lambda L, v: L.zeros(3).masked_fill_(v > 0, 1.),
    "masked_fill_value": lambda L, v: L.zeros(3).masked_fill_(v > 0, v.sum()),
    "setitem": lambda L, v: L.zeros(3).__setitem__(0, v.sum()),
    "setitem_slice": lambda L, v: L.zeros(3).__setitem__(slice(None), v),
    "setitem_advanced": lambda L, v: L.zeros(3).__setitem__(L.tensor([0, 2]), v[:2]),
    "setitem_mask": lambda L, v: v.clone().__setitem__(v > 0, 0.),
    "setitem_into_batched": lambda L, v: v.clone().__setitem__(0, 7.),
    "setitem_unbatched_into_batched": lambda L, v: v.clone().__setitem__(1, L.tensor(9.)),
    "in_place_batched": lambda L, v: v.clone().add_(L.ones(3)),
    "mask_index": lambda L, v: v[v > 0],
    "closed_mask_index": lambda L, v: v[L.tensor([True, False, True])],
    "where_one_argument": lambda L, v: L.where(v > 0),
    "data": lambda L, v: v.data,
    "closed_data": lambda L, v: L.ones(3).data + v,
    "nested_unbatched_at_inner": lambda L, v: _vmap(
        L, lambda w: v.clone().clamp_(max=w), v),
    "under_grad": lambda L, v: L.func.grad(
        lambda w: L.zeros(3).clamp_(max=w).sum())(v),
}


@pytest.mark.filterwarnings("ignore:There is a performance drop")  # (torch's own)
@pytest.mark.parametrize("name", sorted(WRITES))
def test_writes_and_dynamic_shapes_as_torch(name):
    def scenario(lib):
        def f(v):
            out = WRITES[name](lib, v)
            return v if out is None else out
        return _vmap(lib, f, lib.tensor(_X))
    assert _outcome(symgrad, scenario) == _outcome(torch, scenario)


def test_write_refusals_are_exercised():
    refused = [n for n in WRITES if _outcome(torch, lambda L: _vmap(
        L, lambda v: WRITES[n](L, v) or v, L.tensor(_X)))[0] == "RuntimeError"]
    assert len(refused) >= 18


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
