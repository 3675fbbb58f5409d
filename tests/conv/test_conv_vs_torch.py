"""Convolution, pooling and normalisation against PyTorch 2.13: values, node names and
next functions, saved values, first and second derivatives (``create_graph=True``, with the
gradients' own node names), errors and warnings; the modules' ``repr``, parameters, buffers,
initialisation statistics and running statistics."""
from __future__ import annotations

import numpy as np
import pytest

import symgrad
from conftest import check_same, same_outcome

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(20)
X4 = RNG.normal(size=(2, 4, 7, 6))
W4 = RNG.normal(size=(6, 2, 3, 2))
B4 = RNG.normal(size=6)
XN = RNG.normal(size=(4, 3, 5, 2))
CW, CB = RNG.normal(size=3), RNG.normal(size=3)
RM, RV = RNG.normal(size=3), RNG.uniform(0.5, 2.0, size=3)


def _saved(fn) -> dict:
    out = {}
    for a in dir(fn):
        if a.startswith("_saved_"):
            v = getattr(fn, a)
            out[a] = ("shape", tuple(v.shape)) if hasattr(v, "shape") else v
    return out


def _describe(L, y, leaves, grad_nodes: bool = True) -> list:
    """What a user sees of ``y`` and its derivatives to second order (``grad_nodes``: the
    gradients' node names too)."""
    fn = y.grad_fn
    names = [fn.name()] + [n.name() if n else None for n, _ in fn.next_functions]
    saved = _saved(fn)
    v = L.tensor(np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape)), dtype=y.dtype)
    gs = L.autograd.grad(y, leaves, v, create_graph=True)
    grad_names = [g.grad_fn.name() if g.grad_fn is not None else None for g in gs] \
        if grad_nodes else []
    total = sum(((g * g * g).sum() for g in gs if g.requires_grad), L.zeros((), dtype=y.dtype))
    second = L.autograd.grad(total, leaves, allow_unused=True) if total.requires_grad else ()
    return [y, names, saved, grad_names, list(gs), [s for s in second if s is not None]]


def _leaves(L, *arrays):
    return [L.tensor(a, dtype=L.float64, requires_grad=True) for a in arrays]


CONVS = {
    "conv2d groups": lambda F, x, w, b: F.conv2d(x, w, b, groups=2),
    "conv2d stride padding dilation": lambda F, x, w, b: F.conv2d(
        x, w, b, stride=(2, 1), padding=(1, 2), dilation=(2, 1), groups=2),
    "conv2d same (odd padding)": lambda F, x, w, b: F.conv2d(x, w, b, padding="same",
                                                             groups=2),
    "conv2d valid, no bias": lambda F, x, w, b: F.conv2d(x, w, padding="valid", groups=2),
    "conv2d unbatched": lambda F, x, w, b: F.conv2d(x[0], w, b, 1, 1, 1, 2),
    "conv1d": lambda F, x, w, b: F.conv1d(x[:, :, 0], w[:, :, 0], b, stride=2, padding=1,
                                          groups=2),
    "conv1d same dilation": lambda F, x, w, b: F.conv1d(x[:, :, 0], w[:, :, :, 0], b,
                                                        padding="same", dilation=2, groups=2),
    "conv_transpose2d": lambda F, x, w, b: F.conv_transpose2d(
        x[:, :, :5, :5], w[:4], b[:4], stride=2, padding=1, output_padding=1, groups=2,
        dilation=(1, 2)),
    "conv_transpose2d output padding < dilation": lambda F, x, w, b: F.conv_transpose2d(
        x[:, :2, :4, :3], w[:2, :2], b[:2], output_padding=1, dilation=2),
    "conv_transpose1d": lambda F, x, w, b: F.conv_transpose1d(
        x[:, :2, 0, :5], w[:2, :, :, 0], b[:2], stride=3, padding=2, output_padding=2),
    "conv_transpose1d unbatched": lambda F, x, w, b: F.conv_transpose1d(
        x[0, :2, 0], w[:2, :, :, 0], b[:2]),
}


