"""Reductions and statistics against PyTorch 2.13: prod, var, std, logsumexp, amax, amin,
cumsum, cumprod, flip — values, dtypes, node names, saved attributes, first and second
derivatives (zeros in products included), argument forms and errors."""
from __future__ import annotations

import numpy as np
import pytest

import symgrad
from conftest import check_same, same_outcome

torch = pytest.importorskip("torch")

X = [[1.0, 2.0, 3.0], [4.0, 5.0, -6.0]]
ZEROS = [[1.0, 0.0, 1.0], [1.0, 1.0, 1.0]]

CALLS = {
    "prod": lambda L, x: x.prod(), "prod(1)": lambda L, x: x.prod(1),
    "prod(0, True)": lambda L, x: L.prod(x, 0, True),
    "prod dtype": lambda L, x: x.prod(dtype=L.float32),
    "var": lambda L, x: x.var(), "var(1)": lambda L, x: x.var(1),
    "var correction 0": lambda L, x: x.var(dim=1, correction=0, keepdim=True),
    "var(False)": lambda L, x: x.var(False), "var unbiased": lambda L, x: L.var(x, 0, False),
    "var keepdims": lambda L, x: x.var(1, keepdims=True),
    "std": lambda L, x: x.std(), "std(1, keepdim)": lambda L, x: x.std(1, keepdim=True),
    "std correction 2": lambda L, x: L.std(x, dim=(0, 1), correction=2),
    "logsumexp(1)": lambda L, x: x.logsumexp(1),
    "logsumexp((0, 1))": lambda L, x: L.logsumexp(x, (0, 1)),
    "logsumexp keepdim": lambda L, x: x.logsumexp(-1, keepdim=True),
    "cumsum(1)": lambda L, x: x.cumsum(1), "cumsum(0)": lambda L, x: L.cumsum(x, 0),
    "cumprod(1)": lambda L, x: x.cumprod(1), "cumprod(-2)": lambda L, x: L.cumprod(x, -2),
    "amax": lambda L, x: x.amax(), "amax(1)": lambda L, x: x.amax(1),
    "amin((0, 1), True)": lambda L, x: L.amin(x, (0, 1), True),
    "amax ties": lambda L, x: (x * 0 + 1).amax(1),
    "flip": lambda L, x: x.flip(0, 1), "flip list": lambda L, x: L.flip(x, [1]),
    "prod with a zero": lambda L, x: (x * L.tensor(ZEROS, dtype=L.float64)).prod(1),
    "prod with zeros": lambda L, x: (x * L.tensor(ZEROS, dtype=L.float64)).prod(),
    "cumprod with a zero": lambda L, x: (x * L.tensor(ZEROS, dtype=L.float64)).cumprod(1),
    "sum keepdims": lambda L, x: L.sum(x, 1, keepdims=True),
    "mean keepdims": lambda L, x: x.mean(0, keepdims=True),
}


def _run(name):
    def scenario(L):
        x = L.tensor(X, dtype=L.float64, requires_grad=True)
        y = CALLS[name](L, x)
        fn = y.grad_fn
        saved = {a: getattr(fn, a) for a in ("_saved_dim", "_saved_keepdim",
                                              "_saved_correction", "_saved_dims")
                 if hasattr(fn, a)}
        shapes = {a: tuple(getattr(fn, a).shape) for a in ("_saved_self", "_saved_result")
                  if hasattr(fn, a)}
        v = L.tensor(np.linspace(0.5, 1.5, y.numel()).reshape(tuple(y.shape)), dtype=y.dtype)
        g, = L.autograd.grad(y, x, v, create_graph=True)
        second = None
        if g.requires_grad:
            second, = L.autograd.grad((g * g).sum(), x, allow_unused=True)
        return [y, str(y.dtype), fn.name(), saved, shapes, g.detach(), second]
    return scenario


@pytest.mark.parametrize("name", list(CALLS))
def test_against_torch(name):
    # (prod in float32: the second derivative carries float32 rounding)
    check_same(_run(name), rtol=1e-6 if "dtype" in name else 1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["prod(1)", "var(1)", "std(1, keepdim)", "logsumexp(1)",
                                  "cumsum(1)", "cumprod(1)", "amax(1)", "flip"])
def test_graph_names(name):
    def names(L):
        x = L.tensor(X, dtype=L.float64, requires_grad=True)
        y = CALLS[name](L, x)
        return [y.grad_fn.name()] + [n.name() if n else None for n, _ in y.grad_fn.next_functions]
    assert names(symgrad) == names(torch)


DTYPES = [
    lambda L: L.tensor([1, 2, 3]).prod(), lambda L: L.tensor([1, 2]).cumsum(0),
    lambda L: L.tensor([1, 2]).cumprod(0), lambda L: L.tensor([1, 2]).logsumexp(0),
    lambda L: L.tensor([1, 2]).amax(), lambda L: L.tensor([True, False]).prod(),
    lambda L: L.tensor([1.0, 2.0], dtype=L.float32).var(),
    lambda L: L.tensor([[1.0, 2.0]]).std(correction=0),
    lambda L: L.tensor([3.0]).var(), lambda L: L.tensor(2.0).std(),
    lambda L: L.tensor([1.0, float("-inf")]).logsumexp(0),
    lambda L: L.tensor([float("-inf"), float("-inf")]).logsumexp(0),
    lambda L: L.tensor([1e3, 1e3]).logsumexp(0),
    lambda L: L.ones(2, 3).amax(dim=[0, 1]),
]


@pytest.mark.parametrize("scenario", DTYPES)
def test_values_and_dtypes(scenario):
    same_outcome(scenario, expect_error=False)


ERRORS = [
    lambda L: L.ones(2, 3).var(5), lambda L: L.tensor([1, 2]).var(),
    lambda L: L.tensor([1, 2]).std(0), lambda L: L.ones(2, 3).flip(0, 0),
    lambda L: L.ones(2, 3).amax((0, 0)), lambda L: L.ones(2, 3).logsumexp((1, -1)),
    lambda L: L.ones(2, 3).cumsum(2), lambda L: L.ones(2, 3).prod(3),
]


@pytest.mark.parametrize("scenario", ERRORS)
def test_errors(scenario):
    same_outcome(scenario)


def test_std_of_one_element_as_torch():
    """std of one element with correction 0 is 0, its gradient 0 and its second derivative
    nan, in both libraries (PyTorch's masked formula)."""
    def run(L):
        x = L.tensor(0.5, dtype=L.float64, requires_grad=True)
        v = L.tensor(1.0, dtype=L.float64, requires_grad=True)
        g, = L.autograd.grad(x.std(correction=0), x, v, create_graph=True)
        return [g, L.autograd.grad(g, v)[0]]
    check_same(run)
