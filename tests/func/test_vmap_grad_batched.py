"""``vmap(grad(f))`` and ``vmap(jacrev(f))`` without a loop (:mod:`symgrad.func.pergrad`):
the same gradients as the loop over the samples and as ``torch.func``, and the loop where
the replay does not model the function.

Which path ran is observable without timing: the batched path calls ``f`` twice (the
trace on the first sample and the check on the last), the loop once per sample (after
the trace when the replay refused).

* every differentiable op of the table (its smallest example, as tests/func/test_vmap.py
  takes them), all inputs batched, and again with the first input a parameter shared by
  the samples (``in_dims=None``: per-sample gradients of a parameter): equal to
  ``stack([grad(f)(sample) for sample in batch])``; batched unless an attribute holds an
  array (index ops: the loop);
* per-sample-gradient programs against ``torch.func.vmap(grad(...))`` in the same run: the
  tutorial's CNN shape (conv2d, relu, max_pool2d, flatten, linear, log_softmax, nll_loss
  through ``functional_call``), an MLP with ``cross_entropy``, ``grad_and_value``,
  ``argnums`` pytrees, ``in_dims=1``/``out_dims=1``, ``has_aux`` (aux of the sample, of
  the parameters, integer); the cases that must loop (in-place writes into a value of the
  sample, ``randomness='different'``); PyTorch's errors raised from inside the function; ``vmap(jacrev(f))`` (the Jacobians
  tutorial's batch Jacobian, ``jacrev(jacrev(f))``; several outputs: the loop) and
  ``vmap(hessian(f))`` (a small batch Hessian: reverse over reverse on the batch).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import symgrad
from conftest import assert_same, plain, same_outcome  # noqa: E402
from symgrad.func import grad, pergrad, vmap  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "ops"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import test_op_table as table  # noqa: E402  (the op table's examples, shared)
import test_vmap as tv  # noqa: E402  (their smallest examples, batched)

torch = pytest.importorskip("torch")


class Counted:
    """``f``, counting its calls."""

    def __init__(self, f) -> None:
        self.f, self.calls = f, 0
        self.__name__ = "f"

    def __call__(self, *args, **kwargs):
        self.calls += 1
        return self.f(*args, **kwargs)


# --------------------------------------------------------------------------- the op table
def _scalar_of(case):
    """``f`` of the op's inputs: its (first) result weighted by fixed numbers, summed."""
    def f(*args):
        out = table._call(case, list(args))
        out = out[0] if isinstance(out, tuple) else out
        weights = symgrad.linspace(0.5, 1.5, out.numel(), dtype=out.dtype).view(out.shape)
        return (out * weights).sum()
    return f


def _params():
    for case in tv.CASES:
        yield pytest.param(case, False, id=case.id)
        if len(case.shapes) > 1 and case.differentiable(0) and not case.is_bool(0):
            yield pytest.param(case, True, id=case.id + "-shared")


@pytest.mark.parametrize("case, shared", list(_params()))
def test_per_sample_grads_equal_the_loop(case, shared):
    batch = tv._tensors(case, tv._batch(case, np.random.default_rng(5)))
    argnums = tuple(i for i, b in enumerate(batch)
                    if case.differentiable(i) and b.dtype.is_floating_point)
    if not argnums:
        pytest.skip("no differentiable input")
    in_dims = 0
    if shared:  # the first input a parameter of every sample
        batch[0] = batch[0][1]
        in_dims = (None,) + (0,) * (len(batch) - 1)
    f = Counted(_scalar_of(case))
    g = grad(f, argnums=argnums)
    loop = [g(*[b if shared and i == 0 else b[k] for i, b in enumerate(batch)])
            for k in range(tv.B)]
    f.calls = 0
    got = vmap(g, in_dims=in_dims)(*batch)
    for j in range(len(argnums)):
        want = np.stack([row[j].numpy() for row in loop])
        np.testing.assert_allclose(got[j].numpy(), want, rtol=1e-9, atol=1e-12)
    refuses = pergrad._array_in(case.attrs)  # (an index given as an array: the loop)
    assert f.calls == (1 + tv.B if refuses else 2)