@pytest.mark.parametrize("name", list(CONVS))
def test_convolution(name):
    def run(L):
        x, w, b = _leaves(L, X4, W4, B4)
        y = CONVS[name](L.nn.functional, x, w, b)
        used = [x, w] + ([b] if "no bias" not in name else [])
        return _describe(L, y, used)
    check_same(run, rtol=1e-9, atol=1e-10)


POOLS = {
    "max_pool2d": lambda F, x: F.max_pool2d(x, 2),
    "max_pool2d ceil padding": lambda F, x: F.max_pool2d(x, 3, stride=2, padding=1,
                                                         ceil_mode=True),
    "max_pool2d dilation": lambda F, x: F.max_pool2d(x, (2, 3), (1, 2), dilation=(2, 1)),
    "max_pool2d unbatched": lambda F, x: F.max_pool2d(x[0], 2),
    "avg_pool2d": lambda F, x: F.avg_pool2d(x, 2),
    "avg_pool2d ceil padding": lambda F, x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True),
    "avg_pool2d no pad count": lambda F, x: F.avg_pool2d(x, 3, 2, 1, True, False),
    "avg_pool2d divisor": lambda F, x: F.avg_pool2d(x, (3, 2), 1, 1, divisor_override=4),
    "adaptive": lambda F, x: F.adaptive_avg_pool2d(x, (3, 4)),
    "adaptive None": lambda F, x: F.adaptive_avg_pool2d(x, (None, 4)),
    "adaptive one bin": lambda F, x: F.adaptive_avg_pool2d(x, 1),
    "adaptive unbatched": lambda F, x: F.adaptive_avg_pool2d(x[0], 5),
    "max_pool1d": lambda F, x: F.max_pool1d(x[:, :, 0], 3, 2, 1, 2, True),
    "max_pool1d unbatched": lambda F, x: F.max_pool1d(x[0, :, 0], 2),
    "avg_pool1d": lambda F, x: F.avg_pool1d(x[:, :, 0], 3, 2, 1, True, False),
    "adaptive_avg_pool1d": lambda F, x: F.adaptive_avg_pool1d(x[:, :, 0], 4),
    "adaptive_avg_pool1d one bin": lambda F, x: F.adaptive_avg_pool1d(x[:, :, 0], (1,)),
}


@pytest.mark.parametrize("name", list(POOLS))
def test_pooling(name):
    def run(L):
        x, = _leaves(L, X4)
        return _describe(L, POOLS[name](L.nn.functional, x), [x])
    check_same(run, rtol=1e-9, atol=1e-10)


def test_max_pool_indices():
    def run(L):
        x = L.tensor(X4, dtype=L.float32)
        x[0, 0, 0, :2] = float("nan")
        out, idx = L.nn.functional.max_pool2d(x, 3, 2, 1, ceil_mode=True, return_indices=True)
        pool = L.nn.MaxPool2d(2, return_indices=True)
        return [out, idx, pool(x), L.nn.functional.max_pool2d_with_indices(x[0], 2),
                L.nn.functional.max_pool1d(x[0], 3, 1, 1, return_indices=True)]
    check_same(run)


NORMS = {
    "batch_norm training": lambda F, x, w, b, rm, rv: F.batch_norm(x, rm, rv, w, b, True),
    "batch_norm eval": lambda F, x, w, b, rm, rv: F.batch_norm(x, rm, rv, w, b),
    "batch_norm no stats": lambda F, x, w, b, rm, rv: F.batch_norm(x, None, None, w, b, True,
                                                                   eps=1e-3),
    "batch_norm 2d input": lambda F, x, w, b, rm, rv: F.batch_norm(x[:, :, 0, 0], rm, rv, w, b,
                                                                   True, 0.3),
    "group_norm": lambda F, x, w, b, rm, rv: F.group_norm(x, 3, w, b),
    "group_norm one group": lambda F, x, w, b, rm, rv: F.group_norm(x, 1, w, b, eps=1e-2),
}


