"""Tensors that share storage (``.data``, ``detach()``, ``numpy()``) see each other's
in-place changes, as in PyTorch: also for 0-d results, which symgrad keeps as numpy
scalars until something shares them."""
import numpy as np
import pytest

import symgrad

torch = pytest.importorskip("torch")

SHARERS = {
    "data": lambda t: t.data,
    "detach": lambda t: t.detach(),
}
CHANGES = {
    "add_": lambda t: t.add_(1),
    "mul_": lambda t: t.mul_(10),
    "zero_": lambda t: t.zero_(),
    "fill_": lambda t: t.fill_(7),
}


@pytest.mark.parametrize("share", sorted(SHARERS))
@pytest.mark.parametrize("change", sorted(CHANGES))
@pytest.mark.parametrize("shape", [(), (3,)])
def test_in_place_change_through_a_sharer_shows_in_both(share, change, shape):
    out = []
    for L in (symgrad, torch):
        x = L.tensor(np.full(shape, 2.0).tolist(), requires_grad=True)
        y = x * 3  # a result: 0-d ones are numpy scalars in symgrad
        s = SHARERS[share](y)
        CHANGES[change](s)
        out.append((repr(y), repr(s), y._version, s._version))
    assert out[0] == out[1]


def test_numpy_shares_memory_with_a_0d_result():
    for L in (symgrad, torch):
        y = (L.tensor(2.0, requires_grad=True) * 3).detach()
        a = y.numpy()
        a += 1
        assert y.item() == 7.0
