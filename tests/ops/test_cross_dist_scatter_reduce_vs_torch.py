"""``torch.linalg.cross`` (and ``torch.cross`` through it), ``torch.dist`` for every p
(0, inf and -inf included: PyTorch's norm_backward), ``scatter(..., reduce=)`` (a
``NotImplemented`` node) and ``scatter_reduce`` (``ScatterReduceBackward0``) against
PyTorch 2.13: values, dtypes, gradients to second order, the graphs of the gradients
node for node, saved values, errors and their messages."""
from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

import symgrad

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "conv"))
from test_second_order_vs_torch import _graph  # noqa: E402

def _outcome(f):
    """What ``f()`` gives: values, dtype, grad_fn name (tensors, tuples of them) or the
    error's type and message."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = f()
    except Exception as e:  # noqa: BLE001 - the error is the outcome compared
        return type(e).__name__, str(e)
    if isinstance(r, (tuple, list)):
        return [_outcome(lambda a=a: a) for a in r]
    if r is None or not hasattr(r, "dtype"):
        return r
    return (str(r.dtype), tuple(r.shape), np.round(r.detach().numpy().astype(float), 9).tolist(),
            r.grad_fn.name() if r.grad_fn is not None else None)


def _same(case):
    assert _outcome(lambda: case(symgrad)) == _outcome(lambda: case(torch))


def _leaf(L, a, grad=True):
    return L.tensor(np.asarray(a), requires_grad=grad)


def _second_order(L, build, arrays):
    """First-order gradients under create_graph, their graph, and second-order values."""
    xs = [_leaf(L, a) for a in arrays]
    y = build(L, *xs)
    gs = L.autograd.grad((y * y).sum() + y.sum(), xs, create_graph=True, allow_unused=True)
    live = [g for g in gs if g is not None]
    s = sum(((g * g) * (k + 1)).sum() for k, g in enumerate(live))
    hs = L.autograd.grad(s, xs, allow_unused=True) if s.requires_grad else ()
    return _graph([g.grad_fn for g in live]), [_outcome(lambda g=g: g) for g in gs + tuple(hs)]


def _same_second_order(build, arrays):
    want, got = _second_order(torch, build, arrays), _second_order(symgrad, build, arrays)
    assert got[0] == want[0]
    assert got[1] == want[1]


RNG = np.random.default_rng(7)
A23, B23, B13 = RNG.standard_normal((2, 3)), RNG.standard_normal((2, 3)), RNG.standard_normal(3)

# -- cross -------------------------------------------------------------------------------------
CROSS = [
    lambda L: L.linalg.cross(_leaf(L, A23), _leaf(L, B13[None])),
    lambda L: L.linalg.cross(_leaf(L, A23.T), _leaf(L, B23.T), dim=0),
    lambda L: L.linalg.cross(_leaf(L, A23.T), _leaf(L, B23.T), dim=-2).grad_fn._saved_dim,
    lambda L: L.linalg.cross(_leaf(L, A23), _leaf(L, B23)).grad_fn._saved_dim,
    lambda L: L.linalg.cross(_leaf(L, A23[:, :2]), _leaf(L, B23[:, :2])),
    lambda L: L.linalg.cross(_leaf(L, A23.T), _leaf(L, B23.T), dim=1),
    lambda L: L.linalg.cross(_leaf(L, A23), _leaf(L, B23), dim=2),
    lambda L: L.linalg.cross(_leaf(L, A23), _leaf(L, B13)),
    lambda L: L.linalg.cross(_leaf(L, A23), L.tensor(B23, dtype=L.float32)),
    lambda L: L.linalg.cross(_leaf(L, np.zeros((4, 3))), _leaf(L, np.zeros((3, 3)))),
    lambda L: L.linalg.cross(L.arange(3), L.arange(3) + 1),
    lambda L: L.linalg.cross(L.ones(3).bool(), L.ones(3).bool()),
    lambda L: L.linalg.cross(L.ones(3), [1, 2, 3]),
    lambda L: L.linalg.cross(L.ones(3), L.ones(3), dim=0.5),
    lambda L: L.cross(_leaf(L, A23), _leaf(L, B23), dim=-1),
    lambda L: L.cross(L.ones(3), "x"),
    lambda L: L.cross(L.ones(3), L.ones(3), dim=0.0),
    lambda L: _leaf(L, A23).cross(_leaf(L, B23), dim=1),
]


@pytest.mark.parametrize("k", range(len(CROSS)))
def test_cross(k):
    _same(CROSS[k])


def test_cross_without_dim():
    """(PyTorch warns once a process: torch.cross without dim is compared in
    tests/tensor/test_index_math_names_vs_torch.py, which sees that warning; here
    symgrad's default dim is compared with PyTorch's explicit one.)"""
    with pytest.warns(UserWarning, match="without specifying the dim arg is deprecated"):
        got = symgrad.cross(symgrad.tensor(A23.T), symgrad.tensor(B23.T))
    want = torch.cross(torch.tensor(A23.T), torch.tensor(B23.T), dim=0)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    with pytest.warns(UserWarning), pytest.raises(RuntimeError) as e:
        symgrad.cross(symgrad.ones(2, 2), symgrad.ones(2, 2))
    assert str(e.value) == "no dimension of size 3 in input"


def test_cross_second_order():
    _same_second_order(lambda L, a, b: L.linalg.cross(a, b), [A23, B23])


# -- dist --------------------------------------------------------------------------------------
PS = [0, float("inf"), -float("inf"), 0.5, 1, 1.5, 2, 3]
X = np.array([[1., 2.], [3., 3.]])
Y = np.array([1., 3.])  # (zero differences, and ties of the largest one)


@pytest.mark.parametrize("p", PS)
def test_dist_values_gradients_and_errors(p):
    def run(L, wrt):
        x, y = _leaf(L, X), _leaf(L, Y)
        d = L.dist(x, y, p)
        return d, d.grad_fn._saved_p, L.autograd.grad(d, [(x, y)[i] for i in wrt],
                                                        allow_unused=True)
    for wrt in ((0, 1), (0,), (1,)):
        _same(lambda L: run(L, wrt))
    _same(lambda L: _leaf(L, X).dist(_leaf(L, Y), p=p))


@pytest.mark.parametrize("p", [q for q in PS if q != 0])
def test_dist_second_order(p):
    _same_second_order(lambda L, x, y: L.dist(x, y, p), [X + 0.25, Y])


def test_dist_zero_leaves_no_gradient():
    def run(L):
        x = _leaf(L, X)
        L.dist(x, L.tensor(Y), 0).backward()
        return x.grad
    assert run(symgrad) is None and run(torch) is None


# -- scatter(reduce=) and scatter_reduce -------------------------------------------------------
SELF = np.array([[1., 0., 3.], [4., 5., 6.]])
SRC = np.array([[10., 20., 30.], [40., 0., 60.]])
INDEX = np.array([[0, 1, 0], [1, 0, 0]])


def _scatter(L, reduce, value=False, in_place=False, grad_self=True):
    x = _leaf(L, SELF, grad_self) * 1
    src = 2.5 if value else _leaf(L, SRC)
    ix = L.tensor(INDEX)
    if in_place:
        return x.scatter_(0, ix, src, reduce=reduce)
    return x.scatter(0, ix, src, reduce=reduce)


LEGACY = [lambda L, r=r, v=v, i=i: _scatter(L, r, v, i) for r in ("add", "multiply")
          for v in (False, True) for i in (False, True)] + [
    lambda L: _scatter(L, "mean"), lambda L: _scatter(L, "sum", True),
    lambda L: L.autograd.grad(_scatter(L, "add").sum(), L.ones(1, requires_grad=True)),
    lambda L: _scatter(L, "add").sum().backward(),
    lambda L: L.scatter(L.tensor(SELF), 0, L.tensor(INDEX), L.tensor(SRC), reduce="multiply"),
]


@pytest.mark.parametrize("k", range(len(LEGACY)))
def test_scatter_with_reduce(k):
    _same(LEGACY[k])


def test_scatter_with_reduce_warns_as_pytorch():
    """(PyTorch warns once a process: its text, as this test run may have seen it.)"""
    with pytest.warns(UserWarning) as seen:
        symgrad.zeros(3).scatter(0, symgrad.tensor([0, 1, 0]), symgrad.ones(3), reduce="add")
    assert str(seen[0].message) == (
        "The reduce argument of torch.scatter with Tensor src is deprecated and will be "
        "removed in a future PyTorch release. Use torch.scatter_reduce instead for more "
        "reduction options.")
    assert seen[0].filename == __file__


REDUCTIONS = ["sum", "prod", "mean", "amax", "amin"]


@pytest.mark.parametrize("reduce", REDUCTIONS)
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce(reduce, include_self):
    def run(L, dim, grads=True):
        x, src = _leaf(L, SELF), _leaf(L, SRC)
        y = x.scatter_reduce(dim, L.tensor(INDEX), src, reduce, include_self=include_self)
        saved = (y.grad_fn._saved_reduce, y.grad_fn._saved_include_self, y.grad_fn._saved_dim)
        return [y, saved] + (list(L.autograd.grad((y * y).sum(), (x, src))) if grads else [])
    for dim in (0, 1):
        _same(lambda L: run(L, dim))
    _same(lambda L: L.scatter_reduce(L.tensor(SELF), 1, L.tensor(INDEX), L.tensor(SRC),
                                     reduce, include_self=include_self))
    _same(lambda L: L.tensor(SELF).scatter_reduce_(0, L.tensor(INDEX), L.tensor(SRC), reduce,
                                                   include_self=include_self))
    _same(lambda L: L.arange(6).reshape(2, 3).scatter_reduce(
        0, L.tensor(INDEX), L.arange(6).reshape(2, 3) * 2 - 3, reduce,
        include_self=include_self))
    _same_second_order(lambda L, x, s: x.scatter_reduce(0, L.tensor(INDEX), s, reduce,
                                                        include_self=include_self),
                       [SELF + 0.5, SRC + 0.25])


SCATTER_REDUCE_ERRORS = [
    lambda L: L.zeros(2, 3).scatter_reduce(0, L.tensor(INDEX), L.ones(2, 3), "foo"),
    lambda L: L.zeros(2, 3).scatter_reduce(0, L.tensor(INDEX).float(), L.ones(2, 3), "sum"),
    lambda L: L.zeros(2, 3).scatter_reduce(0, L.tensor(INDEX), L.ones(2, 3).double(), "sum"),
    lambda L: L.zeros(2, 3).scatter_reduce(0, L.tensor(INDEX)[0], L.ones(2, 3), "sum"),
    lambda L: L.zeros(2, 3).scatter_reduce(0, L.tensor(INDEX) + 5, L.ones(2, 3), "sum"),
    lambda L: L.zeros(2, 3).scatter_reduce(0, L.tensor(INDEX), 2.0, "sum"),
    lambda L: L.zeros(2, 3).scatter(0, L.tensor(INDEX), L.ones(2, 3).double(), reduce="add"),
    lambda L: L.zeros(2, 3).scatter(0, L.tensor(INDEX) + 5, L.ones(2, 3), reduce="add"),
]


@pytest.mark.parametrize("k", range(len(SCATTER_REDUCE_ERRORS)))
def test_scatter_reduce_errors(k):
    _same(SCATTER_REDUCE_ERRORS[k])


@pytest.mark.parametrize("reduce", REDUCTIONS)
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_forward_mode(reduce, include_self):
    def run(L):
        fw = L.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(L.tensor(SELF), L.tensor(SELF * 0.5 + 1))
            src = fw.make_dual(L.tensor(SRC), L.tensor(SRC * 0.25 - 2))
            y = x.scatter_reduce(1, L.tensor(INDEX), src, reduce, include_self=include_self)
            return fw.unpack_dual(y).tangent
    _same(run)


@pytest.mark.parametrize("value", [False, True])
def test_scatter_with_reduce_has_no_forward_mode(value):
    def run(L):
        fw = L.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(L.tensor(SELF), L.tensor(SELF))
            return x.scatter(0, L.tensor(INDEX), 2.0 if value else L.tensor(SRC), reduce="add")
    _same(run)


@pytest.mark.parametrize("p", PS)
def test_dist_forward_mode(p):
    def run(L):
        fw = L.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(L.tensor(X), L.tensor(X * 0.5 - 1))
            y = fw.make_dual(L.tensor(Y), L.tensor(Y + 0.25))
            return fw.unpack_dual(L.dist(x, y, p)).tangent
    _same(run)


def test_scatter_reduce_prod_of_several_zeros_has_no_second_order():
    """Two zeros reduced into one place: src's gradient is right, on an ``Error`` node
    (PyTorch's DelayedError) whose backward raises PyTorch's message."""
    def run(L, create_graph):
        x = _leaf(L, SELF + 1)
        s = _leaf(L, np.array([[0., 20., 30.], [0., 1., 60.]]))
        y = x.scatter_reduce(0, L.tensor([[0, 1, 0], [0, 0, 0]]), s, "prod")
        gx, gs = L.autograd.grad(y.sum(), (x, s), create_graph=create_graph)
        edges = [(f.name() if f else None, nr) for f, nr in gs.grad_fn.next_functions] \
            if gs.grad_fn is not None else None
        return gx, gs, edges, _outcome(lambda: L.autograd.grad(gs.sum(), s)) \
            if create_graph else None
    for create_graph in (False, True):
        _same(lambda L: run(L, create_graph))


@pytest.mark.parametrize("reduce", REDUCTIONS)
@pytest.mark.parametrize("index", [[[0, 1], [1, 0]], [[0], [2], [1]]], ids=["2x2", "3x1"])
def test_scatter_reduce_of_a_larger_src(reduce, index):
    """PyTorch's forward reads the index's part of src; its backward fails, or broadcasts
    src against the index, and so does symgrad's."""
    def run(L, wrt):
        x = _leaf(L, np.arange(9.).reshape(3, 3) + 1)
        src = _leaf(L, np.arange(12.).reshape(3, 4) + 2)
        y = x.scatter_reduce(1, L.tensor(index), src, reduce)
        return [y] + list(L.autograd.grad((y * y).sum(), [(x, src)[i] for i in wrt]))
    for wrt in ((0, 1), (0,)):
        _same(lambda L: run(L, wrt))


@pytest.mark.parametrize("wants", [(True, True), (True, False), (False, True)])
def test_scatter_with_reduce_edges_are_the_operands_that_require_grad(wants):
    def run(L):
        x, src = _leaf(L, SELF, wants[0]), _leaf(L, SRC, wants[1])
        out = []
        for y in (x.scatter(0, L.tensor(INDEX), src, reduce="add"),
                  L.scatter(x, 0, L.tensor(INDEX), src, reduce="multiply")):
            out.append([(f.name() if f else None, nr) for f, nr in y.grad_fn.next_functions])
            out.append(_outcome(lambda y=y: y))
        return out
    assert run(symgrad) == run(torch)