# --------------------------------------------------------------------------- vs torch
def _cnn(lib):
    """The per-sample-gradients tutorial's CNN, small: conv, relu, pool, linear,
    log_softmax and nll_loss through functional_call, over (params, buffers)."""
    rng = np.random.default_rng(2)
    nn, F = lib.nn, lib.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 3, 3)
            self.fc = nn.Linear(3 * 3 * 3, 4)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv1(x)), 2)
            return F.log_softmax(self.fc(lib.flatten(x, 1)), dim=1)

    model = Net()
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)) * 0.3, dtype=p.dtype))
    params = {k: v.detach() for k, v in model.named_parameters()}
    data = lib.tensor(rng.standard_normal((4, 1, 8, 8)), dtype=lib.float32)
    targets = lib.tensor([0, 3, 1, 2])

    def loss(params, buffers, sample, target):
        out = lib.func.functional_call(model, (params, buffers), (sample.unsqueeze(0),))
        return F.nll_loss(out, target.unsqueeze(0))
    return loss, params, {}, data, targets


def _mlp(lib):
    rng = np.random.default_rng(4)
    w1 = lib.tensor(rng.standard_normal((5, 3)), dtype=lib.float64)
    w2 = lib.tensor(rng.standard_normal((2, 5)), dtype=lib.float64)
    x = lib.tensor(rng.standard_normal((6, 3)), dtype=lib.float64)
    y = lib.tensor([0, 1, 1, 0, 1, 0])

    def loss(w, x, y):
        h = lib.tanh(w["w1"] @ x)
        return lib.nn.functional.cross_entropy((w["w2"] @ h).unsqueeze(0), y.unsqueeze(0))
    return loss, {"w1": w1, "w2": w2}, x, y


def _cnn_grads(lib):
    loss, params, buffers, data, targets = _cnn(lib)
    f = Counted(loss)
    got = lib.func.vmap(lib.func.grad(f), in_dims=(None, None, 0, 0))(params, buffers, data,
                                                                       targets)
    return got, f.calls


def _mlp_grads(lib):
    loss, w, x, y = _mlp(lib)
    f = Counted(loss)
    return lib.func.vmap(lib.func.grad(f), in_dims=(None, 0, 0))(w, x, y), f.calls


def _mlp_grad_and_value(lib):
    loss, w, x, y = _mlp(lib)
    f = Counted(loss)
    return lib.func.vmap(lib.func.grad_and_value(f, argnums=(0, 1)), in_dims=(None, 0, 0))(
        w, x, y), f.calls


def _in_dims_1(lib):
    rng = np.random.default_rng(6)
    w = lib.tensor(rng.standard_normal((3, 3)), dtype=lib.float64)
    x = lib.tensor(rng.standard_normal((3, 5)), dtype=lib.float64)  # 5 samples, dim 1
    f = Counted(lambda w, x: (lib.softmax(w @ x, 0) * x.exp()).sum())
    return lib.func.vmap(lib.func.grad(f), in_dims=(None, 1), out_dims=1)(w, x), f.calls


def _in_place_on_the_sample(lib):
    rng = np.random.default_rng(7)
    w = lib.tensor(rng.standard_normal(3), dtype=lib.float64)
    x = lib.tensor(rng.standard_normal((4, 3)), dtype=lib.float64)

    def body(w, x):
        h = w * x
        h.mul_(2)  # (an in-place write into a value of the sample: the loop)
        return h.sin().sum()
    f = Counted(body)
    return lib.func.vmap(lib.func.grad(f), in_dims=(None, 0))(w, x), f.calls


def _has_aux(lib):
    rng = np.random.default_rng(8)
    w = lib.tensor(rng.standard_normal(3), dtype=lib.float64)
    x = lib.tensor(rng.standard_normal((4, 3)), dtype=lib.float64)
    f = Counted(lambda w, x: ((w * x).sum() ** 2, {"cos": x.cos(), "w": w * 2,
                                                    "arg": (w * x).argmax()}))
    return lib.func.vmap(lib.func.grad(f, has_aux=True), in_dims=(None, 0))(w, x), f.calls


def _value_and_aux(lib):
    rng = np.random.default_rng(13)
    w = lib.tensor(rng.standard_normal(3), dtype=lib.float64)
    x = lib.tensor(rng.standard_normal((4, 3)), dtype=lib.float64)
    f = Counted(lambda w, x: ((w * x).tanh().sum(), (w * x).exp()))
    return lib.func.vmap(lib.func.grad_and_value(f, has_aux=True), in_dims=(None, 0))(
        w, x), f.calls


