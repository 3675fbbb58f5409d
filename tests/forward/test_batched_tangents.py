"""Batched tangents (``jacfwd``'s one pass): every op of the table against one pass per
column.

``symgrad.func.jacfwd`` pushes all the basis tangents through one forward-mode pass, a
row each (``symgrad.func.tangents``).  For each op of the table (its smallest example and
its smallest of the most dimensions, float64) the Jacobian with respect to all its
differentiable inputs, so computed, must equal the columns of one plain forward-mode pass
each (``forward_ad``, itself checked against finite differences and the VJP in
``test_jvp_table``), and the batched pass must not give up (``NotBatchable``) except for
the ops that write in place.  Then ``jacfwd`` itself against ``torch.func`` where it
composes: nested (``jacfwd(jacfwd)``, ``hessian``), several inputs, ``has_aux``, edge
cases, and the cases that fall back to one pass per column (an in-place op, a custom
``Function``'s ``jvp``), with the number of passes.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import symgrad
import symgrad.autograd.forward_ad as fwAD
from symgrad.func import forward as F
from symgrad.func.batched import NotBatchable
from symgrad.func.pytree import tree_flatten
from symgrad.ops.jvp import jvp_of

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "ops"))
from test_op_table import CASES as ALL_CASES, _call, _sample  # noqa: E402

torch = pytest.importorskip("torch")


def _chosen(cases) -> list:
    """Each op's smallest example, and its smallest with the most dimensions (the batched
    rules shift dimensions: 0-d examples alone would not reach them)."""
    smallest: dict = {}
    widest: dict = {}
    for c in cases:
        key = c.op.key
        if key not in smallest or c.size < smallest[key].size:
            smallest[key] = c
        rank = max((len(s) for s in c.shapes), default=0)
        best = widest.get(key)
        if best is None or (rank, -c.size) > (max((len(s) for s in best.shapes), default=0),
                                              -best.size):
            widest[key] = c
    return list(smallest.values()) + [c for k, c in widest.items() if c is not smallest[k]]


# (not the ops whose forward mode PyTorch does not implement, cdist: their JVP raises)
CASES = [c for c in _chosen(ALL_CASES)
         if any(c.differentiable(i) for i in range(len(c.shapes)))
         and not getattr(jvp_of(c.op), "unsupported", None)]


def _tensors(case, arrays):
    return [symgrad.tensor(a) if case.is_bool(i) else symgrad.tensor(a, dtype=symgrad.float64)
            for i, a in enumerate(arrays)]


def _columns(case, values, where: list) -> np.ndarray:
    """The Jacobian (columns, *out.shape): one forward-mode pass per column."""
    sizes = [int(np.size(values[i])) for i in where]
    cols = []
    for k, i in enumerate(where):
        for at in range(sizes[k]):
            with fwAD.dual_level():
                args = _tensors(case, values)
                v = np.zeros(np.shape(values[i]))
                v.reshape(-1)[at] = 1
                args[i] = fwAD.make_dual(args[i], symgrad.tensor(v, dtype=symgrad.float64))
                out = _call(case, args)
                t = fwAD.unpack_dual(out).tangent
                cols.append(np.zeros(out.shape) if t is None else t.numpy().copy())
    return np.stack(cols)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_batched_tangents_equal_one_pass_per_column(case):
    values = _sample(case, np.random.default_rng(0))
    where = [i for i in range(len(values)) if case.differentiable(i)]
    base = _tensors(case, values)

    def f(*chosen):
        args = list(base)
        for i, p in zip(where, chosen):
            args[i] = p
        return _call(case, args)
    flat_p = [base[i] for i in where]
    spec = tree_flatten(tuple(flat_p))[1]
    try:
        _, out_t, _, _ = F._run_batched(f, flat_p, spec, lambda a: a, False)
    except NotBatchable:
        assert case.op.key.endswith("_") or "inplace" in case.op.key or case.op.key in (
            "index_put_", "zero", "fill2", "fill3", "copy"), case.op.key
        return
    got = out_t[0].detach().numpy()
    expected = _columns(case, values, where)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)


def _both(build):
    """``build(lib)`` with symgrad and with torch: the results as numpy arrays."""
    def arrays(x):
        if isinstance(x, (tuple, list)):
            return [a for i in x for a in arrays(i)]
        return [x.detach().numpy()]
    return arrays(build(symgrad)), arrays(build(torch))


def _inputs(lib, *shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [lib.tensor(rng.standard_normal(s), dtype=lib.float64) for s in shapes]


@pytest.mark.parametrize("name", ["jacfwd_jacfwd", "hessian", "argnums", "has_aux",
                                  "jacfwd_of_jvp", "matrix_input"])
def test_jacfwd_compositions_against_torch(name):
    def f(w, b, x):
        return (x @ w.T + b).tanh() * x.sum()

    def build(lib):
        fn = lib.func
        w, b, x = _inputs(lib, (3, 4), (3,), (4,))
        if name == "jacfwd_jacfwd":
            return fn.jacfwd(fn.jacfwd(f, argnums=2), argnums=2)(w, b, x)
        if name == "hessian":
            return fn.hessian(lambda w, b, x: f(w, b, x).sum(), argnums=(0, 2))(w, b, x)
        if name == "argnums":
            return list(fn.jacfwd(f, argnums=(0, 1, 2))(w, b, x))
        if name == "has_aux":
            jac, aux = fn.jacfwd(lambda x: (f(w, b, x), x.cos()), has_aux=True)(x)
            return [jac, aux]
        if name == "jacfwd_of_jvp":
            return fn.jacfwd(lambda x: fn.jvp(lambda y: f(w, b, y), (x,), (x.sin(),))[1])(x)
        return fn.jacfwd(lambda w: f(w, b, x))(w)
    got, expected = _both(build)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert np.shape(g) == np.shape(e)
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)


class _Cube(symgrad.autograd.Function):
    @staticmethod
    def forward(x):
        return x ** 3

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_forward(inputs[0])

    @staticmethod
    def jvp(ctx, t):
        (x,) = ctx.saved_tensors
        return 3 * x ** 2 * t


def _in_place(x):
    y = x * 2
    y.add_(x.sin())
    return y


@pytest.mark.parametrize("fn, expected", [
    (_in_place, lambda x: np.diag(2 + np.cos(x))),
    (_Cube.apply, lambda x: np.diag(3 * x ** 2)),
], ids=["in-place", "custom-Function"])
def test_in_place_falls_back_to_one_pass_per_column(fn, expected, monkeypatch):
    calls = []
    real = F._run

    def counting(*a, **k):
        calls.append(1)
        return real(*a, **k)
    monkeypatch.setattr(F, "_run", counting)
    x = np.array([0.5, 1.0, 2.0])
    got = symgrad.func.jacfwd(fn)(symgrad.tensor(x, dtype=symgrad.float64))
    np.testing.assert_allclose(got.numpy(), expected(x), rtol=1e-12)
    assert len(calls) == 3  # one plain pass per column after the batched pass gave up


def test_one_pass_for_all_columns(monkeypatch):
    """Bounded work: the tall function's 16 columns in one forward pass (no plain pass)."""
    calls = []
    monkeypatch.setattr(F, "_run", lambda *a, **k: calls.append(1))
    w, b, x = _inputs(symgrad, (64, 16), (64,), (16,))
    jac = symgrad.func.jacfwd(lambda x: symgrad.nn.functional.linear(x, w, b).tanh())(x)
    assert jac.shape == (64, 16) and not calls
    y = (x @ w.T + b).tanh()
    np.testing.assert_allclose(jac.numpy(), (1 - y.numpy() ** 2)[:, None] * w.numpy(),
                               rtol=1e-12)