@pytest.mark.parametrize("name", list(NORMS))
def test_normalization(name):
    def run(L):
        x, w, b = _leaves(L, XN, CW, CB)
        rm, rv = L.tensor(RM, dtype=L.float64), L.tensor(RV, dtype=L.float64)
        y = NORMS[name](L.nn.functional, x, w, b, rm, rv)
        # (bias: its gradient is a sum; PyTorch's fused backward marks it as requiring grad
        # under create_graph, symgrad's does not, as for layer_norm: its value.  The
        # gradients under create_graph are recorded as their formulas' ops, not as
        # PyTorch's fused NativeBatchNormBackwardBackward0: the node names differ there)
        db = L.autograd.grad(y, b, L.ones_like(y), retain_graph=True)[0]
        return _describe(L, y, [x, w], grad_nodes=False) + [db, rm, rv, rm._version]
    check_same(run, rtol=1e-8, atol=1e-9)


@pytest.mark.parametrize("bad", [
    lambda L, F, x, w: F.conv2d(x, w, padding="same", stride=2),
    lambda L, F, x, w: F.conv2d(x, w, padding="foo"),
    lambda L, F, x, w: F.conv2d(x, w),
    lambda L, F, x, w: F.conv2d(x, w, groups=3),
    lambda L, F, x, w: F.conv2d(x, L.ones(4, 4, 8, 8)),
    lambda L, F, x, w: F.conv2d(x[0, 0], w),
    lambda L, F, x, w: F.conv2d(x, w, groups=2, padding=-1),
    lambda L, F, x, w: F.conv2d(x, w, groups=2, stride=0),
    lambda L, F, x, w: F.conv2d(x, w, L.ones(3), groups=2),
    lambda L, F, x, w: F.conv2d(x.double(), w, groups=2),
    lambda L, F, x, w: F.conv2d(x, w, L.ones(4, dtype=L.float64), groups=2),
    lambda L, F, x, w: F.conv2d(x, L.ones(3, 1)),
    lambda L, F, x, w: F.max_pool2d(x, 4, padding=3),
    lambda L, F, x, w: F.max_pool2d(x, 8),
    lambda L, F, x, w: F.max_pool2d(x, 2, stride=0),
    lambda L, F, x, w: F.max_pool2d(x[0, 0], 2),
    lambda L, F, x, w: F.avg_pool2d(x, 2, padding=2),
    lambda L, F, x, w: F.avg_pool2d(x, 2, divisor_override=0),
    lambda L, F, x, w: F.adaptive_avg_pool2d(x, (2,)),
    lambda L, F, x, w: F.adaptive_avg_pool2d(x[0, 0], 2),
    lambda L, F, x, w: F.conv_transpose2d(x, w, output_padding=2),
    lambda L, F, x, w: F.conv_transpose2d(x, w, stride=2, output_padding=2),
    lambda L, F, x, w: F.conv_transpose2d(x[0, 0], w),
    lambda L, F, x, w: F.conv_transpose2d(x, w, padding="same"),
    lambda L, F, x, w: F.conv_transpose2d(x, L.ones(3, 3, 3, 3)),
    lambda L, F, x, w: F.conv_transpose1d(x[0], L.ones(4, 2, 3), L.ones(3)),
    lambda L, F, x, w: L.nn.ConvTranspose2d(2, 3, 3, padding_mode="reflect"),
    lambda L, F, x, w: F.max_pool1d(x[0, 0, 0], 2),
    lambda L, F, x, w: F.max_pool1d(x, 2),
    lambda L, F, x, w: F.max_pool1d(x[0], 2, padding=2),
    lambda L, F, x, w: F.avg_pool1d(x[0, 0, 0], 2),
    lambda L, F, x, w: F.avg_pool1d(x, 2),
    lambda L, F, x, w: F.avg_pool1d(x[0], 2, padding=2),
    lambda L, F, x, w: F.adaptive_avg_pool1d(x[0, 0, 0], 2),
    lambda L, F, x, w: F.adaptive_avg_pool1d(x[0], (2, 3)),
    lambda L, F, x, w: F.batch_norm(x, L.zeros(3), L.ones(3), training=True),
    lambda L, F, x, w: F.batch_norm(L.ones(1, 3), None, None, training=True),
    lambda L, F, x, w: F.batch_norm(x, None, None),
    lambda L, F, x, w: F.batch_norm(x, L.zeros(4), L.ones(4), eps=-1.0),
    lambda L, F, x, w: F.batch_norm(x, L.zeros(4), L.ones(4), training=True, eps=0.0),
    lambda L, F, x, w: F.group_norm(x, 3),
    lambda L, F, x, w: F.group_norm(x[0, 0, 0], 1),
    lambda L, F, x, w: F.dropout2d(x, 1.5),
    lambda L, F, x, w: L.nn.Conv2d(3, 4, 3, groups=2),
    lambda L, F, x, w: L.nn.Conv2d(4, 3, 3, groups=2),
    lambda L, F, x, w: L.nn.Conv2d(4, 4, 3, groups=0),
    lambda L, F, x, w: L.nn.Conv2d(4, 4, 3, padding="same", stride=2),
    lambda L, F, x, w: L.nn.BatchNorm2d(4)(L.ones(2, 4, 3)),
    lambda L, F, x, w: L.nn.BatchNorm1d(4)(L.ones(2, 4, 3, 3)),
    lambda L, F, x, w: L.nn.GroupNorm(3, 4),
    lambda L, F, x, w: L.nn.Dropout2d(-0.1),
])
def test_errors(bad):
    def run(L):
        x, w = L.ones(2, 4, 6, 6), L.ones(4, 2, 2, 3)
        return bad(L, L.nn.functional, x, w)
    same_outcome(run)


