"""Second-order graphs of convolution and batch norm as PyTorch 2.13 records them: one
multi-output node (``ConvolutionBackwardBackward0``, ``NativeBatchNormBackwardBackward0``)
for the three gradients, its ``next_functions``, its saved values, the whole graph's
shape, and values to second and third order (third order of batch norm against central
differences: PyTorch's differs from them, its formula holds the batch statistics fixed).
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

import symgrad


def _graph(roots) -> list:
    """The graph from ``roots`` (grad_fns) as a list: per node in the order a walk meets
    it, its name and its edges as (index of the node, output number) -- equal lists mean
    the same graph."""
    order, index, stack = [], {}, []

    def visit(fn):
        if fn is None:
            return None
        if id(fn) not in index:
            index[id(fn)] = len(order)
            order.append(fn)
            stack.append(fn)
        return index[id(fn)]

    for r in roots:
        visit(r)
    rows = []
    k = 0
    while k < len(order):
        fn = order[k]
        edges = [(visit(nf), nr) for nf, nr in getattr(fn, "next_functions", ())]
        rows.append((type(fn).__name__, edges))
        k += 1
    return rows


def _saved(fn) -> dict:
    """The node's saved values (tensors as arrays), read before a later pass frees them."""
    out = {}
    for a in dir(fn):
        if a.startswith("_saved"):
            v = getattr(fn, a)
            out[a] = v.detach().numpy() if hasattr(v, "detach") else v
    return out


def _same_saved(got: dict, want: dict) -> None:
    assert sorted(got) == sorted(want)
    for a, p in want.items():
        q = got[a]
        if isinstance(p, np.ndarray):
            np.testing.assert_allclose(q, p, rtol=1e-6, err_msg=a)
        else:
            assert q == p, a


def _tensors(lib, arrays):
    return [lib.tensor(a, requires_grad=True) for a in arrays]


CONVS = {
    "conv2d": ("conv2d", ((2, 4, 5, 5), (6, 2, 3, 2), (6,)),
               dict(stride=(2, 1), padding=1, dilation=(1, 2), groups=2)),
    "conv1d same": ("conv1d", ((2, 3, 7), (4, 3, 3), (4,)), dict(padding="same")),
    "conv2d no bias": ("conv2d", ((1, 2, 4, 4), (3, 2, 2, 2), None), dict(stride=2)),
    "conv_transpose2d": ("conv_transpose2d", ((2, 4, 3, 3), (4, 3, 2, 2), (3,)),
                         dict(stride=2)),
}


def _conv_run(lib, name, arrays, kw, wrt, third=True):
    fn, _, _ = CONVS[name]
    ts = _tensors(lib, [a for a in arrays if a is not None])
    x, w = ts[0], ts[1]
    b = ts[2] if len(ts) > 2 else None
    y = getattr(lib.nn.functional, fn)(x, w, b, **kw)
    leaves = [ts[i] for i in wrt]
    gs = lib.autograd.grad((y ** 2).sum() + (y * 0.5).sum(), leaves, create_graph=True)
    s = sum(((g ** 2) * (k + 1)).sum() for k, g in enumerate(gs))
    hs = lib.autograd.grad(s, ts, create_graph=True, allow_unused=True)
    out = {"first": gs, "second": hs, "graph": _graph([g.grad_fn for g in gs]),
           "node": gs[0].grad_fn, "nrs": [g.output_nr for g in gs],
           "same": all(g.grad_fn is gs[0].grad_fn for g in gs),
           "saved": _saved(gs[0].grad_fn)}
    if third:
        r = sum((h ** 2).sum() for h in hs if h is not None)
        out["third"] = lib.autograd.grad(r, ts)
    return out


