"""``make_dot`` against the real torchviz (when installed): the same nodes (labels with
parameter names and sizes, saved-value tables, fill colours) and edges for a course MLP,
torchviz's error for a non-tensor, and real torchviz drawing symgrad tensors."""
from __future__ import annotations

import re
from collections import Counter

import pytest

import symgrad

torch = pytest.importorskip("torch")
torchviz = pytest.importorskip("torchviz")

_NODE = re.compile(r'\[label=("(?:[^"\\]|\\.)*"|[^\s\]]+)(?: fillcolor=(\w+))?', re.S)


def canonical(source: str) -> tuple:
    """Nodes as (label, colour) with newlines and quotes normalised; the edge count."""
    nodes = Counter()
    for label, colour in _NODE.findall(source):
        text = label[1:-1] if label.startswith('"') else label
        nodes[(text.replace("\\n", "\n").replace('\\"', '"'), colour)] += 1
    return nodes, source.count("->")


def mlp(L):
    L.manual_seed(0)
    m = L.nn.Sequential(L.nn.Linear(2, 3), L.nn.Tanh(), L.nn.Linear(3, 1))
    return m, m(L.ones(4, 2)).sum()


@pytest.mark.parametrize("kw", [{}, {"show_attrs": True}, {"show_saved": True},
                                {"show_attrs": True, "show_saved": True}])
def test_mlp_like_torchviz(kw):
    tm, ty = mlp(torch)
    sm, sy = mlp(symgrad)
    want = canonical(torchviz.make_dot(ty, params=dict(tm.named_parameters()), **kw).source)
    got = canonical(symgrad.make_dot(sy, params=dict(sm.named_parameters()), **kw).source)
    assert got == want


def test_add_alpha_and_leaf_output():
    def dot(L, make):
        x = L.ones(2, requires_grad=True)
        return canonical(make(x + x * 2, show_attrs=True).source), canonical(make(x).source)
    assert dot(symgrad, symgrad.make_dot) == dot(torch, torchviz.make_dot)


@pytest.mark.parametrize("bad", [3, [1.0], None])
def test_non_tensor_gets_torchvizs_error(bad):
    with pytest.raises((AttributeError, TypeError)) as want:
        torchviz.make_dot(bad)
    with pytest.raises((AttributeError, TypeError)) as got:
        symgrad.make_dot(bad)
    assert (type(got.value), str(got.value)) == (type(want.value), str(want.value))


def test_real_torchviz_draws_symgrad_tensors():
    _, ty = mlp(torch)
    _, sy = mlp(symgrad)
    x = symgrad.ones(2, 3, requires_grad=True)
    tx = torch.ones(2, 3, requires_grad=True)
    assert canonical(torchviz.make_dot(sy).source) == canonical(torchviz.make_dot(ty).source)
    assert canonical(torchviz.make_dot(x.t()[0].sum()).source) == canonical(
        torchviz.make_dot(tx.t()[0].sum()).source)


def double_backprop(L, what):
    """torchviz's own example (``examples.ipynb``): an MLP's input gradient penalised,
    and the weights' gradients (``mm_mat2_backward`` of ``weight.t()``, column-major)."""
    L.manual_seed(0)
    m = L.nn.Sequential(L.nn.Linear(8, 16), L.nn.Tanh(), L.nn.Linear(16, 1))
    x = L.randn(1, 8).requires_grad_(True)
    y = m(x).mean()
    if what == "penalty":
        grad, = L.autograd.grad(y, x, create_graph=True, retain_graph=True)
        return grad.pow(2).mean() + y, dict(list(m.named_parameters()) + [("x", x)])
    grads = L.autograd.grad(y, list(m.parameters()), create_graph=True)
    return (grads[0] if what == "weight" else tuple(grads)), dict(m.named_parameters())


@pytest.mark.parametrize("what", ["penalty", "weight", "all"])
def test_double_backward_graphs_like_torchs(what):
    ty, tparams = double_backprop(torch, what)
    sy, sparams = double_backprop(symgrad, what)
    want = canonical(torchviz.make_dot(ty).source)
    assert canonical(torchviz.make_dot(sy).source) == want
    assert canonical(symgrad.make_dot(sy).source) == want
    assert canonical(symgrad.make_dot(sy, params=sparams).source) == canonical(
        torchviz.make_dot(ty, params=tparams).source)


def test_view_outputs_draw_their_base():
    def dot(L, make):
        x = L.ones(2, 3, requires_grad=True)
        y = x * 2
        return [canonical(make(v).source) for v in (x.t(), y.t(), (y[0], y), y.view(3, 2)[1])]
    assert dot(symgrad, symgrad.make_dot) == dot(torch, torchviz.make_dot)


def test_make_dot_from_trace_raises_as_torchviz():
    with pytest.raises(NotImplementedError) as want:
        torchviz.make_dot_from_trace(None)
    with pytest.raises(NotImplementedError) as got:
        symgrad.drawing.make_dot_from_trace(None)
    assert str(got.value) == str(want.value)