def _batch_jacobian(lib):
    """The Jacobians tutorial's batch Jacobian: vmap(jacrev) of tanh(W x + b), float32."""
    rng = np.random.default_rng(9)
    w = lib.tensor(rng.standard_normal((7, 5)), dtype=lib.float32)
    b = lib.tensor(rng.standard_normal(7), dtype=lib.float32)
    x = lib.tensor(rng.standard_normal((6, 5)), dtype=lib.float32)
    f = Counted(lambda w, b, x: lib.nn.functional.linear(x, w, b).tanh())
    jac = lib.func.vmap(lib.func.jacrev(f, argnums=(0, 2)), in_dims=(None, None, 0))(w, b, x)
    return jac, f.calls


def _jacobian_of_jacobian(lib):
    rng = np.random.default_rng(10)
    w = lib.tensor(rng.standard_normal((3, 4)), dtype=lib.float64)
    x = lib.tensor(rng.standard_normal((5, 4)), dtype=lib.float64)
    f = Counted(lambda w, x: (w @ x).sin())
    hess = lib.func.jacrev(lib.func.jacrev(f, argnums=1), argnums=1)
    return lib.func.vmap(hess, in_dims=(None, 0))(w, x), f.calls


def _jacobian_of_two_outputs(lib):
    rng = np.random.default_rng(11)
    x = lib.tensor(rng.standard_normal((4, 3)), dtype=lib.float64)
    f = Counted(lambda x: (x.exp(), x.sum()))  # (several outputs: the loop)
    return lib.func.vmap(lib.func.jacrev(f))(x), f.calls


def _batch_hessian(lib):
    """The Jacobians tutorial's batch Hessian, small: vmap(hessian) of tanh(W x + b)."""
    rng = np.random.default_rng(12)
    w = lib.tensor(rng.standard_normal((4, 5)), dtype=lib.float64)
    b = lib.tensor(rng.standard_normal(4), dtype=lib.float64)
    x = lib.tensor(rng.standard_normal((6, 5)), dtype=lib.float64)
    f = Counted(lambda w, b, x: lib.nn.functional.linear(x, w, b).tanh())
    return lib.func.vmap(lib.func.hessian(f, argnums=2), in_dims=(None, None, 0))(w, b, x), \
        f.calls


BATCHED = {"cnn": (_cnn_grads, 2), "mlp": (_mlp_grads, 2), "hessian": (_batch_hessian, 2),
           "batch_jacobian": (_batch_jacobian, 2), "jacrev_jacrev": (_jacobian_of_jacobian, 2),
           "jacrev_two_outputs": (_jacobian_of_two_outputs, 1 + 4),
           "grad_and_value": (_mlp_grad_and_value, 2), "in_dims_1": (_in_dims_1, 2),
           "in_place": (_in_place_on_the_sample, 1 + 4), "has_aux": (_has_aux, 2),
           "grad_and_value_aux": (_value_and_aux, 2)}


@pytest.mark.parametrize("name", sorted(BATCHED))
def test_same_as_torch(name):
    scenario, calls = BATCHED[name]
    want, _ = scenario(torch)
    got, n = scenario(symgrad)
    assert_same(plain(want), plain(got), rtol=1e-5, atol=1e-6)
    assert n == calls  # 2: the batched path; one per sample (after the trace): the loop


def test_randomness_different_loops_and_same_is_batched():
    x = symgrad.ones(4, 3)
    w = symgrad.ones(3)
    f = Counted(lambda w, x: symgrad.nn.functional.dropout(w * x, 0.5).sum())
    symgrad.manual_seed(0)
    got = vmap(grad(f), in_dims=(None, 0), randomness="different")(w, x)
    assert f.calls == 1 + 4  # the loop: each sample its own draws
    assert len({tuple(r) for r in got.tolist()}) > 1
    f.calls = 0
    symgrad.manual_seed(0)
    same = vmap(grad(f), in_dims=(None, 0), randomness="same")(w, x)
    assert f.calls == 2 and all(r == same.tolist()[0] for r in same.tolist())
    loop_fn = grad(f)
    loop_fn.per_sample = None  # (no batched path: the loop, drawing as 'same' does)
    symgrad.manual_seed(0)
    np.testing.assert_array_equal(vmap(loop_fn, in_dims=(None, 0), randomness="same")(
        w, x).numpy(), same.numpy())


ERRORS = {
    "not_a_scalar": lambda L: L.func.vmap(L.func.grad(lambda w, x: w * x), in_dims=(None, 0))(
        L.ones(3), L.ones(2, 3)),
    "item_inside": lambda L: L.func.vmap(L.func.grad(lambda w, x: w.sum() * x.sum().item()),
                                         in_dims=(None, 0))(L.ones(3), L.ones(2, 3)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_as_torch(name):
    same_outcome(ERRORS[name])
