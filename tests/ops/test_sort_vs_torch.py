"""sort, argsort, msort, topk and kthvalue against PyTorch 2.13, and their gradients.

Each case runs in both libraries through ``test_ops_against_torch.compare``: values,
indices (ties: a stable sort gives PyTorch's), the named tuple's type and ``repr``,
``grad_fn`` names and saved values, gradients, errors.  The gradients (a scatter of the
incoming gradient to the indices) are checked to second order against finite differences
with the table-driven tests' ``check_grads``.
"""
from __future__ import annotations

import numpy as np
import pytest

import symgrad
from symgrad import ops
from test_op_table import check_grads
from test_ops_against_torch import Leaf, compare

pytest.importorskip("torch")

A = Leaf([[0.5, -1.25, 2.0, 0.75], [1.5, 0.25, -0.75, 3.0], [-2.0, 1.0, 0.0, -0.5]])
TIES = Leaf([[1.0, 3.0, 3.0, -1.0, 1.0], [2.0, 2.0, 2.0, -0.0, 0.0]])
NAN = Leaf([[1.0, float("nan"), -1.0, float("inf")], [float("-inf"), 0.0, float("nan"), 2.0]])
V = Leaf([0.75, -1.5, 2.25, 0.0])
S = Leaf(1.75)
A32 = Leaf(A.data, "float32")
I = Leaf([[3, 1, 2], [0, 5, 4]], "int64")

CASES = []


def case(name, fn, *leaves, version=True):
    CASES.append(pytest.param(fn, leaves, version, id=name))


for _lname, _leaf in (("A", A), ("ties", TIES), ("nan", NAN), ("vec", V), ("0d", S),
                      ("f32", A32), ("int", I)):
    case(f"sort-{_lname}", lambda L, x: x.sort(), _leaf)
    case(f"sort-desc-{_lname}", lambda L, x: x.sort(descending=True), _leaf)
    case(f"sort-stable-{_lname}", lambda L, x: L.sort(x, stable=True), _leaf)
    case(f"sort-stable-desc-{_lname}",
         lambda L, x: L.sort(x, stable=True, dim=0, descending=True), _leaf)
    case(f"argsort-stable-{_lname}", lambda L, x: L.argsort(x, stable=True), _leaf)
    case(f"argsort-stable-desc-dim0-{_lname}",
         lambda L, x: x.argsort(dim=0, descending=True, stable=True), _leaf)
    case(f"msort-{_lname}", lambda L, x: L.msort(x), _leaf)
for _lname, _leaf in (("A", A), ("vec", V), ("0d", S), ("f32", A32), ("int", I)):
    case(f"topk-{_lname}", lambda L, x: x.topk(1), _leaf)
    case(f"topk-smallest-{_lname}", lambda L, x: L.topk(x, 1, largest=False), _leaf)
    case(f"kthvalue-{_lname}", lambda L, x: x.kthvalue(1), _leaf)
    case(f"kthvalue-keepdim-{_lname}", lambda L, x: L.kthvalue(x, 1, 0, True), _leaf)
case("topk-2-dim0", lambda L, x: x.topk(2, 0), A)
case("topk-3", lambda L, x: x.topk(3), A)
case("topk-0", lambda L, x: x.topk(0), A)
case("kthvalue-3", lambda L, x: x.kthvalue(3), A)
case("kthvalue-2-dim0", lambda L, x: x.kthvalue(2, dim=0), A)
case("sort-dim0", lambda L, x: x.sort(0), A)
case("sort-negative-dim", lambda L, x: x.sort(-2), A)
case("sort-chain", lambda L, x: (x.sort(descending=True).values * x).sum(), A)
case("sort-double-backward", lambda L, x: L.autograd.grad(
    (x.sort().values ** 2).sum(), x, create_graph=True)[0], A, version=False)
case("topk-double-backward", lambda L, x: L.autograd.grad(
    (x.topk(2).values ** 3).sum(), x, create_graph=True)[0], A, version=False)
case("kthvalue-double-backward", lambda L, x: L.autograd.grad(
    (x.kthvalue(2).values.exp()).sum(), x, create_graph=True)[0], A, version=False)
# (version=False: the gradient's scatter is in place in PyTorch, versions 2; symgrad's
# value_selecting_backward, shared with max(dim), writes out of place)
# errors
case("sort-dim-out-of-range", lambda L, x: x.sort(2), A)
case("topk-k-too-large", lambda L, x: x.topk(5), A)
case("kthvalue-k-too-large", lambda L, x: x.kthvalue(5), A)
case("kthvalue-k-0", lambda L, x: x.kthvalue(0), A)
case("argsort-dim-out-of-range", lambda L, x: x.argsort(dim=-3), A)


@pytest.mark.parametrize("fn, leaves, version", CASES)
def test_sorting_matches_torch(fn, leaves, version):
    compare(fn, *leaves, version=version)


def test_stable_sort_keeps_ties_in_order():
    x = symgrad.tensor([2.0, 1.0, 2.0, 1.0, 2.0])
    assert x.sort(stable=True).indices.tolist() == [1, 3, 0, 2, 4]
    assert x.sort(descending=True, stable=True).indices.tolist() == [0, 2, 4, 1, 3]


SECOND_ORDER = {
    "sort": lambda x: x.sort(1).values, "sort-desc": lambda x: x.sort(0, True).values,
    "sort-stable": lambda x: x.sort(stable=True).values,
    "msort": lambda x: symgrad.msort(x), "topk": lambda x: x.topk(2).values,
    "topk-smallest": lambda x: x.topk(2, 0, largest=False).values,
    "kthvalue": lambda x: x.kthvalue(2).values,
    "kthvalue-keepdim": lambda x: x.kthvalue(1, 0, True).values,
}


@pytest.mark.parametrize("name", sorted(SECOND_ORDER))
def test_second_order_against_finite_differences(name):
    """The VJP and the VJP of the VJP (create_graph=True) against central differences,
    at points without ties (as the table-driven test samples them)."""
    f = SECOND_ORDER[name]
    x = np.array([[0.31, -1.27, 1.93, 0.64], [1.52, 0.18, -0.77, 1.11],
                  [-1.84, 0.97, 0.43, -0.52]])
    check_grads(lambda t: (f(t),), [x], order=2, rng=np.random.default_rng(7))


def test_sort_records_are_in_the_table():
    assert {"sort", "sort1", "argsort", "msort", "topk", "topk_indices", "kthvalue",
            "kthvalue_indices"} <= set(ops.OPS)
    assert (ops.OPS["sort"].node_name, ops.OPS["sort1"].node_name, ops.OPS["topk"].node_name,
            ops.OPS["kthvalue"].node_name) == (
        "SortBackward0", "SortBackward1", "TopkBackward0", "KthvalueBackward0")