def test_jacobian_forward_mode_vectorized_against_torch():
    def build(lib):
        x, y = _inputs(lib, (3,), (2, 3), seed=3)
        return list(lib.autograd.functional.jacobian(
            lambda a, b: (a * b).exp().sum(0), (x, y), vectorize=True,
            strategy="forward-mode"))
    got, expected = _both(build)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-12)


EDGES = {
    "identity": lambda L: L.func.jacfwd(lambda x: x)(L.tensor([1., 2.])),
    "constant": lambda L: L.func.jacfwd(lambda x: L.ones(3))(L.tensor([1., 2.])),
    "zero_dim": lambda L: L.func.jacfwd(lambda x: x.sin() * 2)(L.tensor(0.5)),
    "zero_dim_one_pass_per_column": lambda L: L.func.jacfwd(
        lambda x: x.sin() * 2, randomness="different")(L.tensor(0.5)),
    "empty": lambda L: L.func.jacfwd(lambda x: x * 2)(L.zeros(1, 0)),
    "integer_input": lambda L: L.func.jacfwd(lambda x: x * 2)(L.tensor([1, 2])),
    "view_output": lambda L: L.func.jacfwd(lambda x: x.view(2, 2).t())(L.arange(4.)),
    "slices": lambda L: L.func.jacfwd(lambda x: x[1:] * x[:-1])(L.arange(4.)),
    "cat": lambda L: L.func.jacfwd(lambda x: L.cat([x, x ** 2]))(L.arange(3.)),
    "softmax": lambda L: L.func.jacfwd(lambda x: L.softmax(x, 0))(L.arange(3.)),
    "tuple_output": lambda L: L.func.jacfwd(lambda x: (x.exp(), x.sum()))(L.arange(2.)),
    "dict_input": lambda L: L.func.jacfwd(lambda d: d["a"] * d["b"])(
        {"a": L.arange(2.), "b": L.ones(2)}),
    "random_error": lambda L: L.func.jacfwd(lambda x: x * L.rand(()))(L.arange(2.)),
    "where": lambda L: L.func.jacfwd(lambda x: L.where(x > 1, x, x ** 2))(L.arange(3.)),
    "max_dim": lambda L: L.func.jacfwd(lambda x: x.max(1).values)(
        L.tensor([[1., 3.], [4., 2.]])),
    "conv1d": lambda L: L.func.jacfwd(lambda x: L.nn.functional.conv1d(x, L.ones(1, 1, 2)))(
        L.arange(4.).view(1, 1, 4)),
}