def _arrays(shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [None if s is None else rng.standard_normal(s) for s in shapes]


def _close(a, b):
    for p, q in zip(a, b):
        assert (p is None) == (q is None)
        if p is not None:
            np.testing.assert_allclose(q.detach().numpy(), p.detach().numpy(), rtol=1e-10,
                                       atol=1e-10)


@pytest.mark.parametrize("name", list(CONVS))
@pytest.mark.parametrize("wrt", [(0, 1, 2), (0,), (1,)], ids=["all", "input", "weight"])
def test_convolution_second_order_graph_and_values(name, wrt):
    _, shapes, kw = CONVS[name]
    arrays = _arrays(shapes)
    wrt = tuple(i for i in wrt if shapes[i] is not None)
    # (PyTorch 2.13 cannot differentiate a transposed convolution's third order: it hands
    # output_padding to a convolution that is not transposed)
    third = "transpose" not in name
    want = _conv_run(torch, name, arrays, kw, wrt, third)
    got = _conv_run(symgrad, name, arrays, kw, wrt, third)
    assert type(got["node"]).__name__ == "ConvolutionBackwardBackward0"
    assert got["same"] and want["same"]
    assert got["nrs"] == want["nrs"]
    assert got["graph"] == want["graph"]
    _same_saved(got["saved"], want["saved"])
    for order in ("first", "second") + (("third",) if third else ()):
        _close(want[order], got[order])


def _bn_run(lib, arrays, training, affine, wrt, third=True):
    x, w, b = _tensors(lib, arrays)
    rm = lib.tensor(np.array([0.1, -0.2, 0.3]))
    rv = lib.tensor(np.array([0.5, 1.5, 2.0]))
    y = lib.nn.functional.batch_norm(x, rm, rv, w if affine else None, b if affine else None,
                                     training=training)
    leaves = [(x, w, b)[i] for i in wrt if affine or i == 0]
    gs = lib.autograd.grad((y ** 3).sum() + (y * 0.7).sum(), leaves, create_graph=True)
    s = sum(((g ** 2) * (k + 1)).sum() for k, g in enumerate(gs))
    ts = [x, w, b] if affine else [x]
    hs = lib.autograd.grad(s, ts, create_graph=True, allow_unused=True)
    out = {"first": gs, "second": hs, "graph": _graph([g.grad_fn for g in gs]),
           "node": gs[0].grad_fn, "nrs": [g.output_nr for g in gs],
           "same": all(g.grad_fn is gs[0].grad_fn for g in gs),
           "saved": _saved(gs[0].grad_fn)}
    if third:
        r = sum((h ** 2).sum() for h in hs if h is not None)
        out["third"] = lib.autograd.grad(r, ts, allow_unused=True)
    return out


@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("affine", [True, False], ids=["affine", "plain"])
@pytest.mark.parametrize("wrt", [(0, 1, 2), (0,)], ids=["all", "input"])
def test_batch_norm_second_order_graph_and_values(training, affine, wrt):
    arrays = _arrays(((4, 3, 5), (3,), (3,)), seed=1)
    want = _bn_run(torch, arrays, training, affine, wrt, third=not training)
    got = _bn_run(symgrad, arrays, training, affine, wrt, third=not training)
    assert type(got["node"]).__name__ == "NativeBatchNormBackwardBackward0"
    assert got["same"] and want["same"]
    assert got["nrs"] == want["nrs"]
    assert got["graph"] == want["graph"]
    _same_saved(got["saved"], want["saved"])
    # (evaluation: every order is PyTorch's; training's third order below)
    for order in ("first", "second") + (("third",) if not training else ()):
        _close(want[order], got[order])


def test_batch_norm_third_order_against_finite_differences():
    """Training: the second order's gradient in the input against central differences of
    the second order (PyTorch 2.13's is 39% off here: its double backward takes the saved
    batch mean and inverse deviation as constants)."""
    arrays = _arrays(((4, 2, 3), (2,), (2,)), seed=2)

    def second(lib, x):
        t = lib.tensor(x, requires_grad=True)
        w, b = (lib.tensor(a) for a in arrays[1:])
        y = lib.nn.functional.batch_norm(t, None, None, w, b, training=True)
        g, = lib.autograd.grad((y ** 3).sum(), t, create_graph=True)
        h, = lib.autograd.grad((g ** 2).sum(), t, create_graph=True)
        return t, (h ** 2).sum()

    t, r = second(symgrad, arrays[0])
    got = symgrad.autograd.grad(r, t)[0].numpy()
    fd = np.zeros_like(arrays[0])
    eps = 1e-5
    for k in np.ndindex(fd.shape):
        up, down = arrays[0].copy(), arrays[0].copy()
        up[k] += eps
        down[k] -= eps
        fd[k] = (float(second(symgrad, up)[1].detach())
                 - float(second(symgrad, down)[1].detach())) / (2 * eps)
    np.testing.assert_allclose(got, fd, rtol=1e-6, atol=1e-6 * np.abs(fd).max())


def test_batch_norm_saved_statistics_have_no_gradient():
    """save_mean and save_invstd are edges of the node that PyTorch cannot differentiate
    (None here: no gradient reaches them)."""
    x = symgrad.tensor(_arrays(((3, 2),))[0], requires_grad=True)
    y = symgrad.nn.functional.batch_norm(x, None, None, training=True)
    g, = symgrad.autograd.grad((y ** 3).sum(), x, create_graph=True)
    edges = g.grad_fn.next_functions
    assert len(edges) == 5 and edges[3:] == ((None, 0), (None, 0))


def test_hessian_through_convolution_padding_and_batch_norm_eval():
    """torch.func.hessian (forward over reverse, batched tangents through the multi-output
    nodes) of a small conv net, against torch.func's."""
    arrays = _arrays(((2, 1, 2, 2), (1, 1, 3, 3), (2,), (2,)), seed=3)

    def run(lib):
        F = lib.nn.functional
        rm, rv = lib.tensor(np.array([0.1, -0.2])), lib.tensor(np.array([0.7, 1.3]))

        def fn(w, x, b, g):
            y = F.pad(F.conv2d(x, w, b, padding=1), (1, 1, 1, 0), mode="reflect")
            return (F.batch_norm(y, rm, rv, g, None, training=False).tanh() ** 2).sum()
        h = lib.func.hessian(fn, argnums=(0, 1, 2, 3))(*(lib.tensor(a) for a in arrays))
        return [t.detach().numpy() for row in h for t in row]

    for want, got in zip(run(torch), run(symgrad)):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_batch_norm_forward_over_reverse_against_finite_differences():
    """Training: the JVP of the weight's gradient against central differences of it
    (torch.func.jvp of torch.func.jacrev differs from them in PyTorch 2.13; its
    autograd.forward_ad agrees)."""
    x0, g0, v = _arrays(((4, 2, 3), (2,), (4, 2, 3)), seed=4)

    def fn(x, g):
        y = symgrad.nn.functional.batch_norm(x, None, None, g, None, training=True)
        return (y.tanh() ** 2).sum()

    grad_g = symgrad.func.jacrev(fn, argnums=1)
    _, got = symgrad.func.jvp(lambda x: grad_g(x, symgrad.tensor(g0)), (symgrad.tensor(x0),),
                              (symgrad.tensor(v),))
    eps = 1e-6
    fd = (grad_g(symgrad.tensor(x0 + eps * v), symgrad.tensor(g0)).numpy()
          - grad_g(symgrad.tensor(x0 - eps * v), symgrad.tensor(g0)).numpy()) / (2 * eps)
    np.testing.assert_allclose(got.numpy(), fd, rtol=1e-6, atol=1e-8)
    fw = torch.autograd.forward_ad
    with fw.dual_level():
        x = fw.make_dual(torch.tensor(x0), torch.tensor(v))
        g = torch.tensor(g0, requires_grad=True)
        y = torch.nn.functional.batch_norm(x, None, None, g, None, training=True)
        gg, = torch.autograd.grad((y.tanh() ** 2).sum(), g, create_graph=True)
        want = fw.unpack_dual(gg).tangent.detach().numpy()
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-10)
