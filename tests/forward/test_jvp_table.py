"""Every differentiable op of the table, its JVP (forward mode) checked.

Driven by the op table's example sampler (``tests/ops/test_op_table.py``: every op with a
gradient rule, inputs inside its domain, away from kinks and ties), in float64, for each
example and a random direction ``v``:

1. ``J v`` from ``symgrad.autograd.forward_ad`` against central finite differences;
2. ``<J v, u> = <v, Jᵀ u>`` against the VJP (reverse mode) for a random ``u``;
3. forward-over-reverse: the tangent of the VJP ``Jᵀ u`` computed with ``create_graph``
   inside the dual level, against central differences of the VJP along ``v`` (second
   order);
4. forward-over-forward: tangents of tangents in two nested levels, against central
   differences of the JVP (second order).

And the record: every op says how its JVP is had (``symgrad.ops.jvp.kind``), and the ops
left to the transposed gradient rule are the ones listed here.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import symgrad
import symgrad.autograd.forward_ad as fwAD
from symgrad import ops
from symgrad.ops import jvp as J

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "ops"))
from test_op_table import CASES as ALL_CASES, FIRST_ORDER_ONLY, _call, _sample  # noqa: E402

EPS = 1e-6


def _some(cases, per_op: int = 3) -> list:
    """Each op's ``per_op`` smallest examples, as varied as they come (bounded work)."""
    by_op: dict = {}
    for c in cases:
        by_op.setdefault(c.op.key, []).append(c)
    chosen = []
    for group in by_op.values():
        group = sorted(group, key=lambda c: c.size)
        step = max(len(group) // per_op, 1)
        chosen.extend(group[::step][:per_op])
    return chosen


# (ops whose forward mode PyTorch does not implement, cdist: their JVP raises its error)
CASES = [c for c in _some(ALL_CASES, 2)
         if not getattr(J.jvp_of(c.op), "unsupported", None)]

# Ops with no JVP of their own: forward mode transposes their gradient rule (correct where
# the rule is, at the cost of a backward pass; see symgrad.api.forward.transposed).
TRANSPOSED = {"mse_loss_backward", "smooth_l1_loss_backward", "huber_loss_backward",
              "binary_cross_entropy_backward", "numel", "cumprod",
              # (ops of other issues, added meanwhile: convolution, pooling, normalisation,
              # medians and histograms)
              "convolution", "convolution_backward_input", "convolution_backward_weight",
              "convolution_backward_bias", "max_pool2d_with_indices",
              "max_pool2d_with_indices_backward", "avg_pool2d", "avg_pool2d_backward",
              "_adaptive_avg_pool2d", "_adaptive_avg_pool2d_backward", "native_batch_norm",
              "native_group_norm", "median", "median1", "nanmedian", "nanmedian1",
              "unsqueeze_1", "transpose_1", "histogram", "bincount1"}


def _tensors(case, arrays, tangents=None):
    out = []
    for i, a in enumerate(arrays):
        t = symgrad.tensor(a) if case.is_bool(i) else symgrad.tensor(a, dtype=symgrad.float64)
        if tangents is not None and tangents[i] is not None:
            t = fwAD.make_dual(t, symgrad.tensor(tangents[i], dtype=symgrad.float64))
        out.append(t)
    return out


def _direction(case, values, rng):
    return [rng.standard_normal(np.shape(v)) if case.differentiable(i) else None
            for i, v in enumerate(values)]


def _moved(values, vs, step):
    return [a + step * v if v is not None else a for a, v in zip(values, vs)]


def _value(case, arrays):
    return _call(case, _tensors(case, arrays)).detach().numpy().copy()


def _jvp(case, values, vs):
    with fwAD.dual_level():
        out = _call(case, _tensors(case, values, vs))
        t = fwAD.unpack_dual(out).tangent
        return out.detach().numpy().copy(), None if t is None else t.detach().numpy().copy()


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_jvp_against_finite_differences_and_vjp(case):
    rng = np.random.default_rng(0)
    values = _sample(case, rng)
    vs = _direction(case, values, rng)
    primal, tangent = _jvp(case, values, vs)
    np.testing.assert_allclose(primal, _value(case, values), rtol=1e-12, atol=0)
    fd = (_value(case, _moved(values, vs, EPS)) - _value(case, _moved(values, vs, -EPS))) / (
        2 * EPS)
    if tangent is None:  # no tangent: the op does not move along v
        np.testing.assert_allclose(fd, 0, atol=1e-6)
        return
    assert tangent.shape == fd.shape
    np.testing.assert_allclose(tangent, fd, rtol=1e-5, atol=1e-6)
    # <J v, u> = <v, Jᵀ u>
    u = rng.standard_normal(np.shape(primal))
    leaves = [t.requires_grad_(case.differentiable(i)) if not case.is_bool(i) else t
              for i, t in enumerate(_tensors(case, values))]
    out = _call(case, leaves)
    wrt = [t for i, t in enumerate(leaves) if case.differentiable(i)]
    grads = symgrad.autograd.grad(out, wrt, symgrad.tensor(u), allow_unused=True)
    lhs = float(np.sum(tangent * u))
    rhs = sum(float(np.sum(g.numpy() * v)) for g, v in
              zip(grads, [v for i, v in enumerate(vs) if case.differentiable(i)])
              if g is not None)
    assert lhs == pytest.approx(rhs, rel=1e-9, abs=1e-9)


SECOND_ORDER = [c for c in CASES if c.sympy_second_order and c.op.key not in FIRST_ORDER_ONLY]


@pytest.mark.parametrize("case", SECOND_ORDER, ids=[c.id for c in SECOND_ORDER])
def test_forward_over_reverse_second_order(case):
    """The tangent of the VJP (Hessian-vector products of <u, f>) against differences."""
    rng = np.random.default_rng(1)
    values = _sample(case, rng)
    vs = _direction(case, values, rng)
    u = rng.standard_normal(np.shape(_value(case, values)))
    with fwAD.dual_level():
        leaves = _tensors(case, values)
        duals = []
        for i, t in enumerate(leaves):
            if case.differentiable(i):
                t.requires_grad_(True)
                t = fwAD.make_dual(t, symgrad.tensor(vs[i], dtype=symgrad.float64))
            duals.append(t)
        out = _call(case, duals)
        wrt = [t for i, t in enumerate(leaves) if case.differentiable(i)]
        if not out.requires_grad:
            return
        grads = symgrad.autograd.grad(out, wrt, symgrad.tensor(u), allow_unused=True,
                                      create_graph=True)
        tangents = [None if g is None else fwAD.unpack_dual(g).tangent for g in grads]
        tangents = [None if t is None else t.detach().numpy().copy() for t in tangents]

    def vjp_at(arrays):
        leaves = _tensors(case, arrays)
        wrt = [t.requires_grad_(True) for i, t in enumerate(leaves) if case.differentiable(i)]
        got = symgrad.autograd.grad(_call(case, leaves), wrt, symgrad.tensor(u),
                                    allow_unused=True)
        return [np.zeros(w.shape) if g is None else g.numpy() for g, w in zip(got, wrt)]
    plus, minus = vjp_at(_moved(values, vs, EPS)), vjp_at(_moved(values, vs, -EPS))
    for t, p, m in zip(tangents, plus, minus):
        fd = (p - m) / (2 * EPS)
        if t is None:
            np.testing.assert_allclose(fd, 0, atol=1e-5)
        else:
            np.testing.assert_allclose(t, fd, rtol=1e-4, atol=1e-5)


def test_every_op_has_a_jvp_or_is_listed():
    """The ops left to the transposed gradient rule are exactly those listed above."""
    differentiable = [op for op in ops.OPS.values() if op.grads is not None]
    left = {op.key for op in differentiable if J.jvp_of(op) is None}
    assert left <= TRANSPOSED
    assert all(J.kind(op) in (J.ELEMENT_WISE, J.LINEAR, J.MULTILINEAR, J.REDUCTION,
                              J.EXPLICIT, None)
               for op in differentiable)


def test_derivations_follow_the_tables():
    from symgrad.ops.tables import ELEMENTWISE, LINEAR
    assert all(J.kind(op) == J.ELEMENT_WISE for op in ELEMENTWISE)
    assert all(J.kind(op) == J.LINEAR for op in LINEAR)
    assert J.kind(ops.MM) == J.MULTILINEAR and J.kind(ops.MUL) == J.ELEMENT_WISE


@pytest.mark.parametrize("case", SECOND_ORDER, ids=[c.id for c in SECOND_ORDER])
def test_forward_over_forward_second_order(case):
    """Tangents of tangents (two nested levels, as symgrad.func's jvp of jvp opens them):
    the second directional derivative against central differences of the JVP."""
    rng = np.random.default_rng(2)
    values = _sample(case, rng)
    vs = _direction(case, values, rng)
    outer = fwAD._enter_level()
    inner = fwAD._enter_level()
    try:
        args = []
        for i, a in enumerate(values):
            t = _tensors(case, [a])[0] if not case.is_bool(i) else symgrad.tensor(a)
            if vs[i] is not None:
                v = symgrad.tensor(vs[i], dtype=symgrad.float64)
                t = fwAD.make_dual(fwAD.make_dual(t, v, level=outer), v.clone(), level=inner)
            args.append(t)
        t = fwAD.unpack_dual(_call(case, args), level=inner).tangent
        second = None if t is None else fwAD.unpack_dual(t, level=outer).tangent
        second = None if second is None else second.detach().numpy().copy()
    finally:
        fwAD._exit_level(inner)
        fwAD._exit_level(outer)
    plus = _jvp(case, _moved(values, vs, EPS), vs)[1]
    minus = _jvp(case, _moved(values, vs, -EPS), vs)[1]
    if plus is None or minus is None:
        assert second is None or np.allclose(second, 0, atol=1e-5)
        return
    fd = (plus - minus) / (2 * EPS)
    if second is None:
        np.testing.assert_allclose(fd, 0, atol=1e-5)
    else:
        np.testing.assert_allclose(second, fd, rtol=1e-4, atol=1e-5)
