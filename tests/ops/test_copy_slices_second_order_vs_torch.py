"""``t[index] = src`` (and any in-place op on a view: ``CopySlices``) under
``create_graph`` as PyTorch 2.13 records its backward: the gradient copied into a new
tensor (``CopyBackwards``), the written part viewed (``AsStridedBackward0``) and cloned
(``CloneBackward0``, src's gradient), zeros copied into that part (``CopySlices``, the
base's): the graphs of the gradients node for node and the values to second order."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import symgrad

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "conv"))
from test_second_order_vs_torch import _graph  # noqa: E402


def _setitem(index):
    def build(L, x, z):
        y = x * 1
        y[index] = z
        return y * x
    return build


def _mul_view(L, x, w):
    y = x * 2
    y[1:3].mul_(w)
    return y


def _broadcast(L, x, z):
    y = x * 1
    y[:, 1:] = z
    return y * x


def _src_only(L, z):
    y = L.zeros(3, 2, dtype=L.float64)
    y[1] = z
    return y


CASES = {
    "column": (_setitem((slice(None), 0)), [(3, 2, 4), (3, 4)]),
    "row": (_setitem((1,)), [(3, 2), (2,)]),
    "strided": (_setitem((slice(0, 3, 2), slice(1, None))), [(4, 3), (2, 2)]),
    "ellipsis": (_setitem((Ellipsis, -1)), [(2, 3), (2,)]),
    "element": (_setitem((0, 1)), [(2, 3), ()]),
    "new axis": (_setitem((slice(None), None, 1)), [(3, 2), (3, 1)]),
    "mul_ on a view": (_mul_view, [(4, 2), (2, 2)]),
    "broadcast value": (_broadcast, [(3, 3), (2,)]),
    "into a constant": (_src_only, [(2,)]),
}


def _run(L, name):
    build, shapes = CASES[name]
    rng = np.random.default_rng(len(name))
    xs = [L.tensor(rng.standard_normal(s), requires_grad=True) for s in shapes]
    y = build(L, *xs)
    gs = L.autograd.grad((y * y * 1.5).sum(), xs, create_graph=True)
    hs = L.autograd.grad(sum((g * g).sum() for g in gs), xs)
    return _graph([g.grad_fn for g in gs]), [t.detach().numpy() for t in gs + hs]


@pytest.mark.parametrize("name", list(CASES))
def test_copy_slices_second_order(name):
    want, got = _run(torch, name), _run(symgrad, name)
    assert got[0] == want[0]
    for p, q in zip(want[1], got[1]):
        np.testing.assert_allclose(q, p, rtol=1e-12, atol=1e-12)
