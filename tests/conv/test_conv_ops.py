"""The convolution, pooling and normalisation ops of the table, each checked as the op
table's generic test checks every op (``tests/ops/test_op_table.py``): the VJP and the VJP
of the VJP (``create_graph=True``) against central finite differences in float64, and
against ``sympy.diff`` of the op's forward run on symbols (first order on every example,
Hessian-vector products on each op's smallest).

The generic sampler cannot make their inputs (shapes must fit kernels, strides, groups),
so the examples are given here, per op, and :func:`test_every_op_of_the_families_has_examples`
keeps them in step with the table: a new op in ``symgrad.ops.convolution``, ``pooling`` or
``normalization`` must come with an example.
"""
from __future__ import annotations

import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

import symgrad
from symgrad import ops

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "ops"))
import test_op_table  # noqa: E402  (the op table's checks, shared)

FAMILIES = (ops.convolution, ops.pooling, ops.normalization)
FAMILY_OPS = [getattr(family, name) for family in FAMILIES for name in family.__all__
              if isinstance(getattr(family, name), ops.Op)]


def _out_shape(op, shapes, attrs) -> tuple:
    return np.shape(op.forward(*[np.zeros(s) for s in shapes], *attrs))


def _conv(x, w, stride=(1, 1), padding=(0, 0), dilation=None, groups=1, output_padding=None):
    transposed = output_padding is not None
    attrs = (stride, padding, dilation or (1,) * len(stride), transposed,
             output_padding or (0,) * len(stride), groups)
    shapes = (x, w, (w[1] * groups if transposed else w[0],))
    g = _out_shape(ops.CONVOLUTION, shapes, attrs)
    return [(ops.CONVOLUTION, shapes, attrs)] + [
        (op, (g, x, w), attrs) for op in (ops.CONVOLUTION_BACKWARD_INPUT,
                                          ops.CONVOLUTION_BACKWARD_WEIGHT,
                                          ops.CONVOLUTION_BACKWARD_BIAS)] + [
        # the three in one node (output_mask: all of them; input and bias only, in 1-d)
        (ops.CONVOLUTION_BACKWARD, (g, x, w), attrs + (mask,))
        for mask in ((True, True, True), (True, False, True))][
            :2 if len(x) == 3 and not transposed else 1]


def _max_pool(x, *attrs):
    g = _out_shape(ops.MAX_POOL2D_WITH_INDICES, (x,), attrs)
    values = np.random.default_rng(1).permutation(int(np.prod(x))).reshape(x).astype(float)
    indices = ops.pooling.max_pool2d_indices(values, *attrs)
    return [(ops.MAX_POOL2D_WITH_INDICES, (x,), attrs),
            (ops.MAX_POOL2D_WITH_INDICES_BACKWARD, (g, x), attrs + (indices,))]


def _avg_pool(x, *attrs):
    g = _out_shape(ops.AVG_POOL2D, (x,), attrs)
    return [(ops.AVG_POOL2D, (x,), attrs), (ops.AVG_POOL2D_BACKWARD, (g, x), attrs)]


def _adaptive(x, size):
    return [(ops.ADAPTIVE_AVG_POOL2D, (x,), (size,)),
            (ops.ADAPTIVE_AVG_POOL2D_BACKWARD, ((x[0], x[1]) + size, x), ())]


def _pad(mode, x, padding):
    nd = len(padding) // 2
    op = ops.PADS[mode, nd]
    g = _out_shape(op, (x,), (padding,))
    backward = getattr(ops, op.key.upper() + "_BACKWARD")
    return [(op, (x,), (padding,)), (backward, (g, x), (padding,))]


_RUNNING = (symgrad.tensor([0.3, -0.2, 0.5], dtype=symgrad.float64),
            symgrad.tensor([0.8, 1.5, 0.6], dtype=symgrad.float64))

_RUNNING_2 = (symgrad.tensor([0.3, -0.2], dtype=symgrad.float64),
              symgrad.tensor([0.8, 1.5], dtype=symgrad.float64))


class _Case(test_op_table.Case):
    """An example; an input whose gradient PyTorch does not implement (batch norm's
    backward in save_mean and save_invstd) is not differentiated."""

    def differentiable(self, i: int) -> bool:
        return super().differentiable(i) and not hasattr(self.op.grads[i], "not_implemented")


