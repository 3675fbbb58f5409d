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
