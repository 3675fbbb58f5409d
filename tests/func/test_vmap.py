"""``vmap``: against ``torch.func.vmap`` (in_dims/out_dims pytrees, nesting, chunks,
randomness), and against a Python loop for every op of the table.

The op-table part is generated from :data:`test_op_table.CASES` (the smallest example of
each op, as tests/ops enumerates them): for each op,

* ``vmap`` of the op over a batch of three samples, with the batch at each input's first
  and last dimension, equals the loop ``stack([op(sample) for sample in batch])``;
* the point-wise ops' functions run without a loop (:func:`elementwise_op_of`) and still
  equal the loop;
* the batched backward pass (``vmap(vjp_fn)``, :mod:`symgrad.func.batched`) equals one
  ``vjp_fn`` call per cotangent, on numpy and recorded (``create_graph``).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import symgrad
from conftest import check_same, same_outcome  # noqa: E402
from symgrad import ops  # noqa: E402
from symgrad.func import batched, vmap  # noqa: E402
from symgrad.func.mapping import elementwise_op_of  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "ops"))
import test_op_table as table  # noqa: E402  (the op table's examples, shared)

pytest.importorskip("torch")

RNG = np.random.default_rng(3)
XB = RNG.standard_normal((3, 4))
YB = RNG.standard_normal((4, 3))
ZB = RNG.standard_normal((2, 3, 4))


def t(lib, a):
    return lib.tensor(a, dtype=lib.float64)


# --------------------------------------------------------------------------- vs torch
SCENARIOS = {
    "reduce": lambda lib: lib.func.vmap(lambda r: r.sum())(t(lib, XB)),
    "in_dims_1_out_dims_1": lambda lib: lib.func.vmap(lambda c: c.softmax(0), in_dims=1,
                                                      out_dims=1)(t(lib, XB)),
    "in_dims_negative": lambda lib: lib.func.vmap(lambda c: c.cumsum(0), in_dims=-1)(
        t(lib, ZB)),
    "in_dims_none": lambda lib: lib.func.vmap(lambda x, y: x @ y, in_dims=(0, None))(
        t(lib, XB), t(lib, YB)),
    "in_dims_nested": lambda lib: lib.func.vmap(
        lambda p, x: p["w"] * x + p["b"][0], in_dims=({"w": 0, "b": [None]}, 1))(
            {"w": t(lib, XB), "b": [t(lib, 2.0)]}, t(lib, YB)),
    "in_dims_prefix": lambda lib: lib.func.vmap(lambda p: p[0] + p[1].sum(), in_dims=(0,))(
        (t(lib, XB), t(lib, ZB[0]))),
    "out_dims_pytree": lambda lib: lib.func.vmap(
        lambda x: {"a": x.exp(), "b": (x.sum(), x.view(2, 2))},
        out_dims={"a": 1, "b": (0, 2)})(t(lib, XB)),
    "out_dims_none": lambda lib: lib.func.vmap(lambda x, y: (x * 2, y), in_dims=(0, None),
                                               out_dims=(0, None))(t(lib, XB), t(lib, YB)),
    "out_list": lambda lib: lib.func.vmap(lambda x: [x, x.sin()])(t(lib, XB)),
    "nested": lambda lib: lib.func.vmap(lib.func.vmap(lambda a, b: a * b + a.sum()))(
        t(lib, ZB), t(lib, ZB[::-1].copy())),
    "nested_dims": lambda lib: lib.func.vmap(lib.func.vmap(lambda v: v.max(), in_dims=1),
                                             in_dims=2)(t(lib, ZB)),
    "empty_batch": lambda lib: (lib.func.vmap(lambda r: r * 2)(lib.ones(0, 3)),
                                lib.func.vmap(lambda r: (r.sum(), r.outer(r)), out_dims=(0, 1))(
                                    lib.ones(0, 3))),
    "chunk_size": lambda lib: lib.func.vmap(lambda r: r.norm(), chunk_size=2)(t(lib, XB)),
    "matrix_ops": lambda lib: lib.func.vmap(lambda m: (m @ m.t()).trace())(t(lib, ZB)),
    "indexing": lambda lib: lib.func.vmap(lambda r: r[1:3] * r[0])(t(lib, XB)),
    "pointwise_function": lambda lib: lib.func.vmap(lib.add, in_dims=(1, None))(
        t(lib, YB), t(lib, XB[0])),
    "pointwise_where": lambda lib: lib.func.vmap(lib.where)(
        t(lib, XB) > 0, t(lib, XB), t(lib, -XB)),
    "per_sample_grad": lambda lib: lib.func.vmap(lib.func.grad(lambda w, x: (w @ x).sin()),
                                                 in_dims=(None, 0))(t(lib, YB[:, 0]),
                                                                   t(lib, XB)),
    "batched_jacobian": lambda lib: lib.func.vmap(lib.func.jacrev(lambda x: x.sin() * x.sum()))(
        t(lib, XB)),
    "batched_hessian": lambda lib: lib.func.vmap(lib.func.hessian(lambda x: x.exp().sum()
                                                                  * x.prod()))(t(lib, XB)),
    "vjp_fn_batched": lambda lib: lib.func.vmap(lib.func.vjp(
        lambda w: (w @ t(lib, YB)).tanh(), t(lib, XB))[1])(t(lib, np.eye(9).reshape(9, 3, 3))),
    "vjp_fn_batched_in_dims": lambda lib: lib.func.vmap(lib.func.vjp(
        lambda x: (x.sin(), x.sum()), t(lib, XB[0]))[1], in_dims=((1, None),))(
            (t(lib, YB), t(lib, 1.0))),
    "randomness_same_shapes": lambda lib: (
        lambda r: (tuple(r.shape), bool((r[0] == r[1]).all())))(
        lib.func.vmap(lambda x: x * 0 + lib.rand(4), randomness="same")(t(lib, XB))),
    "randomness_different_shapes": lambda lib: (
        lambda r: (tuple(r.shape), bool((r[0] == r[1]).all())))(
        lib.func.vmap(lambda x: x * 0 + lib.rand(4), randomness="different")(t(lib, XB))),
    "autograd_through_vmap": lambda lib: _through(lib),
    "in_place_on_input": lambda lib: _in_place(lib),
}


def _through(lib):
    x = t(lib, XB).requires_grad_()
    lib.func.vmap(lambda r: (r.sin() * r.sum()).sum())(x).sum().backward()
    return x.grad


def _in_place(lib):
    x = t(lib, XB)
    lib.func.vmap(lambda r: r.mul_(2))(x)
    return x


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_same_as_torch(name):
    check_same(SCENARIOS[name], rtol=1e-6, atol=1e-9)


def test_random_error_is_raised_before_any_draw():
    state = symgrad.default_generator.get_state()
    with pytest.raises(RuntimeError, match="randomness error mode"):
        vmap(lambda x: x + symgrad.randn(4))(symgrad.tensor(XB))
    assert symgrad.default_generator.get_state()["state"]["pos"] == state["state"]["pos"]


def test_same_randomness_rewinds_the_generator_once():
    symgrad.manual_seed(5)
    out = vmap(lambda x: x * 0 + symgrad.rand(4), randomness="same")(symgrad.tensor(XB))
    after = symgrad.rand(4)
    symgrad.manual_seed(5)
    np.testing.assert_array_equal(out[2].numpy(), symgrad.rand(4).numpy())
    np.testing.assert_array_equal(after.numpy(), symgrad.rand(4).numpy())


@pytest.mark.parametrize("name", ["vmap_sizes", "outdims"])
def test_errors_of_nested_calls(name):
    scenarios = {
        "vmap_sizes": lambda lib: lib.func.vmap(lib.func.vmap(lambda a, b: a + b))(
            t(lib, ZB), t(lib, ZB[:, :2])),
        "outdims": lambda lib: lib.func.vmap(lib.func.vmap(lambda a: a, out_dims=3))(
            t(lib, ZB)),
    }
    same_outcome(scenarios[name])


# --------------------------------------------------------------------------- the op table
def _smallest(op):
    cases = [c for c in table.CASES if c.op is op]
    return min(cases, key=lambda c: c.size) if cases else None


CASES = [c for c in (_smallest(op) for op in table.DIFFERENTIABLE) if c is not None]
B = 3


def _batch(case, rng):
    """Three samples of each input, stacked in front."""
    samples = [table._sample(case, rng) for _ in range(B)]
    return [np.stack([s[i] for s in samples]) for i in range(len(case.shapes))]


def _tensors(case, arrays, requires_grad=False):
    return [symgrad.tensor(a) if case.is_bool(i) else
            symgrad.tensor(a, dtype=symgrad.float64, requires_grad=requires_grad
                           and case.differentiable(i))
            for i, a in enumerate(arrays)]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_vmap_equals_loop(case):
    rng = np.random.default_rng(11)
    arrays = _batch(case, rng)

    def f(*args):
        return table._call(case, list(args))
    batch = _tensors(case, arrays)
    loop = symgrad.stack([f(*[b[k] for b in batch]) for k in range(B)])
    np.testing.assert_allclose(vmap(f)(*batch).numpy(), loop.numpy(), rtol=1e-12)
    # the batch last in every input, the result's batch last
    moved = [b.movedim(0, -1) for b in batch]
    got = vmap(f, in_dims=-1, out_dims=-1)(*moved)
    np.testing.assert_allclose(got.movedim(-1, 0).numpy(), loop.numpy(), rtol=1e-12)


def _pointwise_cases() -> list:
    """For each point-wise op with a function, its examples without attributes and with
    inputs of at least one dimension (broadcasting ones included)."""
    out = []
    for op in table.DIFFERENTIABLE:
        fn = getattr(symgrad, op.function, None) if op.function else None
        if fn is None or elementwise_op_of(fn) is not op:
            continue
        out += [c for c in table.CASES if c.op is op and not c.attrs
                and all(len(s) >= 1 for s in c.shapes)][:3]
    return out


POINTWISE = _pointwise_cases()


def test_pointwise_functions_are_found():
    assert {c.op.key for c in POINTWISE} >= {"sin", "exp", "add", "mul", "atan2", "where"}
    assert elementwise_op_of(symgrad.dot) is None and elementwise_op_of(symgrad.sum) is None


@pytest.mark.parametrize("case", POINTWISE, ids=lambda c: c.id)
def test_pointwise_without_loop(case, monkeypatch):
    rng = np.random.default_rng(5)
    fn = getattr(symgrad, case.op.function)
    batch = _tensors(case, _batch(case, rng))
    # the first input batched at its last dimension, the second one unbatched, the rest
    # batched in front
    dims = tuple(-1 if i == 0 else None if i == 1 else 0 for i in range(len(batch)))
    args = [b.movedim(0, -1) if d == -1 else b[0] if d is None else b
            for b, d in zip(batch, dims)]
    loop = symgrad.stack([fn(*[b[k] if d is not None else a
                               for b, a, d in zip(batch, args, dims)]) for k in range(B)])
    monkeypatch.setattr("symgrad.func.mapping._run_loop", _no_loop)
    got = vmap(fn, in_dims=dims, out_dims=1)(*args)
    np.testing.assert_allclose(got.movedim(1, 0).numpy(), loop.numpy(), rtol=1e-12)
    assert got.dtype == loop.dtype


def _at(b, d, k):
    return b[(slice(None),) * d + (k,)]


def _no_loop(*args, **kwargs):
    raise AssertionError("the point-wise path ran the loop")


@pytest.mark.parametrize("create_graph", [False, True], ids=["numpy", "recorded"])
def test_batched_backward_over_the_table(create_graph):
    """For every op: every cotangent of a batch in one pass = one pass per cotangent."""
    rng = np.random.default_rng(2)
    fell_back = []
    for case in CASES:
        values = table._sample(case, rng)
        inputs = _tensors(case, values, requires_grad=True)
        wrt = [x for i, x in enumerate(inputs) if case.differentiable(i)]
        out = table._call(case, inputs)
        cts = symgrad.tensor(rng.standard_normal((B,) + tuple(out.shape)),
                             dtype=out.dtype)
        try:
            got = batched.batched_grad([out], [cts], wrt, create_graph)
        except batched.NotBatchable:
            fell_back.append(case.op.key)
            continue
        for k in range(B):
            want = symgrad.autograd.grad(out, wrt, cts[k], retain_graph=True,
                                         allow_unused=True, create_graph=create_graph)
            for g, w, x in zip(got, want, wrt):
                w = symgrad.zeros_like(x) if w is None else w
                np.testing.assert_allclose(g[k].detach().numpy(), w.detach().numpy(),
                                           rtol=1e-10, atol=1e-12, err_msg=case.id)
                assert g.requires_grad == w.requires_grad, case.id
    # Only what the batched backend does not model falls back (and the callers then run
    # one pass per cotangent): trace's rule reads the gradient's dtype through numpy.
    assert fell_back == ["trace"]


def test_ops_are_found_by_their_records():
    assert elementwise_op_of(symgrad.sin) is ops.SIN
    assert elementwise_op_of(symgrad.Tensor.mul) is ops.MUL
