"""The elementwise functions of the table against PyTorch 2.13, generated from the records.

For every op whose ``symgrad.<function>`` PyTorch also has (and every alias, ``arcsin``),
the same snippet runs in both libraries on leaves inside the op's domain and everything
``compare`` describes must agree: values, dtype, the graph (node names, ``_saved_*``
values, edges), the leaves' gradients and versions.  The in-place method of each op
(``x.asin_()``) is compared the same way on a non-leaf, and first-and-second derivatives
with ``create_graph=True``.  Integer and float32 operands, and ops PyTorch refuses for
some dtypes (``frac`` of int64), are compared by the errors too.
"""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import symgrad  # noqa: E402
from symgrad import ops  # noqa: E402
from test_ops_against_torch import Leaf, compare  # noqa: E402

_UNARY = [op for op in ops.OPS.values()
          if op.functions and op.arity == 1 and not op.attrs and op.grads is not None
          and hasattr(torch, op.function) and not op.composite]
_BINARY = [op for op in ops.OPS.values()
           if op.functions and op.arity == 2 and not op.attrs and op.grads is not None
           and op.broadcasts and hasattr(torch, op.function) and not op.composite
           and op.function not in ("where",)]


def _inside(op, shape=(2, 3), seed=0) -> np.ndarray:
    """Values strictly inside the op's domain, away from integers and half-integers
    (the kinks of rounding) and from ties."""
    lo, hi = op.domain
    lo = -2.0 if lo == -np.inf else lo
    hi = 2.0 if hi == np.inf else hi
    rng = np.random.default_rng(seed + len(op.key))
    x = lo + (hi - lo) * (0.1 + 0.8 * rng.random(shape))
    return np.round(x, 3) + 0.0123


def _names(ops_: list) -> list:
    return [pytest.param(op, name, id=name) for op in ops_ for name in op.functions]


@pytest.mark.parametrize("op, name", _names(_UNARY))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_unary_function(op, name, dtype):
    compare(lambda L, x: getattr(L, name)(x), Leaf(_inside(op).tolist(), dtype))
    compare(lambda L, x: getattr(x, name)(), Leaf(_inside(op, (), 1).tolist(), dtype))


@pytest.mark.parametrize("op, name", _names(_UNARY))
def test_unary_function_of_integers(op, name):
    lo, hi = op.domain
    values = [[1, 2], [3, 1]] if lo >= 0 else [[0, 1], [-1, 0]] if hi <= 1 else [[1, -2], [0, 3]]
    compare(lambda L, x: getattr(L, name)(x), Leaf(values, "int64", rg=False))


@pytest.mark.parametrize("op", [op for op in _UNARY if op.inplace or getattr(
                             ops.OPS.get(op.key + "1"), "inplace", None) == op.key + "_"],
                         ids=lambda op: op.key + "_")
def test_in_place_form(op):
    compare(lambda L, x: getattr(x * 1, op.key + "_")(), Leaf(_inside(op).tolist()))


@pytest.mark.parametrize("op", _UNARY, ids=lambda op: op.key)
def test_second_derivative(op):
    def second(L, x):
        y = getattr(L, op.function)(x).sum()
        g, = L.autograd.grad(y, x, create_graph=True)
        return L.autograd.grad(g.sum(), x, allow_unused=True)[0] if g.requires_grad else g
    # (versions aside: PyTorch's double-backward formulas end in place for some ops)
    compare(second, Leaf(_inside(op, (3,), 2).tolist()), backward=False, version=False)


@pytest.mark.parametrize("op, name", _names(_BINARY))
@pytest.mark.parametrize("shapes", [((2, 3), (2, 3)), ((2, 3), (3,)), ((), (2,))],
                         ids=["same", "broadcast", "0-d"])
def test_binary_function(op, name, shapes):
    a, b = (_inside(op, s, k) for k, s in enumerate(shapes))
    compare(lambda L, x, y: getattr(L, name)(x, y), Leaf(a.tolist()), Leaf(b.tolist()))
    if op.inplace and shapes[0] != ():
        compare(lambda L, x, y: getattr(x * 1, op.inplace)(y), Leaf(a.tolist()),
                Leaf(b.tolist()))


@pytest.mark.parametrize("fn", [
    lambda L, x, y: L.xlogy(x, 2.5),
    lambda L, x, y: L.xlogy(x, -1.0),
    lambda L, x, y: L.xlogy(2.0, y),
    lambda L, x, y: L.xlogy(x * 0, y - 2),   # 0 * log(<= 0): no gradient for self
    lambda L, x, y: (x * 1).xlogy_(y),
    lambda L, x, y: L.lerp(x, y, 0.25),
    lambda L, x, y: L.lerp(x, y, y / 4),
    lambda L, x, y: (x * 1).lerp_(y, 0.75),
    lambda L, x, y: L.round(x * 3, decimals=1),
    lambda L, x, y: (x * 3).round_(decimals=2),
    lambda L, x, y: x.square(),
    lambda L, x, y: L.square(y),
    lambda L, x, y: L.clamp_min(x, 0.5),
    lambda L, x, y: x.clamp_max(0.5),
    lambda L, x, y: (x * 1).clamp_min_(0.5),
    lambda L, x, y: L.arctan2(x, y),
    lambda L, x, y: L.fix(x * 3),
], ids=["xlogy-number-other", "xlogy-negative-other", "xlogy-number-self", "xlogy-zero",
        "xlogy_", "lerp", "lerp-tensor-weight", "lerp_", "round-decimals", "round_",
        "square", "square-fn", "clamp_min", "clamp_max", "clamp_min_", "arctan2", "fix"])
def test_operand_forms(fn):
    compare(fn, Leaf([[0.5, 1.25, 0.0], [2.0, 0.75, 1.5]]),
            Leaf([[1.5, 0.25, 2.5], [0.5, 3.0, 1.0]]))


def test_erfinv_is_exact_to_rounding():
    y = np.linspace(-0.999999, 0.999999, 2001)
    ours = symgrad.erfinv(symgrad.tensor(y, dtype=symgrad.float64)).numpy()
    np.testing.assert_allclose(ours, torch.erfinv(torch.tensor(y)).numpy(), rtol=1e-13,
                               atol=1e-15)
    edge = symgrad.tensor([-1.0, 1.0, 1.5, 0.0], dtype=symgrad.float64)
    assert np.array_equal(symgrad.erfinv(edge).numpy(), [-np.inf, np.inf, np.nan, 0.0],
                          equal_nan=True)