def test_padding_mode_error():
    # (the set in PyTorch's message prints in an order that depends on string hashing)
    for L in (torch, symgrad):
        with pytest.raises(ValueError, match=r"^padding_mode must be one of \{.*\}, but got "
                                             r"padding_mode='zero'$"):
            L.nn.Conv2d(4, 4, 3, padding_mode="zero")


def test_same_padding_warns_once(monkeypatch, recwarn):
    """PyTorch warns of an uneven 'same' padding once per process (TORCH_WARN_ONCE)."""
    from symgrad.nn.functional import conv
    monkeypatch.setattr(conv, "_WARNED", [])
    for _ in range(2):
        symgrad.nn.functional.conv2d(symgrad.ones(1, 2, 4, 4), symgrad.ones(3, 2, 2, 2),
                                     padding="same")
    assert [str(w.message) for w in recwarn] == [
        "Using padding='same' with even kernel lengths and odd dilation may require a "
        "zero-padded copy of the input be created (Triggered internally at "
        "/__w/pytorch/pytorch/aten/src/ATen/native/Convolution.cpp:1101.)"]


@pytest.mark.parametrize("scenario", [
    lambda L: L.nn.functional.dropout2d(L.ones(2, 3, 4)).shape,
    lambda L: L.nn.functional.dropout2d(L.ones(2, 3)).shape,
    lambda L: L.nn.functional.dropout2d(L.ones(2, 3, 4, 4), training=False),
])
def test_warnings(scenario):
    same_outcome(scenario, expect_error=False)


