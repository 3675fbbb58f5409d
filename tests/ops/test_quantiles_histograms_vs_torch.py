"""median, nanmedian, quantile, nanquantile, histc, histogram, bincount and bucketize
against PyTorch 2.13.

Each case runs in both libraries through ``test_ops_against_torch.compare``: values,
dtypes, the named tuples, the whole graph (node names, saved values, edges; quantile's
sort/view/gather/lerp/squeeze nodes), gradients and errors.  The gradients of the median
ops and of quantile are checked to second order against central finite differences with
the table-driven tests' ``check_grads``.
"""
from __future__ import annotations

import numpy as np
import pytest

import symgrad
from test_op_table import check_grads
from test_ops_against_torch import Leaf, compare, const

torch = pytest.importorskip("torch")

NAN = float("nan")
A = Leaf([[0.5, -1.25, 2.0, 0.75], [1.5, 0.25, -0.75, 3.0], [-2.0, 1.0, 0.0, -0.5]])
TIES = Leaf([[1.0, 3.0, 3.0, -1.0, 1.0], [2.0, 2.0, 2.0, -0.0, 0.0], [5, 1, 5, 1, 3]])
NANS = Leaf([[1.0, NAN, -1.0, NAN, 2.0], [NAN] * 5, [3.0, 1.0, 2.0, 0.0, 0.5],
             [NAN, NAN, NAN, 4.0, NAN]])
ALL_NAN = Leaf([[NAN] * n + [0.0] * (9 - n) for n in range(4, 10)])
V = Leaf([0.75, -1.5, 2.25, 0.0, 1.0])
S = Leaf(1.75)
A32 = Leaf(A.data, "float32")
I = const([[3, 1, 2], [0, 5, 4]], "int64")
Q = Leaf([0.25, 0.6], rg=False)
QG = Leaf([0.1, 0.5, 0.9])
IDX = const([0, 1, 1, 4, 2], "int64")

CASES = []


def case(name, fn, *leaves, version=True):
    CASES.append(pytest.param(fn, leaves, version, id=name))


for _lname, _leaf in (("A", A), ("ties", TIES), ("nan", NANS), ("vec", V), ("0d", S),
                      ("f32", A32), ("int", I)):
    for _name in ("median", "nanmedian"):
        case(f"{_name}-{_lname}", lambda L, x, n=_name: getattr(x, n)(), _leaf)
        case(f"{_name}-dim-{_lname}", lambda L, x, n=_name: getattr(x, n)(-1), _leaf)
        case(f"{_name}-dim0-keepdim-{_lname}",
             lambda L, x, n=_name: getattr(L, n)(x, 0, keepdim=True), _leaf)
case("nanmedian-all-nan-rows", lambda L, x: x.nanmedian(1), ALL_NAN)
case("median-all-nan-rows", lambda L, x: x.median(1), ALL_NAN)
for _n in (1, 2, 3, 4, 5, 7, 8, 12, 17, 33):  # (libstdc++'s nth_element, by row length)
    case(f"nanmedian-all-nan-{_n}", lambda L, x: x.nanmedian(-1), Leaf([[NAN] * _n] * 2))
case("median-chain", lambda L, x: (x.median(0).values * x[0]).sum(), A)
case("median-empty", lambda L: L.tensor([]).median())
case("median-empty-dim", lambda L: L.zeros(2, 0).median(1))
case("median-bool", lambda L: L.tensor([True, False]).median())
case("median-dim-out-of-range", lambda L, x: x.median(2), A)
for _interp in ("linear", "lower", "higher", "midpoint", "nearest"):
    for _name in ("quantile", "nanquantile"):
        case(f"{_name}-{_interp}",
             lambda L, x, n=_name, i=_interp: getattr(x, n)(0.3, interpolation=i), A,
             version=False)
        case(f"{_name}-{_interp}-dim1-q-tensor",
             lambda L, x, q, n=_name, i=_interp: getattr(L, n)(x, q, dim=1, interpolation=i),
             A, Q, version=False)
        case(f"{_name}-{_interp}-nan-dim0-keepdim",
             lambda L, x, n=_name, i=_interp: getattr(x, n)(0.6, 0, True, interpolation=i),
             NANS, version=False)
case("quantile-q-requires-grad", lambda L, x, q: x.quantile(q, dim=0), A, QG, version=False)
case("nanquantile-q-requires-grad", lambda L, x, q: x.nanquantile(q, dim=-1), NANS, QG,
     version=False)
case("quantile-keepdim-all", lambda L, x: x.quantile(0.5, keepdim=True), A, version=False)
case("quantile-0d", lambda L, x: x.quantile(0.5, dim=0), S, version=False)
case("quantile-vec-f32", lambda L, x: x.quantile(0.75), A32, version=False)
case("quantile-q-out-of-range", lambda L, x: x.quantile(1.5), A)
case("quantile-q-tensor-out-of-range", lambda L, x: x.quantile(L.tensor([-0.1, 0.5],
                                                                        dtype=L.float64)), A)