EXAMPLES = (
    _conv((1, 2, 5, 4), (2, 1, 2, 2), stride=(2, 1), padding=(1, 0), dilation=(1, 2),
          groups=2)
    + _conv((1, 2, 4, 4), (2, 2, 3, 3), padding=(0,))  # padding='valid', saved as (0,)
    + _conv((2, 2, 5), (3, 2, 2), stride=(2,), padding=(1,))  # conv1d
    + _conv((1, 2, 3), (2, 1, 2), padding=(1,), groups=2)  # small enough for SymPy
    # transposed (conv_transpose2d), an output padding below the stride and below the
    # dilation
    + _conv((1, 2, 3, 2), (2, 1, 2, 2), stride=(2, 1), padding=(1, 0), dilation=(1, 2),
            groups=2, output_padding=(1, 1))
    + _conv((1, 1, 3), (1, 2, 2), dilation=(2,), output_padding=(1,))
    + _max_pool((1, 2, 4, 4), (2, 2), (), (0, 0), (1, 1), False)
    + _max_pool((1, 1, 5, 5), (3, 2), (2, 1), (1, 1), (1, 2), True)
    + _max_pool((1, 1, 3, 2), (2, 2), (1, 1), (0, 1), (1, 1), False)
    + _avg_pool((1, 2, 4, 4), (2, 2), (), (0, 0), False, True, None)
    + _avg_pool((1, 1, 5, 5), (3, 3), (2, 2), (1, 1), True, False, None)
    + _avg_pool((1, 1, 4, 5), (2, 3), (1, 2), (1, 1), False, True, 3)
    + _adaptive((1, 2, 5, 4), (3, 2))
    + _pad("reflect", (1, 2, 4), (2, 3)) + _pad("replicate", (2, 3), (-1, 2))
    + _pad("reflect", (1, 3, 4), (1, 0, 2, -1)) + _pad("replicate", (1, 2, 3, 2), (1, 2, 0, 1))
    + _pad("reflect", (1, 2, 3, 2), (1, 1, 1, 0, 0, 2))
    + _pad("replicate", (2, 2, 2), (1, 0, 0, 1, 2, 1))
    + [(ops.NATIVE_BATCH_NORM, ((3, 3, 2), (3,), (3,)), (None, None, True, 0.1, 1e-5)),
       (ops.NATIVE_BATCH_NORM, ((3, 3), (3,), (3,)), _RUNNING + (False, 0.1, 1e-5)),
       (ops.NATIVE_BATCH_NORM, ((3, 1), (1,), (1,)), (None, None, True, 0.1, 1e-5)),
       (ops.NATIVE_BATCH_NORM_BACKWARD, ((3, 3, 2), (3, 3, 2), (3,), (3,), (3,)),
        (None, None, True, 1e-5, (True, True, True))),
       (ops.NATIVE_BATCH_NORM_BACKWARD, ((3, 2), (3, 2), (2,), (0,), (0,)),
        _RUNNING_2 + (False, 1e-5, (True, True, False))),
       (ops.NATIVE_BATCH_NORM_BACKWARD, ((3, 2, 2), (3, 2, 2), (2,), (2,), (2,)),
        (None, None, True, 1e-5, (True, False, True))),
       (ops.NATIVE_GROUP_NORM, ((2, 4, 3), (4,), (4,)), (2, 4, 3, 2, 1e-5, (True,) * 3)),
       (ops.NATIVE_GROUP_NORM, ((1, 2, 2), (2,), (2,)), (1, 2, 2, 1, 1e-5, (True,) * 3))]
)


# (the several-output ops: their outputs' ops are checked against SymPy one by one)
NO_SYMPY = {ops.CONVOLUTION_BACKWARD, ops.NATIVE_BATCH_NORM_BACKWARD, ops.NATIVE_GROUP_NORM}
SYMPY_FIRST_ORDER = {ops.MAX_POOL2D_WITH_INDICES, ops.NATIVE_BATCH_NORM}


