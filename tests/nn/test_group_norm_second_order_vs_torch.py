"""``F.group_norm`` to second and third order as PyTorch 2.13 records it: the node saves its
own outputs 1 and 2 (each group's mean and rstd, ``_saved_result1``/``_saved_result2``
with the node as grad_fn), and under ``create_graph`` its gradients are PyTorch's
``infinitely_differentiable_native_group_norm_backward``, op for op (ViewBackward0,
SumBackward1, UnsqueezeBackward1, ... reaching the node's outputs 1 and 2): the graph of
the gradients node for node, and the values of every order, against torch."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import symgrad
from symgrad.drawing import make_dot

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "conv"))
from test_second_order_vs_torch import _graph  # noqa: E402

SHAPES = {"3-d, 2 groups": ((2, 4, 3), 2), "4-d, 1 group": ((2, 2, 2, 2), 1),
          "4-d, 3 groups": ((1, 6, 2, 1), 3)}


def _run(lib, shape, groups, affine, wrt):
    rng = np.random.default_rng(len(shape) + groups)
    c = shape[1]
    x = lib.tensor(rng.standard_normal(shape), requires_grad=0 in wrt)
    w = lib.tensor(rng.standard_normal(c), requires_grad=True) if affine else None
    b = lib.tensor(rng.standard_normal(c), requires_grad=True) if affine else None
    y = lib.nn.functional.group_norm(x, groups, w, b)
    node = y.grad_fn
    saved = [(getattr(node, "_saved_" + k).grad_fn is node,
              tuple(getattr(node, "_saved_" + k).shape)) for k in ("result1", "result2")]
    leaves = [t for i, t in enumerate((x, w, b)) if i in wrt and t is not None]
    gs = lib.autograd.grad((y ** 3).sum() + (y * 0.7).sum(), leaves, create_graph=True)
    s = sum(((g ** 2) * (k + 1)).sum() for k, g in enumerate(gs))
    ts = [t for t in (x, w, b) if t is not None and t.requires_grad]
    hs = lib.autograd.grad(s, ts, create_graph=True, allow_unused=True)
    r = sum((h ** 2).sum() for h in hs if h is not None)
    third = lib.autograd.grad(r, ts, allow_unused=True) if r.requires_grad else ()
    return {"graph": _graph([g.grad_fn for g in gs]), "values": (gs, hs, third),
            "saved": saved, "edges": [(type(f).__name__ if f else None, nr)
                                      for f, nr in node.next_functions]}


CASES = [(name, affine, wrt) for name in SHAPES for affine in (True, False)
         for wrt in ((0, 1, 2), (0,), (1, 2)) if affine or wrt == (0,)]


@pytest.mark.parametrize("name,affine,wrt", CASES,
                         ids=[f"{n}-{'affine' if a else 'plain'}-{w}" for n, a, w in CASES])
def test_group_norm_graphs_and_values_to_third_order(name, affine, wrt):
    shape, groups = SHAPES[name]
    want = _run(torch, shape, groups, affine, wrt)
    got = _run(symgrad, shape, groups, affine, wrt)
    assert got["graph"] == want["graph"]  # every node's name and edges (output numbers)
    assert got["saved"] == want["saved"]
    assert got["edges"] == want["edges"]
    for p_list, q_list in zip(want["values"], got["values"]):
        assert len(p_list) == len(q_list)
        for p, q in zip(p_list, q_list):
            assert (p is None) == (q is None)
            if p is not None:
                np.testing.assert_allclose(q.detach().numpy(), p.detach().numpy(),
                                           rtol=1e-9, atol=1e-10)


def test_the_statistics_alone_and_the_pack_order():
    """A gradient reaching only the mean (or only the rstd) reaches no input, as PyTorch's
    formula asks for both; a saved_tensors_hooks pack hook sees the input, the weight,
    then the two outputs."""
    def run(lib):
        x = lib.tensor(np.arange(12.0).reshape(2, 2, 3) ** 1.5, requires_grad=True)
        w = lib.ones(2, dtype=lib.float64, requires_grad=True)
        seen = []

        def pack(t):
            seen.append((tuple(t.shape), t.grad_fn is not None))
            return t
        with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            y = lib.nn.functional.group_norm(x, 2, w)
        mean, rstd = y.grad_fn._saved_result1, y.grad_fn._saved_result2
        alone = [lib.autograd.grad(s.sum(), x, retain_graph=True, allow_unused=True)[0]
                 for s in (mean, rstd)]
        both = lib.autograd.grad((mean * rstd).sum(), x, retain_graph=True)[0]
        return seen, alone, both.detach().numpy(), mean.detach().numpy()
    want, got = run(torch), run(symgrad)
    assert got[0] == want[0] and got[1] == want[1] == [None, None]
    np.testing.assert_allclose(got[2], want[2], rtol=1e-12)
    np.testing.assert_allclose(got[3], want[3], rtol=1e-12)


@pytest.mark.parametrize("create_graph", [False, True])
def test_a_bias_without_a_weight_fails_as_pytorch(create_graph):
    """PyTorch's fused kernel and its create_graph formula both fail, each its way."""
    def message(lib):
        x = lib.tensor(np.arange(8.0).reshape(2, 2, 2), requires_grad=True)
        b = lib.zeros(2, dtype=lib.float64, requires_grad=True)
        y = lib.nn.functional.group_norm(x, 1, None, b)
        with pytest.raises(RuntimeError) as e:
            lib.autograd.grad(y.sum(), (x, b), create_graph=create_graph)
        return str(e.value)
    assert message(symgrad) == message(torch)


def test_make_dot_of_the_double_backward_as_torchviz_draws_pytorchs():
    """symgrad's make_dot of group norm's (and circular pad's) gradient, saved values shown,
    has the nodes and edges that the real torchviz draws of PyTorch's."""
    torchviz = pytest.importorskip("torchviz")

    def count(lib, make_dot):
        rng = np.random.default_rng(0)
        x = lib.tensor(rng.standard_normal((2, 4, 3)), requires_grad=True)
        w = lib.tensor(rng.standard_normal(4), requires_grad=True)
        g, = lib.autograd.grad((lib.nn.functional.group_norm(x, 2, w) ** 2).sum(), x,
                               create_graph=True)
        z = lib.tensor(rng.standard_normal((1, 2, 5)), requires_grad=True)
        h, = lib.autograd.grad((lib.nn.functional.pad(z, (2, 1), mode="circular") ** 3).sum(),
                               z, create_graph=True)
        out = []
        for t, params in ((g, {"x": x, "w": w}), (h, {"z": z})):
            src = make_dot(t, params=params, show_attrs=True, show_saved=True).source
            out.append((len(re.findall(r"^\s*\S+ \[label=", src, re.M)), src.count("->")))
        return out
    assert count(symgrad, make_dot) == count(torch, torchviz.make_dot)