case("quantile-q-2d", lambda L, x: x.quantile(L.tensor([[0.1]], dtype=L.float64)), A)
case("quantile-int", lambda L, x: x.quantile(0.5), I)
case("quantile-q-dtype", lambda L, x: x.quantile(L.tensor([0.5])), A)
case("quantile-interpolation", lambda L, x: x.quantile(0.5, interpolation="cubic"), A)
case("quantile-empty", lambda L: L.tensor([]).nanquantile(0.5))
case("quantile-list", lambda L, x: x.quantile([0.5]), A)
# histograms, bincount, bucketize
case("histc", lambda L, x: L.histc(x, bins=4, min=-2, max=3), A)
case("histc-default-range", lambda L, x: x.histc(5), A32)
case("histc-one-value", lambda L: L.histc(L.tensor([1.0, 1.0, 1.0]), bins=4))
case("histc-int", lambda L, x: L.histc(x, 4), I)
case("histc-min-above-max", lambda L, x: x.histc(4, 3, 0), A)
case("histc-no-bins", lambda L, x: x.histc(0), A)
case("histc-nan", lambda L, x: x.histc(3), NANS)
case("histogram", lambda L, x: L.histogram(x, 4), A)
case("histogram-range-weight-density", lambda L, x: x.histogram(
    3, range=(-1.0, 2.0), weight=L.ones(3, 4, dtype=L.float64) * 2, density=True), A)
case("histogram-edges", lambda L, x: L.histogram(x, L.tensor([-2.0, 0.0, 0.5, 3.0],
                                                            dtype=L.float64)), A)
case("histogram-f32-detached", lambda L, x: L.histogram(x.detach(), bins=2), A32)
# makemore's activation statistics: torch.histogram(t, density=True) of a layer's output
ACTS = Leaf(np.tanh(np.sin(np.arange(600) * 0.37) * 3).reshape(20, 30).tolist(), "float32")
EDGY = Leaf((np.arange(-40, 41) / 8).tolist(), "float32")  # values on the bin edges
case("histogram-makemore", lambda L, x: L.histogram(x * 2 + 0.3, density=True), ACTS)
case("histogram-on-edges", lambda L, x: x.histogram(7, range=(-3.0, 2.0)), EDGY)
case("histc-on-edges", lambda L, x: x.histc(7, -3, 2), EDGY)
case("histc-float64-on-edges", lambda L, x: x.double().histc(13, -2, 3), EDGY)
case("histogram-int", lambda L, x: L.histogram(x, 2), I)
case("histogram-bad-range", lambda L, x: x.histogram(2, range=(3.0, 1.0)), A)
case("bincount", lambda L, i: L.bincount(i, minlength=7), IDX)
case("bincount-weights", lambda L, i, w: L.bincount(i, w), IDX, V)
case("bincount-int-weights", lambda L, i: i.bincount(L.tensor([1, 2, 3, 4, 5])), IDX)
case("bincount-f32-weights", lambda L, i: i.bincount(L.ones(5) / 3), IDX)
case("bincount-negative", lambda L: L.bincount(L.tensor([0, -1])))
case("bincount-float", lambda L, x: L.bincount(x), V)
case("bincount-weights-length", lambda L, i: i.bincount(L.ones(2)), IDX)
case("bincount-minlength", lambda L, i: i.bincount(minlength=-1), IDX)
case("bucketize", lambda L, x: L.bucketize(x, L.tensor([-1.0, 0.0, 1.0], dtype=L.float64)), A)
case("bucketize-right-int32", lambda L, x: L.bucketize(
    x, L.tensor([-1.0, 0.0, 1.0, 3.0], dtype=L.float64), out_int32=True, right=True), A)
case("bucketize-nan", lambda L, x: L.bucketize(x, L.tensor([0.0, 1.0], dtype=L.float64)),
     NANS)
case("bucketize-number", lambda L: L.bucketize(4, L.tensor([1.0, 3.0, 5.0])))
case("bucketize-2d-boundaries", lambda L, x: L.bucketize(x, x), A)


@pytest.mark.parametrize("fn, leaves, version", CASES)
def test_statistics_match_torch(fn, leaves, version):
    compare(fn, *leaves, version=version)


@pytest.mark.parametrize("f", [
    lambda x: (x.median(),), lambda x: (x.nanmedian(),),
    lambda x: (x.median(1).values,), lambda x: (symgrad.nanmedian(x, 0, True).values,),
    lambda x: (x.quantile(0.3),), lambda x: (x.quantile(0.7, dim=0, interpolation="midpoint"),),
    lambda x: (x.nanquantile(symgrad.tensor([0.2, 0.9], dtype=symgrad.float64), dim=1),),
], ids=["median", "nanmedian", "median-dim", "nanmedian-dim", "quantile", "quantile-midpoint",
        "nanquantile-q"])
def test_gradients_to_second_order(f):
    check_grads(f, [np.array([[0.5, -1.25, 2.0], [1.5, 0.3, -0.75], [-2.0, 1.1, 0.1]])])


def test_gradient_through_q():
    def f(x, q):
        return (x.quantile(q, dim=0),)
    check_grads(f, [np.array([[0.5, -1.25], [1.5, 0.3], [-2.0, 1.1]]), np.array([0.3, 0.8])])