def _cases() -> list:
    cases = []
    for op, shapes, attrs in EXAMPLES:
        cases.append(_Case(op, tuple(shapes), tuple(attrs)))
    smallest = {}
    for c in cases:
        if c.op.key not in smallest or c.size < smallest[c.op.key].size:
            smallest[c.op.key] = c
    for c in cases:
        c.sympy_second_order = None  # no SymPy check
    for c in smallest.values():
        if c.op in NO_SYMPY:
            continue
        # (SymPy's second derivatives of Max and of a square root of a sum take a minute:
        # finite differences check those ops to second order on every example)
        c.sympy_second_order = c.op not in SYMPY_FIRST_ORDER
    return cases


CASES = _cases()


def test_every_op_of_the_families_has_examples():
    assert sorted({op.key for op in FAMILY_OPS} - {c.op.key for c in CASES}) == []
    assert {op.key for op in FAMILY_OPS} <= test_op_table.BY_HAND


def _values(case):
    rng = np.random.default_rng(zlib.crc32(case.id.encode()))
    return test_op_table._sample(case, rng), rng


@pytest.mark.parametrize("case", [pytest.param(c, id=f"{c.op.key}-{i}")
                                  for i, c in enumerate(CASES)])
def test_vjp_finite_differences(case):
    """The VJP and the VJP of the VJP (create_graph=True) against central differences."""
    values, rng = _values(case)
    diff_ix = [i for i in range(len(values)) if case.differentiable(i)]

    def f(*ts):
        args = list(values)
        for i, t in zip(diff_ix, ts):
            args[i] = t
        args = [symgrad.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
        out = test_op_table._call(case, args)
        return tuple(o for o in out if o is not None) if isinstance(out, tuple) else (out,)
    test_op_table.check_grads(f, [values[i] for i in diff_ix], order=2, rng=rng)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.op.key) for c in CASES
                                  if c.sympy_second_order is not None])
def test_vjp_sympy(case):
    """Each op's smallest example against sympy.diff of its forward run on symbols (SymPy's
    evaluation of large sums is slow: finite differences check the other examples)."""
    values, rng = _values(case)
    test_op_table._sympy_check(case, values, rng)


@pytest.mark.parametrize("case", [pytest.param(c, id=f"{c.op.key}-{i}")
                                  for i, c in enumerate(CASES)])
def test_jvp_finite_differences(case):
    """Forward mode: the tangent (the JVP registered beside the op) against central
    differences along a random direction, and <J v, u> = <v, Jᵀ u> against the VJP."""
    fw = symgrad.autograd.forward_ad
    values, rng = _values(case)
    vs = [rng.standard_normal(np.shape(a)) if case.differentiable(i) else None
          for i, a in enumerate(values)]

    def call(arrays, tangents=None, grad=False):
        args = []
        for i, a in enumerate(arrays):
            t = symgrad.tensor(a, dtype=symgrad.float64, requires_grad=grad and
                               case.differentiable(i))
            if tangents is not None and tangents[i] is not None:
                t = fw.make_dual(t, symgrad.tensor(tangents[i], dtype=symgrad.float64))
            args.append(t)
        out = test_op_table._call(case, args)
        if isinstance(out, tuple):  # several outputs: checked as one vector
            out = symgrad.cat([o.reshape(-1) for o in out if o is not None])
        return out, args

    with fw.dual_level():
        out, _ = call(values, vs)
        jv = fw.unpack_dual(out).tangent.detach().numpy()
    eps = 1e-6
    up = [a + eps * v if v is not None else a for a, v in zip(values, vs)]
    down = [a - eps * v if v is not None else a for a, v in zip(values, vs)]
    fd = (call(up)[0].detach().numpy() - call(down)[0].detach().numpy()) / (2 * eps)
    np.testing.assert_allclose(jv, fd, rtol=1e-5, atol=1e-6)
    u = rng.standard_normal(jv.shape)
    y, leaves = call(values, grad=True)
    diff = [t for i, t in enumerate(leaves) if case.differentiable(i)]
    grads = symgrad.autograd.grad(y, diff, symgrad.tensor(u), allow_unused=True)
    vjp = sum(float(np.sum(g.numpy() * v)) for g, v in
              zip(grads, [v for v in vs if v is not None]) if g is not None)
    assert abs(float(np.sum(jv * u)) - vjp) < 1e-8 * max(1.0, abs(vjp))
