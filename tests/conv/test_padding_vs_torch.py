"""``F.pad``'s reflect, replicate and circular modes and the convolution modules'
``padding_mode`` against PyTorch 2.13: values, gradients to third order, node names,
saved values, the graphs of the first and second order (circular: PyTorch's CopySlices
double backward, CopyBackwards, AsStridedBackward0, CloneBackward0), errors."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import symgrad

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_second_order_vs_torch import _graph  # noqa: E402

CASES = [
    ((1, 2, 5), (1, 2)), ((2, 5), (2, 0)), ((1, 2, 5), (-1, 3)),
    ((1, 2, 4, 5), (1, 2, 2, 1)), ((2, 4, 3), (0, 2, 1, -1)),
    ((1, 1, 3, 4, 3), (1, 1, 0, 2, 2, 1)), ((1, 3, 4, 2), (1, 0, 0, 0, 2, 1)),
]


def _run(lib, a, pad, mode):
    x = lib.tensor(a, requires_grad=True)
    y = lib.nn.functional.pad(x, pad, mode=mode)
    g, = lib.autograd.grad((y ** 3).sum(), x, create_graph=True)
    h, = lib.autograd.grad((g ** 2).sum(), x, create_graph=True)
    first, second = _graph([y.grad_fn]), _graph([g.grad_fn])
    saved = getattr(y.grad_fn, "_saved_padding", None)
    t, = lib.autograd.grad((h ** 2).sum(), x)
    return [v.detach().numpy() for v in (y, g, h, t)], first, second, saved


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("shape,pad", CASES, ids=[f"{s}{p}" for s, p in CASES])
def test_pad_modes(mode, shape, pad):
    a = np.random.default_rng(len(shape) + sum(pad)).standard_normal(shape)
    if len(pad) // 2 + 2 < len(shape) or len(pad) // 2 + 1 > len(shape):
        pytest.skip("not a combination F.pad takes")
    want = _run(torch, a, pad, mode)
    got = _run(symgrad, a, pad, mode)
    for w, g in zip(want[0], got[0]):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
    assert got[1] == want[1]  # names and edges of the first order (circular: CopySlices)
    assert got[3] == want[3]
    assert got[2] == want[2]  # and of the second order


def test_pad_of_integers_and_of_an_empty_batch():
    for mode in ("reflect", "replicate", "circular"):
        for a in (np.arange(10).reshape(1, 2, 5), np.zeros((0, 2, 5), np.float32)):
            want = torch.nn.functional.pad(torch.tensor(a), (2, 1), mode=mode)
            got = symgrad.nn.functional.pad(symgrad.tensor(a), (2, 1), mode=mode)
            assert str(got.dtype) == str(want.dtype) and tuple(got.shape) == tuple(want.shape)
            np.testing.assert_array_equal(got.numpy(), want.numpy())


ERRORS = [
    ((1, 2, 5), (1, 1), "foo", None), ((1, 2, 5), (1, 1), "reflect", 2.0),
    ((1, 2, 5), (1, 1, 1), "reflect", None), ((1, 2, 5), (1,) * 8, "replicate", None),
    ((1, 2, 4, 5), (1, 1), "reflect", None), ((5,), (1, 1), "circular", None),
    ((1, 2, 5), [1.5, 1], "reflect", None),
    ((1, 2, 5), (5, 0), "reflect", None), ((1, 2, 4, 5), (5, 0, 0, 0), "reflect", None),
    ((1, 2, 4, 5), (0, 0, 0, 4), "reflect", None),
    ((1, 1, 3, 4, 5), (0, 0, 0, 0, 3, 0), "reflect", None),
    ((1, 2, 5), (-2, -3), "reflect", None), ((1, 2, 5), (-6, 1), "replicate", None),
    ((1, 2, 4, 5), (0, 0, -6, 1), "replicate", None),
    ((1, 2, 5), (6, 0), "circular", None), ((1, 2, 5), (-3, -3), "circular", None),
    ((1, 0, 5), (1, 1), "reflect", None), ((1, 0, 4, 5), (1, 1, 1, 1), "replicate", None),
]


@pytest.mark.parametrize("shape,pad,mode,value", ERRORS,
                         ids=[f"{m}{s}{p}" for s, p, m, _ in ERRORS])
def test_pad_errors(shape, pad, mode, value):
    def message(lib):
        with pytest.raises(Exception) as info:
            lib.nn.functional.pad(lib.zeros(shape), pad, mode=mode, value=value)
        return type(info.value), str(info.value)
    assert message(symgrad) == message(torch)


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("nd,kw", [(1, dict(padding=2)), (2, dict(padding=(1, 2), stride=2)),
                                   (2, dict(padding="same", dilation=2)),
                                   (1, dict(padding="same", kernel_size=4))])
def test_conv_modules_with_a_padding_mode(mode, nd, kw):
    kw = dict(kw)
    k = kw.pop("kernel_size", 3)
    shape = (2, 2) + (6,) * nd

    def run(lib):
        lib.manual_seed(0)
        conv = (lib.nn.Conv1d if nd == 1 else lib.nn.Conv2d)(2, 3, k, padding_mode=mode,
                                                          dtype=lib.float64, **kw)
        with lib.no_grad():
            for p, v in zip(conv.parameters(), params):
                p.copy_(lib.tensor(v))
        x = lib.tensor(a, requires_grad=True)
        y = conv(x)
        (y ** 2).sum().backward()
        return (repr(conv), list(conv._reversed_padding_repeated_twice), y.detach().numpy(),
                x.grad.numpy(), conv.weight.grad.numpy(), _graph([y.grad_fn]))

    rng = np.random.default_rng(nd)
    a = rng.standard_normal(shape)
    params = [rng.standard_normal((3, 2) + (k,) * nd), rng.standard_normal(3)]
    want, got = run(torch), run(symgrad)
    assert got[:2] == want[:2]
    for w, g in zip(want[2:5], got[2:5]):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-10)
    assert got[5] == want[5]


def test_transposed_convolutions_refuse_padding_modes():
    for lib in (torch, symgrad):
        with pytest.raises(ValueError, match='Only "zeros" padding mode is supported for '
                                             'ConvTranspose2d'):
            lib.nn.ConvTranspose2d(2, 2, 3, padding_mode="reflect")