def test_module_reprs_and_members():
    def run(L):
        nn = L.nn
        mods = [nn.Conv2d(1, 6, 5), nn.Conv1d(2, 4, 3, stride=2, padding=1, bias=False,
                                               groups=2, dilation=2),
                nn.Conv2d(2, 4, (3, 2), padding="same"), nn.Conv2d(2, 4, 3, padding="valid"),
                nn.Conv2d(2, 4, 3, padding_mode="reflect"),
                nn.MaxPool2d(2), nn.MaxPool2d((2, 3), return_indices=True, ceil_mode=True),
                nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2),
                nn.ConvTranspose1d(2, 3, 4), nn.ConvTranspose2d(2, 3, 3, bias=False,
                                                                dilation=2),
                nn.MaxPool1d(2), nn.AvgPool1d(3), nn.AvgPool1d(3, 2, 1),
                nn.AdaptiveAvgPool1d(4),
                nn.AvgPool2d(2, 1), nn.AdaptiveAvgPool2d((5, 7)), nn.Dropout2d(0.3),
                nn.BatchNorm1d(3), nn.BatchNorm2d(3, momentum=None, affine=False,
                                                  track_running_stats=False),
                nn.BatchNorm2d(4, bias=False), nn.GroupNorm(2, 4), nn.GroupNorm(1, 2,
                                                                                affine=False)]
        out = []
        for m in mods:
            out.append([repr(m), [(n, tuple(p.shape)) for n, p in m.named_parameters()],
                        [(n, b) for n, b in m.named_buffers()], list(m.state_dict())])
        conv = mods[1]
        out.append([conv.kernel_size, conv.stride, conv.padding, conv.dilation,
                    conv.transposed, conv.output_padding, conv.groups, conv.padding_mode])
        return out
    check_same(run)


@pytest.mark.parametrize("make", [
    lambda L: L.nn.Conv2d(16, 32, 3), lambda L: L.nn.Conv1d(8, 64, 5, groups=4),
    lambda L: L.nn.ConvTranspose2d(32, 16, 3),
])
def test_init_statistics(make):
    """kaiming_uniform_(a=sqrt(5)): U(-1/sqrt(fan_in), 1/sqrt(fan_in)), the bias too."""
    for L in (torch, symgrad):
        L.manual_seed(0)  # why: a statistical bound must not depend on an unseeded draw
        m = make(L)
        fan_in = m.weight.shape[1] * int(np.prod(m.weight.shape[2:]))
        bound = 1 / np.sqrt(fan_in)
        w, b = m.weight.detach().numpy(), m.bias.detach().numpy()
        assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
        assert abs(w.std() - bound / np.sqrt(3)) < 0.05 * bound
        assert abs(w.mean()) < 0.05 * bound
        assert m.weight.requires_grad and m.weight.is_leaf


def test_batch_norm_module_statistics():
    """Training moves the running statistics (unbiased variance; momentum None: the
    cumulative average), eval uses them, num_batches_tracked counts."""
    def run(L):
        out = []
        batches = [L.tensor(RNG_FIXED[k], dtype=L.float32) for k in range(3)]
        for kwargs in ({}, {"momentum": None}, {"affine": False},
                       {"track_running_stats": False}, {"momentum": 0.5, "eps": 1e-3}):
            bn = L.nn.BatchNorm2d(3, **kwargs)
            for x in batches:
                y = bn(x)
            out.append([y, bn.running_mean, bn.running_var, bn.num_batches_tracked])
            bn.eval()
            out.append([bn(batches[0]), bn.training])
        bn1 = L.nn.BatchNorm1d(3)
        out.append([bn1(batches[0][:, :, 0, 0]), bn1(batches[1][:, :, 0]), bn1.running_var])
        gn = L.nn.GroupNorm(3, 3)
        out.append(gn(batches[0]))
        return out
    check_same(run, rtol=1e-5, atol=1e-6)


RNG_FIXED = np.random.default_rng(3).normal(2.0, 3.0, size=(3, 4, 3, 2, 2))


def test_dropout2d_zeroes_whole_channels():
    symgrad.manual_seed(0)
    x = symgrad.ones(64, 32, 3, 3, requires_grad=True)
    y = symgrad.nn.functional.dropout2d(x, 0.25)
    d = y.detach().numpy()
    per_channel = d.reshape(64, 32, 9)
    assert np.all(per_channel.min(-1) == per_channel.max(-1))  # a channel is kept or not
    assert set(np.unique(d)) <= {0.0, np.float32(1 / 0.75)}
    assert 0.2 < (per_channel[..., 0] == 0).mean() < 0.3
    assert y.grad_fn.name() == "MulBackward0"
    drop = symgrad.nn.Dropout2d(0.25)
    drop.eval()
    assert drop(x) is x