def _flat(r) -> list:
    if isinstance(r, dict):
        r = list(r.values())
    if isinstance(r, (tuple, list)):
        return [a for x in r for a in _flat(x)]
    return [r.detach().numpy().tolist(), list(r.shape), str(r.dtype)]


@pytest.mark.parametrize("name", sorted(EDGES))
def test_jacfwd_edge_cases_against_torch(name):
    def outcome(lib):
        try:
            return _flat(EDGES[name](lib))
        except Exception as e:  # (the oracle says which errors are expected)
            return [type(e).__name__, str(e)]
    got, want = outcome(symgrad), outcome(torch)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if isinstance(w, list) and w and isinstance(w[0], (float, list)):
            np.testing.assert_allclose(np.asarray(g, float), np.asarray(w, float), rtol=1e-6)
        else:
            assert g == w


def test_jacobian_forward_mode_keeps_the_graph_as_torch():
    """``jacobian(strategy="forward-mode")`` (one pass) and ``hessian(...,
    outer_jacobian_strategy="forward-mode")``: results differentiable where the inputs or
    the function's tensors require grad, as PyTorch's vmapped jvp leaves them."""
    def facts(lib):
        x = lib.tensor([0.5, 1.0], requires_grad=True)
        y = lib.tensor([0.5, 1.0])
        w = lib.tensor([1., 2.], requires_grad=True)
        jac = lib.autograd.functional.jacobian
        j1 = jac(lambda x: x ** 2, x, vectorize=True, strategy="forward-mode")
        j2 = jac(lambda x: x ** 2, y, vectorize=True, strategy="forward-mode")
        j3 = jac(lambda x: x * w, y, vectorize=True, strategy="forward-mode")
        h = lib.autograd.functional.hessian(lambda x: (x.sin() * x.prod()).sum(), y,
                                            vectorize=True,
                                            outer_jacobian_strategy="forward-mode")
        (j1.sum() + j3.sum()).backward()
        return (j1.requires_grad, j2.requires_grad, j3.requires_grad, h.requires_grad,
                x.grad.tolist(), w.grad.tolist(), h.detach().numpy().round(6).tolist())
    assert facts(symgrad) == facts(torch)