FORWARD = {
    "conv2d": (lambda F, x, w, b: F.conv2d(x, w, b, stride=2, padding=1, groups=2),
               [(2, 4, 6, 5), (4, 2, 3, 2), (4,)]),
    "conv1d no bias tangent": (lambda F, x, w: F.conv1d(x, w, None, padding="same"),
                               [(2, 2, 5), (3, 2, 3)]),
    "max_pool2d": (lambda F, x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True), [(2, 3, 6, 6)]),
    "avg_pool2d": (lambda F, x: F.avg_pool2d(x, 3, 2, 1), [(2, 3, 6, 6)]),
    "adaptive": (lambda F, x: F.adaptive_avg_pool2d(x, (2, 3)), [(2, 3, 6, 6)]),
    "batch_norm": (lambda F, x, w, b: F.batch_norm(x, None, None, w, b, True),
                   [(4, 3, 5), (3,), (3,)]),
    "group_norm": (lambda F, x, w, b: F.group_norm(x, 3, w, b), [(4, 3, 5), (3,), (3,)]),
}


@pytest.mark.parametrize("name", list(FORWARD))
def test_forward_mode(name):
    """forward_ad's tangents (the JVPs registered beside the ops; the norms' transposed
    gradient rules) and a gradient of a tangent."""
    f, shapes = FORWARD[name]

    def run(L):
        fw = L.autograd.forward_ad
        rng = np.random.default_rng(4)
        prim = [L.tensor(rng.normal(size=s), dtype=L.float64, requires_grad=True)
                for s in shapes]
        tang = [L.tensor(rng.normal(size=s), dtype=L.float64) for s in shapes]
        with fw.dual_level():
            y = f(L.nn.functional, *[fw.make_dual(p, t) for p, t in zip(prim, tang)])
            t = fw.unpack_dual(y).tangent
            # (a linear op's tangent does not depend on the primal; PyTorch's batch_norm
            # JVP takes its saved statistics as constants, so the gradient of its tangent
            # misses their dependence on the input: test_batch_norm_tangent_gradient)
            g = L.autograd.grad((t * t).sum(), prim[0])[0] if "pool" not in name \
                and name not in ("adaptive", "batch_norm") else None
        return [t.detach(), g]
    check_same(run, rtol=1e-9, atol=1e-10)


def test_batch_norm_tangent_gradient():
    """The gradient of batch norm's tangent, against finite differences (gradcheck)."""
    fw = symgrad.autograd.forward_ad
    rng = np.random.default_rng(5)
    x = symgrad.tensor(rng.normal(size=(4, 3, 2)), dtype=symgrad.float64, requires_grad=True)
    tx, tw = (symgrad.tensor(rng.normal(size=s), dtype=symgrad.float64) for s in ((4, 3, 2),
                                                                                   (3,)))
    w = symgrad.tensor(rng.normal(size=3), dtype=symgrad.float64)

    def tangent(x):
        with fw.dual_level():
            y = symgrad.nn.functional.batch_norm(fw.make_dual(x, tx), None, None,
                                                 fw.make_dual(w, tw), None, True)
            return fw.unpack_dual(y).tangent
    assert symgrad.autograd.gradcheck(tangent, (x,))


def test_seeded_initialisation_is_pytorchs():
    """With one seed, the layers start from PyTorch's very weights (symgrad's generator is
    PyTorch's, and uniform_ draws as its CPU kernel does)."""
    def run(L):
        L.manual_seed(0)
        mods = [L.nn.Conv2d(3, 4, 3), L.nn.Conv1d(2, 4, 5, groups=2),
                L.nn.ConvTranspose2d(4, 2, 2, stride=2)]
        return [[p.detach() for p in m.parameters()] for m in mods]
    check_same(run, rtol=0, atol=0)
